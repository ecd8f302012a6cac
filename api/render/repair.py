"""A rerun plan (impact.repair.plan) and what changed (impact.repair.changes) as Markdown, for an
incident ticket or a pull request.
Names come from events: written through api.render.markup (cells, code spans, the fence)."""

from __future__ import annotations

import re

from api.render.markup import code, md, one_line
from impact.repair.changes import Changes, describe
from impact.repair.plan import RerunPlan


def plan_markdown(plan: RerunPlan) -> str:
    lines = [f"# Rerun plan for {md(plan.source)}", "",
             f"Bad data began {plan.since:%Y-%m-%d %H:%M} UTC with "
             + (", ".join(code(j) for j in plan.origin_jobs) or "a write in place")
             + (f" (run{'s' if len(plan.origin) > 1 else ''} "
                + ", ".join(code(r) for r in plan.origin) + ")" if plan.origin else "")
             + ": fix it and run it again first.", ""]
    if plan.reruns:
        lines += ["| step | job | after | why | runs that read bad data | bad inputs | task |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r.step} | {md(r.job)} | {', '.join(md(a) for a in r.after) or '-'} | "
                  f"{r.reason} | {', '.join(md(x) for x in r.runs) or '-'} | "
                  f"{', '.join(md(d) for d in r.read)} | {md(r.task) if r.task else '-'} |"
                  for r in plan.reruns]
    else:
        lines.append(f"No downstream run read bad data ({plan.examined} datasets examined).")
    if plan.unaffected:
        lines += ["", f"## Not affected by the changed columns ({', '.join(md(c) for c in plan.columns)})",
                  "", "They read the bad data, but by their column lineage none of what the bad "
                  "columns feed:", ""]
        lines += [f"- {md(r.job)}: read {', '.join(md(d) for d in r.read)}" for r in plan.unaffected]
    if plan.commands:
        commands = [one_line(c) for c in plan.commands]
        longest = max((len(run) for c in commands for run in re.findall(r"`+", c)), default=0)
        fence = "`" * max(3, longest + 1)
        lines += ["", "## In Airflow", "", f"{fence}bash", *commands, fence]
    if plan.rollbacks:
        lines += ["", "## Roll back to", "", "| dataset | bad since | version | written by run | at |",
                  "|---|---|---|---|---|"]
        lines += [f"| {md(b.dataset)} | {b.bad_since:%Y-%m-%d %H:%M} | "
                  f"{md(b.version) if b.version else '-'} | {md(b.run_id) if b.run_id else '-'} | "
                  f"{f'{b.time:%Y-%m-%d %H:%M}' if b.time else b.note} |"
                  if b.bad_since else f"| {md(b.dataset)} | - | - | - | {b.note} |"
                  for b in plan.rollbacks]
    return "\n".join(lines) + "\n"


def changes_markdown(answer: Changes) -> str:
    """What changed, nearest first: a table, then each change's evidence (a facet's diff)."""
    window = (f"since {answer.since:%Y-%m-%d %H:%M} UTC" if answer.since else "from the beginning") \
        + (f" until {answer.until:%Y-%m-%d %H:%M} UTC" if answer.until else "")
    lines = [f"# What changed for {md(answer.subject)}", "",
             f"Upstream changes {window}"
             + (f", compared with run {code(answer.baseline)}" if answer.baseline else "")
             + (f"; latest run {code(answer.latest)}" if answer.latest else "") + ".", ""]
    if not answer.changes:
        lines.append(f"Nothing changed ({answer.examined} datasets and jobs examined).")
        return "\n".join(lines) + "\n"
    lines += ["| distance | kind | on | what | when | runs |", "|---|---|---|---|---|---|"]
    lines += [f"| {c.distance} | {c.kind} | {md(c.on)} | {md(c.what)} | "
              f"{f'{c.time:%Y-%m-%d %H:%M}' if c.time else '-'} | "
              f"{', '.join(md(r) for r in c.runs) or '-'} |" for c in answer.changes]
    detailed = [(c, list(describe(c))) for c in answer.changes]
    for c, evidence in detailed:
        if not evidence:
            continue
        longest = max((len(run) for e in evidence for run in re.findall(r"`+", e)), default=0)
        fence = "`" * max(3, longest + 1)
        lines += ["", f"## {md(c.on)}: {md(c.what)}", "", f"{fence}diff",
                  *(one_line(e) for e in evidence), fence]
    return "\n".join(lines) + "\n"
