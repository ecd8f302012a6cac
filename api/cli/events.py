"""The event log: ``replay`` it into an empty graph, its ``dead-letters``, ``export`` as Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from api.cli import render
from api.cli.app import app
from api.cli.common import TextOrJson, err, fail, get_settings, out, question, writing_graph
from api.cli.load import make_ingester, spark_ingest_files
from api.cli.render import dump
from graph.errors import LineageError


@app.command("replay", rich_help_panel="Load and keep events")
def replay_cmd(
    wipe: Annotated[bool, typer.Option("--wipe", help="Empty the graph first (it must be empty "
                                                       "otherwise).")] = False,
    forget_bulk_loads: Annotated[bool, typer.Option(
        "--forget-bulk-loads", help="With --wipe: drop what `lineage ingest --engine spark` "
                                    "loaded (the log holds only where it came from; load those "
                                    "paths again after the replay to keep it).")] = False,
    engine: Annotated[str, typer.Option(help="python, or spark (exports the log to Parquet and "
                                             "loads it in Spark partitions).")] = "python",
) -> None:
    """Rebuild the graph from the event log alone, from its first event: the archive's entries
    first (what retention moved out of the log, LINEAGE_ARCHIVE), then the log's, and then
    retention again over the archive's days.

    Everything the API, `lineage ingest` and `lineage alias` loaded is in the log or its archive.
    A Spark bulk load is not (the log records its paths): `--wipe` refuses to drop it unless
    `--forget-bulk-loads` says so."""
    import tempfile

    from graph.retention.run import retain
    from ingest.commands import apply_all as apply_commands
    from ingest.export import export_parquet
    from ingest.log.archive import archived
    from ingest.log.protocol import History
    from ingest.log.sqlite import open_event_log
    from ingest.pipeline import IngestReport
    from ingest.replay import commands_after_events, nodes_in, replay
    from ingest.replay import wipe as empty_graph
    from ingest.worker import CONSUMER

    settings = get_settings()
    events = open_event_log(settings)
    in_archive = archived(settings.archive_dir)
    # a topic's partitions' ends count what retention dropped too: an upper bound for progress
    total = in_archive + (events.count() if isinstance(events, History) else events.last_seq())
    report = IngestReport()
    if engine not in ("python", "spark"):
        raise fail("--engine must be python or spark", code=2)
    if engine == "spark" and in_archive:
        raise fail(f"the archive in {settings.archive_dir} holds {in_archive:,} entries older "
                   "than the detailed window, commands among them, which a Spark load cannot "
                   "keep in their place: replay with --engine python", code=2)
    try:
        with writing_graph(settings) as graph:
            nodes = nodes_in(graph)
            if nodes and not wipe:
                raise fail(f"the graph holds {nodes} nodes: replay rebuilds an empty graph; "
                           "add --wipe to empty it first", code=2)
            bulk = events.bulk_loads()
            if nodes and bulk and not forget_bulk_loads:
                raise fail("the graph holds events the log cannot rebuild, loaded with `lineage "
                           "ingest --engine spark` from: "
                           + "; ".join(f"{b.source} ({b.events} events)" for b in bulk)
                           + ". Add --forget-bulk-loads to replay without them (then load those "
                           "paths again), or keep this graph", code=2)
            if engine == "spark":
                later = commands_after_events(events)  # before anything is wiped
            if nodes:
                empty_graph(graph)
            events.forget_bulk_loads()  # the graph is empty now: it holds none of them
            if engine == "spark":
                last = events.last_seq()
                with tempfile.TemporaryDirectory() as tmp:
                    export_parquet(events, Path(tmp))
                    spark_ingest_files(settings, [tmp], "local[*]", 20, record=False)
                applied = apply_commands(graph, [e.event for e in later])
                events.commit(CONSUMER, last)
                if applied:
                    out.print(f"and {applied} metadata commands written through the API")
                return
            ingester = make_ingester(graph, settings, None)
            with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("entries", total=total)
                done = replay(graph, events, ingester, report,
                              progress=lambda n: bar.advance(task, n),
                              archive_dir=settings.archive_dir)
            events.commit(CONSUMER, done.last_seq)
            if done.archived:  # the archive's days were summarised: they are again
                retained = retain(graph, settings.retention_detailed_days,
                                  settings.retention_summary_days)
    except LineageError as e:
        raise fail(str(e)) from e
    source = (f"{done.archived:,} entries from the archive in {settings.archive_dir}, the rest "
              "from the event log" if done.archived else "all from the event log")
    out.print(f"replayed {report.read} events ({source}): {report.loaded} loaded, "
              f"{report.duplicates} duplicates, {len(report.rejected)} rejected; "
              f"{done.commands} metadata commands written through the API")
    if done.archived:
        out.print(f"retention folded {retained.folded:,} runs into summary lineage again and "
                  f"removed {retained.edges:,} edges past the summary window")


@app.command("dead-letters", rich_help_panel="Load and keep events")
def dead_letters_cmd(
    retry: Annotated[bool, typer.Option("--retry", help="Try to load each one again.")] = False,
    fmt: TextOrJson = "text",
) -> None:
    """Events that passed validation but could not be loaded, with the reason; --retry them."""
    from ingest.log.sqlite import open_event_log
    from ingest.worker import retry_dead_letters

    settings = get_settings()
    events = open_event_log(settings)
    if retry:
        ok, failed = question(lambda g: retry_dead_letters(g, events, settings.facet_max_bytes))
        out.print(f"retried: {ok} loaded, {failed} still failing")
        return
    letters = events.dead_letters()
    if fmt == "json":
        dump([{"id": d.id, "seq": d.seq, "reason": d.reason, "failedAt": d.failed_at,
                "retries": d.retries, "event": d.event} for d in letters])
        return
    if not letters:
        out.print("no dead letters")
        return
    render.show_dead_letters(letters)


@app.command("export", rich_help_panel="Load and keep events")
def export_cmd(
    directory: Annotated[Path, typer.Argument(help="Where to write date=YYYY-MM-DD/ partitions")],
    fmt: Annotated[str, typer.Option("--format", help="Only parquet for now.")] = "parquet",
) -> None:
    """Write the event log as date-partitioned Parquet (for a data lake, or `ingest --engine spark`)."""
    from ingest.export import export_parquet
    from ingest.log.sqlite import open_event_log

    if fmt != "parquet":
        raise fail(f"--format {fmt}: only parquet is supported", code=2)
    events = open_event_log(get_settings())
    files, rows, skipped = export_parquet(events, directory)
    out.print(f"wrote {rows} events to {files} Parquet files under {directory}"
              + (f"; {skipped} metadata commands written through the API are not events and "
                 "stay in the log only" if skipped else ""))


@app.command("delete", rich_help_panel="Load and keep events")
def delete_cmd(
    kind: Annotated[str, typer.Argument(help="namespace, dataset or job")],
    namespace: Annotated[str, typer.Argument(help="The namespace (of the dataset or job).")],
    name: Annotated[str | None, typer.Argument(help="The dataset's or job's name.")] = None,
    purge: Annotated[bool, typer.Option(
        "--purge", help="Also remove from the event log and its archive every event that names "
                        "it, and rebuild the graph from the rest (test data loaded by mistake; "
                        "a GDPR deletion).")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Purge without asking.")] = False,
) -> None:
    """Hide a namespace, a dataset or a job loaded by mistake.

    Without --purge it is Marquez's soft delete, through the event log like the API's: hidden
    from the listings and search (Marquez's API, `lineage ls`), back as soon as an event reports
    it again; the lineage questions still walk through it (its history is kept). With --purge
    every event that names it is removed from the log, whole (with whatever else it says), and
    the graph is rebuilt from what is left (`lineage replay --wipe`)."""
    from ingest.log.protocol import history
    from ingest.log.sqlite import open_event_log

    if kind not in ("namespace", "dataset", "job"):
        raise fail(f"{kind}: expected namespace, dataset or job", code=2)
    if (kind == "namespace") != (name is None):
        raise fail("give a namespace alone, or a dataset's or job's namespace and name", code=2)
    what = f"{kind} {namespace}" + (f":{name}" if name else "")
    settings = get_settings()
    if purge and settings.log != "sqlite":
        raise fail("--purge removes entries from the embedded SQLite log; a Kafka topic keeps "
                   "its entries until its retention drops them (delete without --purge hides "
                   f"{what})", code=2)
    events = open_event_log(settings)
    if purge:
        from ingest.log.archive import purge as purge_archive
        from ingest.log.archive import read_archive

        def named(entry: dict[str, Any]) -> bool:
            return _names(entry, kind, namespace, name)

        seqs = [e.seq for e in events.scan() if named(e.event)]
        old = sum(1 for e in read_archive(settings.archive_dir) if named(e.event))
        if not seqs and not old:
            raise fail(f"no event in the log or its archive names {what}", code=2)
        where = "the log" + (f" and its archive ({old} of them)" if old else "")
        if not yes and not typer.confirm(f"remove {len(seqs) + old} entries naming {what} from "
                                         f"{where} and rebuild the graph from the rest?"):
            raise typer.Exit(1)
        removed = history(events, "removing entries").remove(seqs) if seqs else 0
        removed += purge_archive(settings.archive_dir, named)
        out.print(f"removed {removed} entries naming {what} from {where}; rebuilding the graph")
        replay_cmd(wipe=True, forget_bulk_loads=False, engine="python")
        return
    from ingest import commands

    try:
        with writing_graph(settings) as graph:
            rows = commands.submit(graph, events, "soft_delete",
                                   {"kind": kind, "namespace": namespace, "name": name},
                                   settings.command_wait)
    except LineageError as e:
        raise fail(str(e)) from e
    if rows is None:
        out.print(f"hid {what}: the running worker applied the deletion in its place in the log; "
                  "`--purge` removes its events")
        return
    hidden = rows[0]["deleted"] if rows else 0
    if not hidden or (kind == "namespace" and hidden == 1):
        out.print(f"nothing named {what} in the graph; the deletion is in the log all the same")
        return
    out.print(f"hid {what} ({hidden} nodes): gone from the listings and search until an event "
              "reports it again; `--purge` removes its events")


def _names(entry: dict[str, Any], kind: str, namespace: str, name: str | None) -> bool:
    """Whether a log entry (an event or a command) names the namespace, dataset or job."""
    from ingest import commands

    if commands.is_command(entry):
        params = entry.get("params") or {}
        return params.get("namespace") == namespace and (name is None or params.get("name") == name)
    job: dict[str, Any] = entry["job"] if isinstance(entry.get("job"), dict) else {}
    datasets = [d for d in [*(entry.get("inputs") or []), *(entry.get("outputs") or []),
                            entry.get("dataset")] if isinstance(d, dict)]
    if kind == "job":
        return bool(job) and job.get("namespace") == namespace and job.get("name") == name
    if kind == "dataset":
        return any(d.get("namespace") == namespace and d.get("name") == name for d in datasets)
    return job.get("namespace") == namespace or any(d.get("namespace") == namespace
                                                    for d in datasets)
