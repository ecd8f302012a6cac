"""A model version's provenance (impact.ml.provenance) as text, Markdown an auditor can file (with
a Mermaid drawing of the upstream graph, as the check's report has), or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from api.render.markup import code, md, mermaid_label
from impact.ml.provenance import Provenance, Source

MERMAID_EDGES = 80


def _when(t: Any) -> str:
    return f"{t:%Y-%m-%d %H:%M:%S}Z" if isinstance(t, datetime) else (str(t) if t else "-")


def provenance_json(p: Provenance) -> str:
    return json.dumps(asdict(p) | {"label": p.label}, indent=2,
                      default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))


def _write(s: Source) -> str:
    w = s.last_write
    if not w:
        return "no write recorded before the training"
    return (f"written by {w['job']} run {w['runId']} ({w['state']}, ended {w.get('end') or '-'}"
            + (f", version {w['version']}" if w.get("version") else "") + ")")


def _pii(s: Source) -> str:
    tags = list(s.tags) + list(s.column_tags)
    return ", ".join(tags) or "-"


def _facts(p: Provenance, quote: str) -> list[tuple[str, list[str]]]:
    """The version's MLflow facts, params and metrics, each item quoted by ``quote``."""
    def shown(v: Any) -> str:
        if isinstance(v, dict):  # the registry entry: stage, status, aliases
            return ", ".join(f"{k}={x}" for k, x in v.items() if x not in (None, [], "")
                             and k != "version")
        return str(v)

    found = [("Model", [f"{k} " + quote.format(shown(v)) for k, v in p.model.items()
                        if v not in (None, [], "")]),
             ("Params", [quote.format(f"{k}={v}") for k, v in p.run["params"].items()]),
             ("Metrics", [quote.format(f"{k}={v}") for k, v in p.run["metrics"].items()])]
    return [(what, items) for what, items in found if items]


def provenance_text(p: Provenance) -> str:
    r = p.run
    lines = [f"provenance of model {p.label} ({p.key})",
             f"  trained by run {r['runId']} of job {r['job']}: {r['state']}, "
             f"started {_when(r['start'])}, ended {_when(r['trainedAt'])}"]
    lines += [f"  {what.lower()}: {', '.join(items)}" for what, items in _facts(p, "{}")]
    lines.append(f"  sources ({len(p.sources)}), nearest first:")
    for s in p.sources:
        read = f", version read {s.version_read}" if s.version_read else ""
        lines.append(f"    [{s.distance}] {s.kind} {s.namespace}:{s.name}{read}")
        lines.append(f"        owners {', '.join(s.owners) or '-'}; tags {_pii(s)}")
        lines.append(f"        {_write(s)}")
        if s.distance > 1:
            lines.append(f"        how: {s.how}")
    if p.fields:
        lines.append("  fields of the model and where they come from:")
        for f in p.fields:
            lines.append(f"    {f.field}:")
            for i in f.steps:
                lines.append(f"      <- {i.namespace}:{i.name}  ({i.why})")
            if f.tagged:
                lines.append(f"      tagged: {', '.join(f.tagged)}")
    others = [v for v in p.versions if v["version"] != p.version]
    if others:
        lines.append("  other versions: " + ", ".join(
            f"v{v['version']} ({v['state']}, {_when(v['trainedAt'])})" for v in others))
    return "\n".join(lines) + "\n"


def provenance_markdown(p: Provenance) -> str:
    r = p.run
    out = [f"# Provenance of model `{p.label}`", "",
           f"- Model: `{p.key}`, version `{p.version}`",
           f"- Trained by run `{r['runId']}` of job `{r['job']}`: **{r['state']}**, "
           f"started {_when(r['start'])}, ended {_when(r['trainedAt'])}"]
    if r["mlflow"].get("runId"):
        out.append(f"- MLflow run `{r['mlflow']['runId']}` (experiment {r['mlflow'].get('experimentId')}, "
                   f"user {r['mlflow'].get('user') or '-'}, lifecycle {r['mlflow'].get('lifecycleStage')})")
    out += [f"- {what}: {', '.join(items)}" for what, items in _facts(p, "`{}`")]
    out += ["", "## Upstream graph", "", *mermaid(p), "",
            "## Sources", "",
            "| hops | source | version read | owners | tags | last write before training |",
            "|---|---|---|---|---|---|"]
    for s in p.sources:
        out.append(f"| {s.distance} | {s.kind} {code(f'{s.namespace}:{s.name}')} | "
                   f"{md(s.version_read or '-')} | {md(', '.join(s.owners) or '-')} | "
                   f"{md(_pii(s))} | {md(_write(s))} |")
    if p.fields:
        out += ["", "## Fields and their transformations", ""]
        for f in p.fields:
            out.append(f"- {code(f.field)}" + (f" (tagged sources: {md(', '.join(f.tagged))})"
                                               if f.tagged else ""))
            out += [f"  - from {code(f'{i.namespace}:{i.name}')}: {md(i.why)}" for i in f.steps]
    out += ["", "## Versions", "", "| version | run | state | trained |", "|---|---|---|---|"]
    out += [f"| {v['version']}{' (this)' if v['version'] == p.version else ''} | `{v['runId']}` | "
            f"{v['state']} | {_when(v['trainedAt'])} |" for v in p.versions]
    out += ["", "Lineage as it stood when the version was trained (edges first seen by then and not "
            "retired then), from lineage-graph."]
    return "\n".join(out) + "\n"


def mermaid(p: Provenance) -> list[str]:
    """The model's upstream graph, data flowing left to right to the model."""
    ids: dict[str, str] = {}
    lines = ["```mermaid", "flowchart LR"]
    tagged = {f"{s.namespace}:{s.name}" for s in p.sources if s.tags or s.column_tags}

    def node(key: str) -> str:
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            lines.append(f'  {ids[key]}["{mermaid_label(key)}"]')
        return ids[key]

    node(p.key)
    for derived, source, job in p.edges[:MERMAID_EDGES]:
        a, b = node(source), node(derived)
        # the job's name (its namespace may hold ':' itself: mlflow://host:port)
        label = (job or "").rsplit(":", 1)[-1]
        lines.append(f'  {a} -->|"{mermaid_label(label)}"| {b}' if label else f"  {a} --> {b}")
    lines.append(f"  class {ids[p.key]} model")
    for key in tagged & set(ids):
        lines.append(f"  class {ids[key]} tagged")
    lines += ["  classDef model fill:#d7e8f8,stroke:#036", "  classDef tagged fill:#fff3cd,stroke:#b80"]
    if len(p.edges) > MERMAID_EDGES:
        lines.append(f'  more["… {len(p.edges) - MERMAID_EDGES} more edges: see the sources"]')
    return [*lines, "```"]
