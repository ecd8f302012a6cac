"""Reports as files: the pre-deploy check as text, Markdown (a pull-request comment) or JSON, and
the GDPR reach as CSV (evidence). Both front doors render with these."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from api.render.markup import code, csv_text, md, mermaid_label
from impact.change.check import SEVERITY, Finding, Report
from impact.tag_reach import TagReport
from impact.where import Hop, WhereReport


def where_csv(report: WhereReport) -> str:
    """Every column the data reaches, one row each, with its label, path, jobs, runs and when."""
    header = ["namespace", "dataset", "column", "label", "distance", "path", "jobs", "runs",
              "last_flowed", "basis"]
    return csv_text(header, (
        [r.namespace, r.dataset, r.column, r.label, r.distance, _path(r.steps), " ".join(r.jobs),
         " ".join(s.run for s in r.steps if s.run),
         r.last_flowed.isoformat() if r.last_flowed else "", " -> ".join(s.basis for s in r.steps)]
        for r in report.reaches))


def tag_reach_csv(report: TagReport) -> str:
    """Every tagged column and every column its data reaches, one row per reach (a tagged
    column that reaches nothing gets one row of its own), with whether a raw copy is tagged."""
    header = ["tag", "source", "source_tags", "namespace", "dataset", "column", "label",
              "distance", "path", "jobs", "tagged", "basis"]
    tagged = {(c.namespace, c.dataset, c.column) for c in report.raw_copies if c.tagged}
    tagged |= {(s.source.namespace, s.source.dataset, s.source.column) for s in report.sources}
    rows: list[list[object]] = []
    for s in report.sources:
        head = [report.tag, s.source.key, "; ".join(s.source.tags)]
        if not s.reaches:
            rows.append([*head, "", "", "", "", "", "", "", "", s.note or "reaches nothing"])
        rows += [[*head, r.namespace, r.dataset, r.column, r.label, r.distance, _path(r.steps),
                  " ".join(r.jobs), (r.namespace, r.dataset, r.column) in tagged,
                  " -> ".join(x.basis for x in r.steps)] for r in s.reaches]
    return csv_text(header, rows)


def _path(steps: Sequence[Hop]) -> str:
    """A reach's path as its columns' keys joined by arrows."""
    return " -> ".join([steps[0].source, *(s.target for s in steps)])


def check_json(report: Report) -> str:
    """The check's report as JSON (times in ISO 8601)."""
    return json.dumps(asdict(report), indent=2,
                      default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))


def check_text(report: Report) -> str:
    """The check's report for a terminal: the verdict, then each finding with its path."""
    lines = [f"lineage check: {report.verdict}  ({_summary(report)})"]
    for f in report.findings:
        stale = " [stale]" if f.stale else ""
        lines.append(f"  {f.severity:8s} {f.change}: {f.consumer_kind} {f.consumer}{stale} -- {f.note}")
        if f.path:
            lines.append(f"           path {' -> '.join(f.path)}  via {f.transformation or '-'}"
                         + (f"  job {f.job}" if f.job else ""))
        if f.owners or f.last_run:
            last = f"{f.last_run:%Y-%m-%d %H:%M}" if f.last_run else "never"
            lines.append(f"           owners {', '.join(f.owners) or '-'}; last run {last}")
    return "\n".join(lines) + "\n"


def check_markdown(report: Report) -> str:
    """The check's report as a pull-request comment: a table of what breaks, paths folded."""
    icon = {"BREAKING": ":x:", "RISKY": ":warning:", "SAFE": ":white_check_mark:"}[report.verdict]
    out = [f"### {icon} lineage check: **{report.verdict}**", "",
           f"{_summary(report)} for {len(report.changes)} change(s): "
           + "; ".join(code(c) for c in report.changes),
           ""]
    shown = [f for f in report.findings if f.severity != "SAFE"]
    if shown:
        out += ["| severity | change | consumer | via | owners | last run |", "|---|---|---|---|---|---|"]
        for f in shown:
            last = f"{f.last_run:%Y-%m-%d}" if f.last_run else "never"
            out.append(f"| {f.severity}{' (stale)' if f.stale else ''} | {md(f.change)} | "
                       f"{code(f.consumer)} | {md(f.transformation)} | "
                       f"{md(', '.join(f.owners) or '-')} | {last} |")
        out += ["", *mermaid(shown)]
        out += ["", "<details><summary>paths</summary>", ""]
        out += [f"- {code(f.consumer)}: {md(' → '.join(f.path))} ({md(f.note)})" for f in shown]
        out += ["", "</details>"]
    else:
        out.append("Nothing downstream breaks.")
    return "\n".join(out) + "\n"


MERMAID_EDGES = 60  # a larger diagram stops being readable in a pull request


def mermaid(findings: Sequence[Finding]) -> list[str]:
    """What breaks as a Mermaid flowchart (GitHub and GitLab render it in a pull request): every
    path from a changed node to a consumer, consumers coloured by severity."""
    ids: dict[str, str] = {}
    severity: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    for f in findings:
        hops = list(f.path)
        # a path names its nodes as the walk did (sometimes without the namespace)
        if not hops or hops[-1] != f.consumer and not f.consumer.endswith(hops[-1]):
            hops.append(f.consumer)
        target = hops[-1]
        severity[target] = max(severity.get(target, "SAFE"), f.severity, key=lambda v: SEVERITY[v])
        for a, b in zip(hops, hops[1:], strict=False):
            if (a, b) not in edges and a != b:
                edges.append((a, b))
    lines = ["```mermaid", "flowchart LR"]
    for a, b in edges[:MERMAID_EDGES]:
        for node in (a, b):
            if node not in ids:
                ids[node] = f"n{len(ids)}"
                lines.append(f'  {ids[node]}["{mermaid_label(node)}"]')
        lines.append(f"  {ids[a]} --> {ids[b]}")
    for node, level in severity.items():
        if node in ids and level != "SAFE":
            lines.append(f"  class {ids[node]} {level.lower()}")
    lines += ["  classDef breaking fill:#f8d7da,stroke:#c00", "  classDef risky fill:#fff3cd,stroke:#b80"]
    if len(edges) > MERMAID_EDGES:
        lines.append(f"  more[\"… {len(edges) - MERMAID_EDGES} more edges: see the paths\"]")
    return [*lines, "```"]


def _summary(report: Report) -> str:
    c = report.counts
    extra = ", stale consumers excluded" if report.stale_excluded else ""
    return f"{c.get('BREAKING', 0)} breaking, {c.get('RISKY', 0)} risky, {c.get('SAFE', 0)} safe{extra}"
