"""The status page (``/status``): lineage health as plain HTML, with no external asset (styles
inline, the picture an inline SVG), so that it works offline and behind any proxy.

It shows the SLIs per tier, the SLO verdicts, the ingest lag, silent jobs, late datasets, recent
failed runs with what they hold back, and coverage by namespace as bars.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from impact.answers import first_words
from impact.health.measure import RATIOS, Group, Health
from impact.health.slo import Verdict

TITLES = {"coverage": "coverage", "completeness": "completeness",
          "run_completeness": "runs ended", "freshness": "freshness",
          "provenance": "provenance"}
_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1f24}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.muted{color:#57606a}table{border-collapse:collapse;margin:4px 0}
td,th{border-bottom:1px solid #d0d7de;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37}.bad{color:#cf222e;font-weight:600}.warn{color:#9a6700}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
"""


def render(health: Health, verdicts: list[Verdict], age_s: float,
           retention: dict[str, Any] | None = None,
           reads: dict[tuple[str, str], int] | None = None) -> str:
    """The page; ``retention``: api.services.retention.Figures.as_dict(), or None; ``reads``: the
    reads of lineage by who and outcome since the API started (api.access.audit)."""
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        f"<title>lineage-graph status</title><style>{_STYLE}</style></head><body>",
        "<h1>lineage-graph status</h1>",
        f"<p class=muted>measured {escape(health.json()['checkedAt'])} ({age_s:.0f} s ago); "
        f"tiers from {escape(health.tiers_source)}</p>",
        _slis(health.tiers),
        _slos(verdicts),
        _ingest(health.ingest),
        _retention(retention),
        _access(reads or {}),
        _list("Silent jobs", health.offenders.get("silentJobs", []), health,
              "silentJobs", lambda o: (
                  f"<code>{escape(o['job'])}</code> ({escape(o['tier'])}): last event "
                  f"{escape(str(o['lastSeen']))}, due by {escape(str(o['dueBy']))}"
                  + (f"; readers waiting: {_codes(o['readersAffected'])}"
                     if o.get("readersAffected") else ""))),
        _list("Late datasets", health.offenders.get("lateDatasets", []), health,
              "lateDatasets", lambda o: (
                  f"<code>{escape(o['dataset'])}</code> ({escape(o['tier'])}): last success "
                  f"{escape(str(o['lastSuccess']))}, due by {escape(str(o['dueBy']))}")),
        _failed(health.failed_runs),
        _list("Runs that never ended", health.offenders.get("unfinishedRuns", []), health,
              "unfinishedRuns", lambda o: (
                  f"<code>{escape(o['job'])}</code> run <code>{escape(o['runId'])}</code>: "
                  f"{escape(str(o['state']))} since {escape(str(o['started']))}")),
        "<h2>Coverage by namespace</h2>",
        _bars(health.namespaces),
        "</body></html>",
    ]
    return "\n".join(parts)


def _retention(found: dict[str, Any] | None) -> str:
    if found is None:
        return ""
    store = ("" if found["storeBytes"] is None else
             f"store {found['storeBytes'] / 1e6:.1f} MB; ")
    archive = (f"archive {found['archive']['entries']} log entries "
               f"({found['archive']['bytes'] / 1e6:.1f} MB)")
    last = found["lastRun"]
    if last is None:
        return f"<h2>Retention</h2><p>{store}{archive}; no retention run yet</p>"
    return (f"<h2>Retention</h2><p>{store}{archive}; last run {escape(last['ranAt'][:19])}: "
            f"detailed lineage since {escape(last['detailedSince'][:10])}, summary since "
            f"{escape(last['summarySince'][:10])}; it folded {last['folded']} runs and removed "
            f"{last['removedEdges']} edges and {last['removedNodes']} nodes</p>")


def _access(reads: dict[tuple[str, str], int]) -> str:
    """Reads by grant and outcome, and the share of unauthorised attempts (401 and 403)."""
    total = sum(reads.values())
    if not total:
        return "<h2>Access</h2><p class=muted>no read since the API started</p>"
    refused = sum(n for (_, outcome), n in reads.items() if outcome == "refused")
    rows = "".join(
        f"<tr><td><code>{escape(who)}</code></td>"
        + "".join(f"<td>{reads.get((who, o), 0)}</td>" for o in ("served", "redacted", "refused"))
        + "</tr>" for who in sorted({w for w, _ in reads}))
    return (f"<h2>Access</h2><p>unauthorised attempts: {refused} of {total} reads "
            f"({refused / total:.1%}) since the API started</p><table><tr><th>who</th>"
            f"<th>served</th><th>redacted</th><th>refused</th></tr>{rows}</table>")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _slis(groups: list[Group]) -> str:
    if not groups:
        return "<h2>Lineage health</h2><p class=muted>no dataset yet</p>"
    head = "".join(f"<th>{TITLES[k]}</th>" for k in RATIOS)
    rows = []
    for g in groups:
        cells = "".join(f"<td class=n title='{g.ratio(k).good} of {g.ratio(k).valid}'>"
                        f"{_pct(g.ratio(k).value)}</td>" for k in RATIOS)
        rows.append(f"<tr><td>{escape(g.tier)}</td><td class=n>{g.datasets}</td>{cells}"
                    f"<td class=n>{g.silent_jobs}</td><td class=n>{g.late_datasets}</td>"
                    f"<td class=n>{g.unfinished_runs}</td></tr>")
    return ("<h2>Lineage health per tier</h2><table><tr><th>tier</th><th>datasets</th>"
            f"{head}<th>silent jobs</th><th>late datasets</th><th>unfinished runs</th></tr>"
            + "".join(rows) + "</table>")


