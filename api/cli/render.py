"""How answers look in a terminal: tables, times, JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import typer
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from api.cli.common import out, printable


def fit(table: Table, drop: Sequence[str] = ()) -> None:
    """Print ``table`` within the terminal's width without splitting a word or an identifier:
    each column is at least as wide as its longest word and wraps only between words; when that
    is too wide, the columns named in ``drop`` are left out, least useful first; when the rest is
    still too wide, each row is printed as a block of ``column: value`` lines, which the terminal
    may wrap but never cuts (a URL or a name copied from it is whole)."""
    every = list(table.columns)
    for name in (None, *drop):
        if name is not None:
            table.columns[:] = [c for c in table.columns if c.header != name]
        if _widths(table):
            out.print(table)
            return
    table.columns[:] = every  # a block has room for every column
    blocks(table)


def _widths(table: Table) -> bool:
    """Set each column's width so that the table fits the terminal with no word split; False
    when even the longest words side by side do not fit."""
    spans = []
    for column in table.columns:
        lines = [line for cell in (column.header, *column.cells) for line in _plain(cell)]
        longest = max((len(line) for line in lines), default=1)
        word = longest if column.no_wrap else max(
            (len(w) for line in lines for w in line.split()), default=1)
        spans.append((max(1, word), max(1, longest)))
    for column, (least, _) in zip(table.columns, spans, strict=True):
        column.width = least
    spare = out.width - Measurement.get(out, out.options.update(width=10**6), table).maximum
    if spare < 0:
        return False
    wanted = [most - least for least, most in spans]
    total = sum(wanted)
    for column, (least, _), more in zip(table.columns, spans, wanted, strict=True):
        column.width = least + (more if total <= spare else spare * more // max(1, total))
    return True


def _plain(cell: Any) -> list[str]:
    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return text.split("\n")


def blocks(table: Table) -> None:
    """A table as one block of ``column: value`` lines per row (see :func:`fit`)."""
    if table.title:
        out.print(str(table.title), highlight=False)
    headers = [str(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    for i in range(table.row_count):
        for header, column in zip(headers, cells, strict=True):
            # a cell reads as the table would show it: its markup is style, not text
            cell = column[i] if i < len(column) else ""
            value = cell if isinstance(cell, Text) else Text.from_markup(str(cell))
            if value.plain:
                label = f"{header}: " if header else ""
                for n, line in enumerate(value.split("\n")):
                    out.print(Text(label if n == 0 else " " * len(label)) + line, highlight=False)
        if table.show_header or i < table.row_count - 1:
            out.print("")
    if table.caption:
        out.print(str(table.caption), highlight=False, style="dim")


def rows(found: Any, columns: list[str], fmt: str, title: str = "",
         drop: Sequence[str] = ()) -> None:
    """Rows as a table that fits the terminal (:func:`fit`, leaving out ``drop`` first),
    tab-separated lines, or JSON (of ``found`` itself, which may be a whole answer)."""
    if fmt == "json":
        dump(found)
    elif fmt == "plain":
        for row in found:
            # a tab in a name would shift the columns: shown as its escape, as control characters
            print("\t".join("" if row.get(c) is None else printable(str(row[c])).replace("\t", "\\t")
                            for c in columns))
    elif fmt == "text":
        table = Table(title=title or None)
        for c in columns:
            table.add_column(c)
        for row in found:
            table.add_row(*("" if row.get(c) is None else str(row[c]) for c in columns))
        fit(table, drop)
    else:
        raise typer.BadParameter(f"--format {fmt}: expected text, plain or json")


def plain(value: Any) -> Any:
    """A value ``json.dumps`` cannot write, as text (times in ISO 8601)."""
    if hasattr(value, "to_native"):
        value = value.to_native()
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def dump(value: Any) -> None:
    """Print an answer as indented JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    print(json.dumps(value, default=plain, indent=2))


def stamp(value: Any) -> str:
    """A time to the minute, or nothing."""
    if value is None:
        return ""
    value = value.to_native() if hasattr(value, "to_native") else value
    return f"{value:%Y-%m-%d %H:%M}"


def facts(columns: int = 2) -> Table:
    """A table of label and value(s), without borders, to print with :func:`fit`."""
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    for _ in range(columns - 1):
        table.add_column()
    return table


def print_status(status: Any) -> None:
    """A Neo4j server's state, addresses and login."""
    table = facts()
    table.add_row("state", status.state)
    table.add_row("bolt", status.bolt_uri)
    table.add_row("browser", status.browser_url)
    table.add_row("user", status.user)
    if status.password_file:
        table.add_row("password", f"in {status.password_file}")
    table.add_row("detail", status.detail)
    fit(table)


