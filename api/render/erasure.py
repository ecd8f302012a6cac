"""An erasure plan (impact.erasure.plan) as Markdown (for the privacy team's ticket, or an
auditor's file) and CSV (one row a place). Names come from events: written through
api.render.markup (cells, code spans, spreadsheet-safe CSV cells)."""

from __future__ import annotations

from api.render.markup import code, csv_text, md
from impact.erasure.evidence import ErasureStatus
from impact.erasure.plan import ErasurePlan


def plan_markdown(plan: ErasurePlan) -> str:
    counts = plan.counts()
    lines = [f"# Erasure plan for {', '.join(code(k) for k in plan.keys)}", "",
             f"{counts['delete by key']} places to delete by key, {counts['rebuild']} to rebuild, "
             f"{counts['unverified']} unverified, {len(plan.models)} model versions to retrain."]
    if plan.personal:
        lines += ["", "Personal columns of the key tables: "
                  + ", ".join(code(p) for p in plan.personal) + "."]
    lines += ["", "| step | place | action | key column | after | producers | statement |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {p.step} | {md(p.dataset)} | {p.action} | {_cells(p.key_columns)} | "
              f"{_cells(p.after)} | {_cells(p.producers)} | "
              f"{code(p.statement) if p.statement else md(p.note)} |" for p in plan.places]
    lines += ["", "## What reaches each place", ""]
    for p in plan.places:
        lines.append(f"- {md(p.dataset)}: " + "; ".join(md(r) for r in p.reached)
                     + (f" (also named {', '.join(md(n) for n in p.other_names)})" if p.other_names else ""))
    if plan.models:
        lines += ["", "## Models trained on the data (retrain them)", ""]
        lines += [f"- {md(v.label)} (trained on {md(v.via)}, {v.saw or 'unknown'}; run {md(v.run_id)})"
                  for v in plan.models]
    if plan.influenced:
        lines += ["", "## Reached only by influence (a join or filter: no value copied)", ""]
        lines += [f"- {md(d)}" for d in plan.influenced]
    return "\n".join(lines) + "\n"


def _cells(names: tuple[str, ...]) -> str:
    return ", ".join(md(n) for n in names) or "-"


def plan_csv(plan: ErasurePlan) -> str:
    header = ["step", "place", "action", "key_columns", "statement", "producers", "after",
              "reached", "other_names", "note"]
    rows: list[list[object]] = [
        [p.step, p.dataset, p.action, " ".join(p.key_columns), p.statement or "",
         " ".join(p.producers), " ".join(p.after), "; ".join(p.reached), " ".join(p.other_names),
         p.note] for p in plan.places]
    rows += [["", f"{v.namespace}:{v.name}", "retrain", "", "", v.job, "", v.via, "",
              f"version {v.version}, run {v.run_id}"] for v in plan.models]
    return csv_text(header, rows)


def status_markdown(status: ErasureStatus) -> str:
    """The evidence, for an auditor's file: each place with the run that cleaned it and when."""
    done = sum(1 for p in status.places if p.state == "done")
    lines = [f"# Erasure request {code(status.ref[:16])}", "",
             f"Opened {status.opened_at:%Y-%m-%d %H:%M} UTC, due {status.deadline:%Y-%m-%d %H:%M} "
             f"UTC; checked {status.checked_at:%Y-%m-%d %H:%M} UTC: **{status.state}**, {done} of "
             f"{len(status.places)} done. Keys: {', '.join(code(k) for k in status.keys)}.", "",
             "| step | place | action | state | run | job | at | waits for |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {p.step} | {md(p.dataset)} | {p.action} | {p.state}{' (overdue)' if p.overdue else ''} "
              f"| {md(p.run_id) if p.run_id else '-'} | {md(p.job) if p.job else '-'} "
              f"| {f'{p.done_at:%Y-%m-%d %H:%M}' if p.done_at else '-'} "
              f"| {'; '.join(md(w) for w in p.waits_for) or '-'} |" for p in status.places]
    return "\n".join(lines) + "\n"
