"""Metadata commands: the writes the API takes that are not OpenLineage events.

Marquez's API lets a client create a namespace or a data source, describe a tag, tag a dataset, a
field or a job, and soft-delete a namespace, a dataset or a job. Each such write becomes a
command, scrubbed of secrets as events are (:mod:`ingest.secrets`), appended to the event log like
an event, and applied to the graph. The worker and ``lineage replay`` apply commands in their
place among the events (a soft delete and the event that reports the dataset again must keep their
order), so a replay of the log rebuilds what the API wrote, at the times it wrote it.

A command is a :class:`Command`; the log keeps its body, ``{"command": NAME, "params": {...}, "at":
ISO time}`` (:meth:`Command.body`, read back by :meth:`Command.of`); NAME is one of
:data:`COMMANDS`, each the Cypher file that applies it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from graph.db import Graph
from graph.errors import LineageError
from ingest.handoff import applied_by_worker, took_over
from ingest.log.protocol import EventLog
from ingest.secrets import scrub_text

CommandName = Literal["put_namespace", "put_source", "put_tag", "tag_add", "tag_remove",
                      "soft_delete", "erasure_open"]
COMMANDS: dict[CommandName, str] = {
    "put_namespace": "marquez/put_namespace",
    "put_source": "marquez/put_source",
    "put_tag": "marquez/put_tag",
    "tag_add": "marquez/tag_add",
    "tag_remove": "marquez/tag_remove",
    "soft_delete": "marquez/soft_delete",
    "erasure_open": "erasure/open",  # an erasure request (docs/graph-model.md, "Erasure")
}


class UnknownCommand(LineageError):
    """A body that is not a command this version knows (a log written by a later version)."""


@dataclass(frozen=True)
class Command:
    """A metadata write: which (``name``), with what (``params``, the Cypher file's parameters),
    when (``at``, ISO time in UTC: the write's own time, kept through replays)."""

    name: CommandName
    params: dict[str, Any]
    at: str

    def body(self) -> dict[str, Any]:
        """As the event log keeps it."""
        return {"command": self.name, "params": self.params, "at": self.at}

    @classmethod
    def of(cls, body: Any) -> Command:
        """The command a log entry holds; UnknownCommand if it is none this version knows."""
        name = body.get("command") if isinstance(body, dict) else None
        if not is_command(body) or name not in COMMANDS:
            raise UnknownCommand(f"not a command this version knows: {str(name)[:100]!r}")
        return cls(name, body["params"], body["at"])


def command(name: str, params: dict[str, Any], at: datetime | None = None) -> Command:
    """The command ``name`` with ``params``, every text scrubbed of secrets: a namespace named
    with credentials is stored without them, a description loses its tokens."""
    if name not in COMMANDS:
        raise UnknownCommand(f"unknown command {name!r}: expected one of {', '.join(COMMANDS)}")
    when = (at or datetime.now(UTC)).astimezone(UTC)
    return Command(name,
                   {k: scrub_text(v) if isinstance(v, str) else v for k, v in params.items()},
                   when.isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def is_command(body: Any) -> bool:
    """Whether ``body`` has a command's shape (a dead letter can hold an event or a command)."""
    return (isinstance(body, dict) and set(body) == {"command", "params", "at"}
            and isinstance(body["params"], dict))


def apply(graph: Graph, command: Command) -> list[dict[str, Any]]:
    """Apply one command in its own transaction; returns the rows its Cypher file returns."""
    return graph.write([(COMMANDS[command.name], {**command.params, "at": command.at})])[0][1]


def submit(graph: Graph, events: EventLog, name: str, params: dict[str, Any],
           wait: float = 10.0) -> list[dict[str, Any]] | None:
    """What the API (and ``lineage delete``) does with a metadata write: log the command, and
    return once it is applied, by the worker when one consumes the log (ingest.handoff: then
    None), else here (then the rows its Cypher file returns)."""
    made = command(name, params)
    seq = events.append_command(made.body())
    if applied_by_worker(events, seq, wait):
        return None
    rows = apply(graph, made)
    took_over(events, seq, seq)
    return rows


def tag(graph: Graph, events: EventLog, kind: str, namespace: str, name: str, tag: str,
        add: bool, field: str | None = None, wait: float = 10.0) -> None:
    """Add (or remove) a tag the API sets on a dataset, one of its fields, or a job."""
    params = {"kind": kind, "namespace": namespace, "name": name, "field": field, "tag": tag}
    if add:
        submit(graph, events, "tag_add", {**params, "by": "api"}, wait)
    else:
        submit(graph, events, "tag_remove", params, wait)


def apply_all(graph: Graph, bodies: Iterable[dict[str, Any]]) -> int:
    """Apply the commands of log entries' bodies in order; returns how many."""
    n = 0
    for body in bodies:
        apply(graph, Command.of(body))
        n += 1
    return n
