"""A policy check's report (impact.policy.check) as text, Markdown with each offending path drawn in
Mermaid (for a pull request), JSON, and SARIF 2.1.0 (GitHub code scanning lists each violation
against the rule's line in the policy file)."""

from __future__ import annotations

import json
from typing import Any

from api.render.markup import code, md, mermaid_label
from impact.policy.check import PolicyReport, Violation
from impact.policy.delta import PolicyDelta
from impact.policy.gate import Cause, Gate

MERMAID_PATHS = 10  # paths drawn per rule in Markdown; the rest are listed
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _hops(v: Violation) -> list[str]:
    """The path as text, one hop per line: each with its job, transformation, masking and run."""
    if not v.steps:
        return [" -> ".join(v.path)] if v.path else []
    out = []
    for s in v.steps:
        job = s.job or "(no job reported)"
        run = f", run {s.run}" if s.run else ""
        out.append(f"{s.source} -> {s.target} by {job}: {s.basis}{run}")
    return out


def _status(v: Violation) -> str:
    if v.waiver is not None:
        until = f" until {v.waiver.until}" if v.waiver.until else ""
        return f"waived{until}: {v.waiver.reason}"
    if v.expired is not None:
        return f"waiver expired on {v.expired.until}: {v.expired.reason}"
    return v.rule.severity


def policy_text(report: PolicyReport) -> str:
    lines = [f"policies {report.path}: {len(report.results)} rules"]
    for result in report.results:
        rule = result.rule
        counted = [v for v in result.violations if v.counts]
        state = "holds" if result.holds else _violations(len(counted))
        lines.append(f"\n{rule.id} ({rule.severity}): {state}; {result.sources} sources checked"
                     + (" (truncated)" if result.truncated else ""))
        if rule.description:
            lines.append(f"  {rule.description}")
        for v in result.violations:
            lines.append(f"  {_status(v)}: {v.what()}")
            lines += [f"    {hop}" for hop in _hops(v)]
    errors = sum(1 for v in report.violations if v.counts and v.rule.severity == "error")
    warnings = sum(1 for v in report.violations if v.counts and v.rule.severity == "warning")
    lines.append(f"\n{errors} errors, {warnings} warnings, "
                 f"{sum(1 for v in report.violations if not v.counts)} waived")
    return "\n".join(lines)


def policy_json(report: PolicyReport) -> str:
    def violation(v: Violation) -> dict[str, Any]:
        return {"rule": v.rule.id, "severity": v.rule.severity, "source": v.source,
                "target": v.target, "label": v.label, "counts": v.counts,
                "waiver": None if v.waiver is None else {"reason": v.waiver.reason,
                                                         "until": _day(v.waiver.until)},
                "expiredWaiver": None if v.expired is None else {"reason": v.expired.reason,
                                                                 "until": _day(v.expired.until)},
                "steps": [{"from": s.source, "to": s.target, "job": s.job, "run": s.run,
                           "type": s.type, "subtype": s.subtype, "masking": s.masking,
                           "basis": s.basis} for s in v.steps]} | (
                    {"path": list(v.path)} if v.path else {})

    return json.dumps({
        "policies": report.path, "checkedAt": report.checked_at.isoformat(),
        "failed": report.failed(),
        "rules": [{"id": r.rule.id, "severity": r.rule.severity,
                   "description": r.rule.description, "owners": list(r.rule.owners),
                   "holds": r.holds, "sources": r.sources, "truncated": r.truncated,
                   "violations": [violation(v) for v in r.violations]}
                  for r in report.results]}, indent=2)


def _day(value: Any) -> str | None:
    return None if value is None else str(value)


def policy_markdown(report: PolicyReport) -> str:
    failed = report.failed()
    out = [f"### Lineage policies: {'failed' if failed else 'passed'}", "",
           "| rule | severity | result |", "|---|---|---|"]
    for r in report.results:
        counted = sum(1 for v in r.violations if v.counts)
        out.append(f"| {code(r.rule.id)} | {r.rule.severity} | "
                   + ("holds" if r.holds else _violations(counted)) + " |")
    for r in report.results:
        if not r.violations:
            continue
        out += ["", f"#### {code(r.rule.id)}: {md(r.rule.description or r.rule.id)}", ""]
        for v in r.violations:
            out.append(f"- **{md(_status(v))}**: {md(v.what())}")
        drawn = [v for v in r.violations if v.steps or v.path][:MERMAID_PATHS]
        if drawn:
            out += ["", *_mermaid(drawn)]
    return "\n".join(out) + "\n"


def _mermaid(violations: list[Violation]) -> list[str]:
    """Each offending path as a Mermaid flowchart: hops labelled with their job and
    transformation, the raw or unverified ones in red."""
    ids: dict[str, str] = {}
    lines = ["```mermaid", "flowchart LR"]

    def node(name: str) -> str:
        if name not in ids:
            ids[name] = f"n{len(ids)}"
            lines.append(f'  {ids[name]}["{mermaid_label(name)}"]')
        return ids[name]

    seen: set[tuple[str, str, str]] = set()
    for v in violations:
        if v.steps:
            for s in v.steps:
                label = f"{s.job or '?'}: {s.subtype or s.type or 'not reported'}"
                label += ", masked" if s.masking else ""
                key = (s.source, s.target, label)
                if key not in seen:
                    seen.add(key)
                    lines.append(f'  {node(s.source)} -->|"{mermaid_label(label)}"| {node(s.target)}')
        else:
            for a, b in zip(v.path, v.path[1:], strict=False):
                if (a, b, "") not in seen:
                    seen.add((a, b, ""))
                    lines.append(f"  {node(a)} --> {node(b)}")
        if v.counts:
            lines.append(f"  class {node(v.target)} violation")
    lines += ["  classDef violation fill:#f8d7da,stroke:#c00", "```"]
    return lines