def walk_table(answer: Any) -> None:
    """A blast radius or an upstream walk (impact.answers.Walk) as a table, with counts by kind."""
    first = answer.impacted[0].path[0] if answer.impacted and answer.impacted[0].path else ""
    home = first[:first.rfind(":") + 1]  # the source's namespace, left out of the paths
    table = Table(title=f"{answer.direction} of {answer.source} (depth {answer.depth})",
                  caption=f"paths and names leave out the namespace {home.rstrip(':')}" if home else None)
    for col in ("kind", "name", "distance", "path", "why", "last seen", "owners", "beyond"):
        table.add_column(col)
    for i in answer.impacted:
        path = " → ".join(step.removeprefix(home) for step in i.path)
        # another namespace than the source's is named: rows would look alike without it
        name = (i.name if f"{i.namespace}:" == home else f"{i.namespace}:{i.name}") \
            + "".join(f"\n(also {a})" for a in i.aliases)
        table.add_row(i.kind, name, str(i.distance), path, i.why,
                      f"{i.last_seen:%Y-%m-%d %H:%M}" if i.last_seen else "",
                      ", ".join(i.owners), "" if i.beyond is None else str(i.beyond))
    fit(table, ("beyond", "owners", "last seen"))  # path and why are the answer: blocks first
    if answer.aliases:
        out.print(f"{answer.source} is also named {', '.join(answer.aliases)} (symlinks): "
                  "answered for every name", highlight=False)
    out.print("by kind: " + ", ".join(f"{k} {v}" for k, v in answer.summary["kind"].items())
              if answer.impacted else f"nothing {answer.direction} of it")
    if any(i.beyond for i in answer.impacted):
        out.print("beyond: how many impacted datasets lie downstream of that one", style="dim")
    show_models(getattr(answer, "models", ()))
    show_approximate(answer)


def show_approximate(answer: Any) -> None:
    """An answer as of a time before the detailed window of retention says it is approximate."""
    if getattr(answer, "approximate", None):
        out.print(answer.approximate, style="yellow", markup=False, highlight=False)


def show_models(versions: Any) -> None:
    """The model versions trained on what an answer reached (impact.ml.models), one line per model
    version: ``churn v2 (raw) trained on ns:dataset.column by run R``."""
    if not versions:
        return
    from impact.ml.models import summary

    out.print(f"models: {summary(versions)}", highlight=False)
    for v in versions:
        how = (f"trained on {v.via}" if v.basis == "columns"
               else f"trained on {v.via} (which columns: not stated)")
        out.print(f"  {v.label}: {how}, run {v.run_id} of {v.job}, {v.state or '-'}, "
                  f"{stamp(v.trained_at)}", highlight=False, style="dim")


def show_root_cause(answer: Any) -> None:
    """Root-cause candidates, ranked, with their paths and the choke points."""
    table = Table(title=f"root-cause candidates for {answer.target} "
                        f"(reference time {answer.reference_time:%Y-%m-%d %H:%M})")
    for c in ("#", "score", "kind", "distance", "what", "path", "score is"):
        table.add_column(c)
    for i, c in enumerate(answer.candidates, 1):
        table.add_row(str(i), str(c.score), c.kind, str(c.distance), c.summary, " <- ".join(c.path),
                      c.score_is())
    if answer.candidates:
        fit(table, ("distance", "score is"))
        if out.width >= 40:
            out.print("score: the kind's weight (failed run 100, failed assertion 80, stale or "
                      "missing input 60, schema change 40), +10 on a choke point, minus the hops "
                      "away (at most 19)", style="dim", highlight=False)
    else:
        out.print(f"root cause of {answer.target} (reference time "
                  f"{answer.reference_time:%Y-%m-%d %H:%M}):", highlight=False)
    if answer.choke_points:
        out.print("every upstream path passes through: " + ", ".join(answer.choke_points),
                  highlight=False)
    if not answer.candidates:
        out.print(f"nothing wrong found: no failed run, failed assertion, stale or missing input "
                  f"or recent schema change among the {answer.examined} datasets examined")
    show_approximate(answer)


def show_where(report: Any) -> None:
    """Where a column's data goes, labelled raw / transformed / masked / aggregated / influence."""
    table = Table(title=f"where the data of {report.source} goes (depth {report.depth})")
    for c in ("label", "column", "distance", "via jobs", "last flowed"):
        table.add_column(c)
    style = {"raw": "bold red", "unknown": "red", "transformed": "yellow", "masked": "green"}
    for r in report.reaches:
        table.add_row(f"[{style.get(r.label, 'dim')}]{r.label}[/]", f"{r.dataset}.{r.column}",
                      str(r.distance), ", ".join(r.jobs), stamp(r.last_flowed))
    fit(table, ("last flowed", "distance", "via jobs"))
    counts = report.counts()
    out.print(", ".join(f"{v} {k}" for k, v in counts.items() if v) or "its data goes nowhere else")
    show_models(report.models)
    show_approximate(report)


