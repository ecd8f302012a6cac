"""A rerun plan (impact.repair.plan) as Markdown, for an incident ticket or a pull request.
Names come from events: written through api.render.markup (cells, code spans, the fence)."""

from __future__ import annotations

import re

from api.render.markup import code, md, one_line
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
