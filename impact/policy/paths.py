"""The lineage a dataset-level policy rule walks (``through``, ``residency``, ``sources``): the
graph downstream or upstream of some datasets as networkx holds it, and the walks the rules ask
of it. Pure once the graph is read.

Nodes are datasets (and the jobs of hand-offs, which carry data but hold none); an edge points the
way data flows, from a source to what derives from it, and carries the job that moved the data
and its latest run. Alias edges (two names of one table) are edges too: data crosses them
unchanged, and no step of a path is shown for them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import networkx as nx

from graph.db import Graph
from impact.answers import clamp_depth
from impact.where import Hop

STARTS_PER_QUERY = 200
"""Start datasets per walk query: a rule with more sources reads its graph in parts."""

Node = tuple[str, str, str]
"""(kind, namespace, name): kind is ``dataset`` or ``job``."""


def key(node: Node) -> str:
    """A node as reports name it: ``namespace:name``, a job as ``job namespace:name``."""
    kind, namespace, name = node
    return f"{namespace}:{name}" if kind == "dataset" else f"job {namespace}:{name}"


def downstream(graph: Graph, datasets: Iterable[tuple[str, str]], depth: int | None) -> nx.DiGraph:
    """What derives from ``datasets`` (current lineage, within ``depth`` hops)."""
    return _read(graph, "policies/downstream", datasets, depth)


def upstream(graph: Graph, datasets: Iterable[tuple[str, str]], depth: int | None) -> nx.DiGraph:
    """What ``datasets`` derive from (current lineage, within ``depth`` hops)."""
    return _read(graph, "policies/upstream", datasets, depth)


def _read(graph: Graph, query: str, datasets: Iterable[tuple[str, str]],
          depth: int | None) -> nx.DiGraph:
    flow = nx.DiGraph()
    starts = [{"namespace": ns, "name": name} for ns, name in sorted(set(datasets))]
    for i in range(0, len(starts), STARTS_PER_QUERY):
        for row in graph.read(query, datasets=starts[i:i + STARTS_PER_QUERY],
                              depth=clamp_depth(depth)):
            add_node(flow, (row["kind"], row["namespace"], row["name"]), row["tags"])
            for s in row["sources"]:
                source = (s["kind"], s["namespace"], s["name"])
                if source not in flow:
                    add_node(flow, source, None)
                add_edge(flow, source, (row["kind"], row["namespace"], row["name"]), s)
    return flow


def add_node(flow: nx.DiGraph, node: Node, tags: list[str] | None) -> None:
    """A node; ``tags`` None when only an edge named it (its tags are read where it is a node)."""
    if tags is not None or node not in flow:
        flow.add_node(node, tags=tuple(tags) if tags is not None else None)


def add_edge(flow: nx.DiGraph, source: Node, target: Node, facts: dict[str, Any]) -> None:
    flow.add_edge(source, target, job=facts.get("job"), run=facts.get("run"),
                  alias=bool(facts.get("alias")))


def tags(flow: nx.DiGraph, node: Node) -> tuple[str, ...]:
    return flow.nodes[node].get("tags") or ()


def walk(flow: nx.DiGraph, start: Node, enter: Callable[[Node, dict[str, Any]], bool],
         stop: Callable[[Node], bool], depth: int | None = None) -> Iterator[tuple[Node, list[Node]]]:
    """Breadth first from ``start`` along the way data flows: each node reached (at its shortest
    distance) with the path to it, ``start`` first. An edge is taken only when ``enter(node,
    edge)`` says so; a node where ``stop`` holds is reached but not walked past. Alias edges do not
    count towards ``depth``."""
    limit = clamp_depth(depth)
    seen = {start}
    queue: deque[tuple[Node, list[Node], int]] = deque([(start, [start], 0)])
    while queue:
        node, path, hops = queue.popleft()
        for _, nxt, edge in sorted(flow.out_edges(node, data=True), key=lambda e: e[1]):
            cost = hops + (0 if edge["alias"] else 1)
            if nxt in seen or cost > limit or not enter(nxt, edge):
                continue
            seen.add(nxt)
            yield nxt, path + [nxt]
            if not stop(nxt):
                queue.append((nxt, path + [nxt], cost))


def roots(flow: nx.DiGraph, sink: Node) -> list[tuple[Node, list[Node]]]:
    """The datasets at the root of ``sink``'s upstream lineage (nothing they derive from is known,
    under any of their names), each with a path from it to ``sink``."""
    above = nx.ancestors(flow, sink) | {sink}
    names = nx.Graph()  # the alias groups: one table's names
    names.add_nodes_from(above)
    names.add_edges_from((a, b) for a, b, alias in flow.subgraph(above).edges(data="alias")
                         if alias)
    found = []
    for group in nx.connected_components(names):
        fed = any(not alias for member in group
                  for _, _, alias in flow.in_edges(member, data="alias"))
        members = sorted(n for n in group if n[0] == "dataset" and n != sink)
        if fed or not members:
            continue
        root = members[0]
        found.append((root, nx.shortest_path(flow, root, sink)))
    return sorted(found)


def steps(flow: nx.DiGraph, path: list[Node]) -> tuple[Hop, ...]:
    """A dataset-level path as the steps reports show: each hop with its job and run."""
    out = []
    for a, b in zip(path, path[1:], strict=False):
        edge = flow.edges[a, b]
        if edge["alias"]:
            continue
        out.append(Hop(key(a), key(b), edge["job"], edge["run"], None, None, False, None, None,
                        "dataset-level lineage (a job read one and wrote the other)"))
    return tuple(out)