def _slos(verdicts: list[Verdict]) -> str:
    if not verdicts:
        return ""
    rows = "".join(
        f"<tr><td>{escape(v.slo.label)}</td>"
        f"<td class={'ok' if v.met else 'bad'}>{'VIOLATED' if v.status == 'violated' else v.status}</td>"
        f"<td class=n>{'–' if v.budget_left is None else _budget(v)}</td>"
        f"<td>{escape(v.detail)}</td></tr>" for v in verdicts)
    return ("<h2>SLOs</h2><table><tr><th>objective</th><th>now</th><th>budget left</th>"
            f"<th>detail</th></tr>{rows}</table>")


def _budget(v: Verdict) -> str:
    assert v.budget_left is not None
    return f"{v.budget_left:.0%}" if v.slo.objective is not None else f"{v.budget_left:g}"


def _ingest(ingest: dict[str, Any]) -> str:
    if not ingest:
        return ""
    lag = float(ingest.get("lagSeconds") or 0)
    style = "bad" if lag > 30 else "ok"
    return (f"<h2>Ingest</h2><p>lag <span class={style}>{lag:.1f} s</span> "
            f"({int(ingest.get('lagEvents') or 0)} events not yet queryable); "
            f"{int(ingest.get('deadLetters') or 0)} dead letters of "
            f"{int(ingest.get('events') or 0)} events logged</p>")


def _list(title: str, items: list[dict[str, Any]], health: Health, kind: str,
          line: Callable[[dict[str, Any]], str]) -> str:
    total = health.offender_counts.get(kind, 0)
    if not items:
        return f"<h2>{title}</h2><p class=ok>none</p>"
    more = f"<p class=muted>and {total - len(items)} more</p>" if total > len(items) else ""
    return (f"<h2>{title} <span class=warn>({total})</span></h2><ul>"
            + "".join(f"<li>{line(o)}</li>" for o in items) + f"</ul>{more}")


def _failed(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return "<h2>Recent failed runs</h2><p class=ok>none</p>"
    rows = "".join(
        f"<tr><td><code>{escape(r['job'])}</code></td><td>{escape(str(r['failedAt']))}</td>"
        f"<td>{escape(first_words(r.get('errorMessage') or ''))}</td>"
        f"<td>{_codes(r['outputs'])}</td><td>{_codes(r['readers'])}</td></tr>" for r in runs)
    return ("<h2>Recent failed runs</h2><table><tr><th>job</th><th>failed at</th><th>error</th>"
            f"<th>holds back</th><th>readers</th></tr>{rows}</table>")


def _codes(names: list[str]) -> str:
    return ", ".join(f"<code>{escape(n)}</code>" for n in names) or "–"


def _bars(groups: list[Group]) -> str:
    """Coverage by namespace as an inline SVG: one bar per namespace (all its tiers)."""
    totals: dict[str, list[int]] = {}
    for g in groups:
        ratio = g.ratio("coverage")
        got = totals.setdefault(g.namespace or "", [0, 0])
        got[0] += ratio.good
        got[1] += ratio.valid
    totals = {ns: counts for ns, counts in totals.items() if counts[1]}  # jobs only: no bar
    if not totals:
        return "<p class=muted>no dataset yet</p>"
    width, row, label = 640, 22, 260
    rows = []
    for i, (ns, (good, valid)) in enumerate(sorted(totals.items())):
        share = good / valid if valid else 0.0
        y = i * row
        color = "#2da44e" if share >= 0.8 else "#bf8700" if share >= 0.5 else "#cf222e"
        shown = ns if len(ns) <= 40 else ns[:37] + "..."
        rows.append(
            f"<text x=0 y={y + 15} font-size=12>{escape(shown)}</text>"
            f"<rect x={label} y={y + 4} width={width - label - 60} height=14 fill='#eaeef2'/>"
            f"<rect x={label} y={y + 4} width={(width - label - 60) * share:.1f} height=14 "
            f"fill='{color}'><title>{escape(ns)}: {good} of {valid}</title></rect>"
            f"<text x={width - 52} y={y + 15} font-size=12>{share:.0%}</text>")
    height = row * len(totals)
    return (f"<svg role=img aria-label='coverage by namespace' width={width} height={height} "
            f"viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>"
            + "".join(rows) + "</svg>")
