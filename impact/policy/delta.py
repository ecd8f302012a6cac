"""What a proposed change does to the policy rules: the rules checked on the graph as it is and
on the graph as the change would leave it (``lineage check --policies``), compared violation by
violation. A new violation of an error-severity rule fails the check; one the change removes is
said too."""

from __future__ import annotations

from dataclasses import dataclass

from impact.policy.check import PolicyReport, Violation


@dataclass(frozen=True)
class PolicyDelta:
    before: PolicyReport
    after: PolicyReport

    def _counting(self, report: PolicyReport) -> dict[str, Violation]:
        return {v.key: v for v in report.violations if v.counts}

    @property
    def new(self) -> tuple[Violation, ...]:
        """Violations the change would add (that count: no waiver accepts them)."""
        before = self._counting(self.before)
        return tuple(v for k, v in sorted(self._counting(self.after).items()) if k not in before)

    @property
    def removed(self) -> tuple[Violation, ...]:
        """Violations the graph has now and the change would end."""
        after = self._counting(self.after)
        return tuple(v for k, v in sorted(self._counting(self.before).items()) if k not in after)

    @property
    def kept(self) -> tuple[Violation, ...]:
        """Violations the graph has now and would still have: not the change's doing."""
        after = self._counting(self.after)
        return tuple(v for k, v in sorted(self._counting(self.before).items()) if k in after)

    def failed(self) -> bool:
        """The change adds an error-severity violation."""
        return any(v.rule.severity == "error" for v in self.new)