def policy_sarif(report: PolicyReport) -> str:
    rules = [{"id": r.rule.id, "shortDescription": {"text": r.rule.description or r.rule.id},
              "defaultConfiguration": {"level": _level(r.rule.severity)},
              "properties": {"owners": list(r.rule.owners)}} for r in report.results]
    results = []
    for v in report.violations:
        results.append({
            "ruleId": v.rule.id, "level": _level(v.rule.severity) if v.counts else "note",
            "message": {"text": v.what()
                                + ("".join(f"\n{hop}" for hop in _hops(v)))},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": report.path},
                "region": {"startLine": v.rule.line or 1}}}],
            **({"suppressions": [{"kind": "external", "justification": v.waiver.reason}]}
               if v.waiver is not None else {}),
        })
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "lineage-graph", "informationUri":
                            "https://openlineage.io", "rules": rules}},
        "results": results}]}, indent=2)


def _level(severity: str) -> str:
    return "error" if severity == "error" else "warning"


def delta_text(delta: PolicyDelta) -> str:
    """What a change does to the policy rules, for ``lineage check``."""
    lines = ["", f"policies {delta.after.path}: " + (
        "the change adds no violation" if not delta.new else
        f"the change adds {len(delta.new)} violation{'s' if len(delta.new) > 1 else ''}")]
    for v in delta.new:
        lines.append(f"  new violation of rule {v.rule.id} ({v.rule.severity}): {v.what()}")
        lines += [f"    {hop}" for hop in _hops(v)]
    for v in delta.removed:
        lines.append(f"  removes the violation of rule {v.rule.id}: {v.what()}")
    if delta.kept:
        lines.append(f"  {_not_the_changes(len(delta.kept))} (`lineage policy check` lists them)")
    return "\n".join(lines) + "\n"


def delta_markdown(delta: PolicyDelta) -> str:
    out = ["", f"### Lineage policies: {'failed' if delta.failed() else 'passed'}", ""]
    if not delta.new and not delta.removed:
        out.append("The change adds no violation and removes none.")
    for v in delta.new:
        out.append(f"- **new violation** of `{v.rule.id}` ({v.rule.severity}): {v.what()}")
    for v in delta.removed:
        out.append(f"- removes the violation of `{v.rule.id}`: {v.what()}")
    drawn = [v for v in delta.new if v.steps or v.path][:MERMAID_PATHS]
    if drawn:
        out += ["", *_mermaid(drawn)]
    if delta.kept:
        out += ["", f"{_not_the_changes(len(delta.kept))}."]
    return "\n".join(out) + "\n"


def delta_json(delta: PolicyDelta) -> dict[str, Any]:
    def brief(v: Violation) -> dict[str, Any]:
        return {"rule": v.rule.id, "severity": v.rule.severity, "what": v.what(),
                "source": v.source, "target": v.target, "label": v.label,
                "steps": [{"from": s.source, "to": s.target, "job": s.job, "type": s.type,
                           "subtype": s.subtype, "masking": s.masking} for s in v.steps]}

    return {"policies": delta.after.path, "failed": delta.failed(),
            "new": [brief(v) for v in delta.new], "removed": [brief(v) for v in delta.removed],
            "kept": len(delta.kept)}


def gate_json(g: Gate) -> dict[str, Any]:
    """A gate (impact.policy.gate) as the API answers it."""
    return {"dataset": g.dataset, "open": g.open, "why": g.why(),
            "checkedAt": g.checked_at.isoformat(), "upstreamChecked": g.upstream,
            "rulesChecked": g.rules, "causes": [cause_json(c) for c in g.causes]}


def cause_json(c: Cause) -> dict[str, Any]:
    return {"kind": c.kind, "severity": c.severity, "dataset": c.dataset, "what": c.what,
            "path": list(c.path), "job": c.job, "run": c.run,
            "at": None if c.at is None else c.at.isoformat(), "rule": c.rule}


def at_risk(g: Gate) -> list[dict[str, Any]]:
    """A dataset's "quality at risk": the causes upstream (or in it) that close its gate."""
    return [cause_json(c) for c in g.causes if c.severity == "error"]


def gate_text(g: Gate) -> str:
    lines = [("OPEN" if g.open else "CLOSED") + f": {g.dataset}"
             + (" may be consumed" if g.open else " should not be consumed now"),
             f"  {g.upstream} datasets upstream checked, {g.rules} policy rules"]
    for c in g.causes:
        tag = c.severity if c.severity in ("warning", "note") else c.kind
        lines.append(f"  {tag}: {c.what}")
        if len(c.path) > 1:
            lines.append(f"    path: {' -> '.join(c.path)}")
    return "\n".join(lines)


def _violations(n: int) -> str:
    return f"{n} violation{'' if n == 1 else 's'}"


def _not_the_changes(n: int) -> str:
    return f"{_violations(n)} the graph has now {'is' if n == 1 else 'are'} not the change's"
