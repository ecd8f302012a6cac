"""A rerun plan (impact.repair.plan) as Markdown, for an incident ticket or a pull request."""

from __future__ import annotations

from impact.repair.plan import RerunPlan


def plan_markdown(plan: RerunPlan) -> str:
    lines = [f"# Rerun plan for {plan.source}", "",
             f"Bad data began {plan.since:%Y-%m-%d %H:%M} UTC with "
             + (", ".join(f"`{j}`" for j in plan.origin_jobs) or "a write in place")
             + (f" (run{'s' if len(plan.origin) > 1 else ''} "
                + ", ".join(f"`{r}`" for r in plan.origin) + ")" if plan.origin else "")
             + ": fix it and run it again first.", ""]
    if plan.reruns:
        lines += ["| step | job | after | runs that read bad data | bad inputs | task |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r.step} | `{r.job}` | {', '.join(f'`{a}`' for a in r.after) or '-'} | "
                  f"{', '.join(f'`{x}`' for x in r.runs)} | {', '.join(f'`{d}`' for d in r.read)} "
                  f"| {r.task or '-'} |" for r in plan.reruns]
    else:
        lines.append(f"No downstream run read bad data ({plan.examined} datasets examined).")
    if plan.commands:
        lines += ["", "## In Airflow", "", "```bash", *plan.commands, "```"]
    if plan.rollbacks:
        lines += ["", "## Roll back to", "", "| dataset | bad since | version | written by run | at |",
                  "|---|---|---|---|---|"]
        lines += [f"| `{b.dataset}` | {b.bad_since:%Y-%m-%d %H:%M} | {b.version or '-'} | "
                  f"{f'`{b.run_id}`' if b.run_id else '-'} | "
                  f"{f'{b.time:%Y-%m-%d %H:%M}' if b.time else b.note} |"
                  if b.bad_since else f"| `{b.dataset}` | - | - | - | {b.note} |"
                  for b in plan.rollbacks]
    return "\n".join(lines) + "\n"