def show_dataset(key: str, row: dict[str, Any], verdict: str,
                 at_risk: list[dict[str, Any]] | None = None) -> None:
    """One dataset: what it is, who writes and reads it, its neighbours, last run, columns."""
    out.print(f"[bold]{key}[/]", highlight=False)
    p = row["props"]
    info = facts()
    for label, value in (("description", p.get("description")),
                         ("also named", ", ".join(row.get("aliases") or [])),
                         ("owners", ", ".join(p.get("owners") or [])),
                         ("written by", ", ".join(row["writers"])),
                         ("read by", ", ".join(row["readers"])),
                         ("upstream", ", ".join(u["dataset"] for u in row["upstream"])),
                         ("downstream", ", ".join(d["dataset"] for d in row["downstream"])),
                         ("freshness", verdict)):
        if value:
            info.add_row(label, value)
    for cause in at_risk or []:
        info.add_row("quality at risk", cause["what"])
    run = row["lastRun"]
    if run:
        took = (run["end"].to_native() - run["start"].to_native()) if run["end"] and run["start"] else None
        info.add_row("last run", f"{run['state']} {run['job']} started {stamp(run['start'])}, ended "
                     f"{stamp(run['end']) or '-'}" + (f" ({took})" if took else "")
                     + (f": {run['errorMessage']}" if run["errorMessage"] else ""))
    fit(info)
    cols = Table(title="columns")
    for c in ("name", "type", "tags", "description"):
        cols.add_column(c)
    for c in row["columns"]:
        cols.add_row(c["name"], c["type"] or "", ", ".join(c.get("tags") or []),
                     c["description"] or "")
    fit(cols, ("description", "type"))
    if row.get("dropped"):
        out.print("dropped (no longer in the latest written schema): " + ", ".join(
            f"{c['name']} (last written {stamp(c['lastWritten'])})" for c in row["dropped"]),
            highlight=False)


def dataset_facts(row: dict[str, Any], verdict: str,
                  at_risk: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One dataset as (fact, value, detail) rows, for --format plain."""
    facts_ = [{"fact": "column", "value": c["name"], "detail": c["type"] or ""}
              for c in row["columns"]]
    facts_ += [{"fact": "column tag", "value": c["name"], "detail": tag}
               for c in row["columns"] for tag in c.get("tags") or []]
    facts_ += [{"fact": "dropped column", "value": c["name"], "detail": stamp(c["lastWritten"])}
               for c in row.get("dropped") or []]
    facts_ += [{"fact": "alias", "value": a} for a in row.get("aliases") or []]
    facts_ += [{"fact": "writer", "value": w} for w in row["writers"]]
    facts_ += [{"fact": "reader", "value": r} for r in row["readers"]]
    facts_ += [{"fact": "upstream", "value": u["dataset"]} for u in row["upstream"]]
    facts_ += [{"fact": "downstream", "value": d["dataset"]} for d in row["downstream"]]
    facts_ += [{"fact": "quality at risk", "value": c["kind"], "detail": c["what"]}
               for c in at_risk or []]
    return [*facts_, {"fact": "freshness", "value": verdict}]


def job_facts(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One job as (fact, value, detail) rows, for --format plain."""
    facts_ = [{"fact": "reads", "value": d} for d in row["reads"]]
    facts_ += [{"fact": "writes", "value": d} for d in row["writes"]]
    facts_ += [{"fact": "parent", "value": p} for p in row["parents"]]
    facts_ += [{"fact": "child", "value": c["job"],
                "detail": (c["latest"] or {}).get("state") or ""} for c in row.get("children") or []]
    return facts_ + [{"fact": "run", "value": r["runId"],
                      "detail": f"{r['state'] or ''} {stamp(r['start'])}".strip()}
                     for r in row["runs"]]


def show_job(key: str, row: dict[str, Any]) -> None:
    """One job: what it reads and writes, its parents, its latest runs."""
    out.print(f"[bold]job {key}[/]", highlight=False)
    info = facts()
    info.add_row("reads", ", ".join(row["reads"]) or "-")
    info.add_row("writes", ", ".join(row["writes"]) or "-")
    if row["parents"]:
        info.add_row("parent", ", ".join(row["parents"]))
    for child in row.get("children") or []:
        latest = child["latest"]
        info.add_row("child job", child["job"] + (f"  (latest run {latest['runId']} "
                                                  f"{latest['state']} {stamp(latest['time'])})"
                                                  if latest else ""))
    fit(info)
    table = Table(title="latest runs")
    for c in ("run", "state", "start", "end", "duration", "error"):
        table.add_column(c)
    for r in row["runs"]:
        took = (r["end"].to_native() - r["start"].to_native()) if r["end"] and r["start"] else ""
        table.add_row(r["runId"], r["state"] or "", stamp(r["start"]), stamp(r["end"]), str(took),
                      r["errorMessage"] or "")
    fit(table, ("duration", "end"))  # a failed run's error is kept: blocks first


def show_dead_letters(letters: list[Any]) -> None:
    table = Table(title="dead letters")
    for c in ("id", "log seq", "reason", "retries"):
        table.add_column(c)
    for d in letters:
        table.add_row(str(d.id), str(d.seq), d.reason, str(d.retries))
    fit(table, ("retries", "log seq"))
