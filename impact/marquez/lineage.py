"""The lineage graph around a node, in the shape of Marquez's read API.

``GET /api/v1/lineage?nodeId=dataset:{ns}:{name}`` (or ``job:{ns}:{name}``) returns
``{"graph": [{"id", "type", "data", "inEdges", "outEdges"}]}`` with DATASET and JOB nodes and edges
along the data flow (dataset -> job that reads it, job -> dataset it writes). Unlike Marquez, the walk
is directed both ways from the node: siblings that merely share an input are not lineage.

``GET /api/v1/column-lineage?nodeId=datasetField:{ns}:{dataset}:{field}`` (or ``dataset:{ns}:{name}``
for all its fields, or ``job:{ns}:{name}`` for the fields of the datasets the job writes) returns
DATASET_FIELD nodes, upstream by default, downstream too with ``withDownstream``; each field lists
its ``inputFields`` with every transformation kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from graph.db import Graph
from graph.errors import LineageError, NotFound
from impact.answers import clamp_depth, native_time
from impact.marquez import catalog as mc
from impact.marquez.models import strength

_VERSION = re.compile(r"#[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
KINDS = {"dataset": "Dataset", "job": "Job", "datasetField": "Column"}
# Every split of an id at its ':' is a candidate (namespaces hold ':' themselves). Bounded so that
# resolving an id costs at most a few hundred candidates: without these limits, an id with
# a thousand ':' made hundreds of thousands (docs/benchmarks.md, "Measurements behind the code").
MAX_NODE_ID = 2048
MAX_COLONS = 24


@dataclass(frozen=True)
class NodeId:
    kind: str  # dataset, job or datasetField
    namespace: str
    name: str
    field: str | None = None

    def __str__(self) -> str:
        return ":".join([self.kind, self.namespace, self.name] + ([self.field] if self.field else []))


class BadNodeId(LineageError, ValueError):
    pass


class AmbiguousNodeId(BadNodeId):
    """A nodeId that names more than one node (namespaces and names may hold ':')."""

    def __init__(self, node_id: str, found: list[NodeId]) -> None:
        self.candidates = [_escaped(f) for f in found]
        super().__init__(
            f"nodeId {node_id!r} names {len(found)} nodes: "
            + "; ".join(f"namespace {f.namespace!r} name {f.name!r}"
                        + (f" field {f.field!r}" if f.field else "") for f in found)
            + ". Write each ':' inside a namespace or name as %3A (in a URL: %253A), e.g. "
            + _escaped(found[0]))


def _escaped(n: NodeId) -> str:
    parts = [n.namespace, n.name] + ([n.field] if n.field else [])
    return ":".join([n.kind, *(p.replace("%", "%25").replace(":", "%3A") for p in parts)])


def parse_node_id(graph: Graph, node_id: str) -> NodeId:
    """Resolve ``kind:namespace:name[:field]``; namespaces and names may hold ':' themselves, so
    every split is tried against the graph. Raises BadNodeId or NotFound."""
    if len(node_id) > MAX_NODE_ID:
        raise BadNodeId(f"nodeId is {len(node_id)} characters long, over the limit of {MAX_NODE_ID}")
    # column lineage may name a version (dataset:ns:name#UUID, job:ns:name#UUID), as Marquez's
    # clients send it; we answer with the lineage current now
    node_id = _VERSION.sub("", node_id)
    kind, sep, rest = node_id.partition(":")
    if rest.count(":") > MAX_COLONS:
        raise BadNodeId(f"nodeId has {rest.count(':')} ':' after its kind, over the limit of "
                        f"{MAX_COLONS}")
    if not sep or kind not in KINDS or not rest:
        raise BadNodeId(f"nodeId {node_id!r}: expected dataset:NAMESPACE:NAME, job:NAMESPACE:NAME "
                        "or datasetField:NAMESPACE:DATASET:FIELD")
    if "%" in rest:  # the unambiguous form: every ':' of a namespace or name written %3A
        try:
            return _escaped_id(graph, node_id, kind, rest)
        except (BadNodeId, NotFound):
            pass  # or a name that holds '%' itself, written as it is
    cuts = [i for i, ch in enumerate(rest) if ch == ":"]
    candidates: list[dict[str, Any]] = []
    if kind == "datasetField":
        for i in cuts:
            for j in cuts:
                if j > i + 1 and j < len(rest) - 1:
                    candidates.append({"namespace": rest[:i], "name": rest[i + 1:j],
                                       "column": rest[j + 1:]})
    else:
        candidates = [{"namespace": rest[:i], "name": rest[i + 1:], "column": None}
                      for i in cuts if 0 < i < len(rest) - 1]
    if not candidates:
        raise BadNodeId(f"nodeId {node_id!r} has too few ':'-separated parts for a {kind}")
    found = graph.read("lookup/resolve", label=KINDS[kind], candidates=candidates)
    if not found:
        raise NotFound(KINDS[kind].lower(), node_id)
    nodes = [NodeId(kind, f["namespace"], f["name"], f["column"]) for f in found]
    if len(nodes) > 1:
        raise AmbiguousNodeId(node_id, nodes)
    return nodes[0]


def _escaped_id(graph: Graph, node_id: str, kind: str, rest: str) -> NodeId:
    parts = [unquote(p) for p in rest.split(":")]
    if len(parts) != (3 if kind == "datasetField" else 2) or not all(parts):
        raise BadNodeId(f"nodeId {node_id!r}: with %3A for the ':' inside names, a {kind} id has "
                        f"exactly {'3' if kind == 'datasetField' else '2'} parts after its kind")
    candidate = {"namespace": parts[0], "name": parts[1],
                 "column": parts[2] if kind == "datasetField" else None}
    if not graph.read("lookup/resolve", label=KINDS[kind], candidates=[candidate]):
        raise NotFound(KINDS[kind].lower(), node_id)
    return NodeId(kind, parts[0], parts[1], candidate["column"])


def lineage(graph: Graph, node_id: str, depth: int | None = None,
            include_retired: bool = False) -> dict[str, Any]:
    """Marquez's ``/api/v1/lineage`` answer for ``node_id``, read in one transaction."""
    return graph.reading(lambda g: _lineage(g, node_id, depth, include_retired))


def _lineage(graph: Graph, node_id: str, depth: int | None,
             include_retired: bool) -> dict[str, Any]:
    if _VERSION.search(node_id):  # Marquez reads the suffix as part of the name: no such node
        raise BadNodeId(f"nodeId {node_id!r} names a version: /api/v1/lineage walks datasets and "
                        "jobs, not versions (as Marquez); ask without '#VERSION'")
    node = parse_node_id(graph, node_id)
    if node.kind == "datasetField":
        raise BadNodeId("use /api/v1/column-lineage for a datasetField node")
    rows = graph.read("lineage/graph", nodeType=node.kind.upper(), namespace=node.namespace,
                      name=node.name, depth=clamp_depth(depth), includeRetired=include_retired)
    asked = f"{node.namespace}:{node.name}" if node.kind == "dataset" else None
    table = _tables(rows, asked)
    listed = [r for r in rows if r["kind"] == "JOB" or table[_key(r)] == _key(r)]
    models = mc.node_data(
        graph, [_ident(r) for r in listed if r["kind"] == "DATASET"],
        [_ident(r) for r in listed if r["kind"] == "JOB"])
    kept = [r for r in listed if f"{r['kind'].lower()}:{_key(r)}" in models]  # not soft-deleted
    ids = {f"{r['kind'].lower()}:{table.get(_key(r), _key(r))}" for r in kept}
    members: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["kind"] == "DATASET":
            members.setdefault(table[_key(r)], []).append(r)
    graph_nodes = []
    for r in kept:
        me = f"{r['kind'].lower()}:{_key(r)}"
        other = "dataset" if r["kind"] == "JOB" else "job"
        group = members.get(_key(r), [r]) if r["kind"] == "DATASET" else [r]  # all its names
        links = [(k, side) for g in group for side in ("inputs", "outputs") for k in g[side]]
        ends = {side: sorted({i for k, s in links if s == side
                              if (i := f"{other}:{table.get(_key(k), _key(k))}") in ids})
                for side in ("inputs", "outputs")}
        graph_nodes.append({
            "id": me, "type": r["kind"], "data": _data(models[me], r, group),
            "inEdges": [{"origin": o, "destination": me} for o in ends["inputs"]],
            "outEdges": [{"origin": me, "destination": d} for d in ends["outputs"]]})
    return {"graph": graph_nodes}


def _key(r: dict[str, Any]) -> str:
    return f"{r['namespace']}:{r['name']}"


def _ident(r: dict[str, Any]) -> dict[str, str]:
    return {"namespace": r["namespace"], "name": r["name"]}


def _tables(rows: list[dict[str, Any]], asked: str | None) -> dict[str, str]:
    """Each dataset name of the walk's answer to the name its table is listed under: a table
    reached under several names (symlinks, declared aliases) is one node, under the name asked
    for, else the name carrying the symlinks (docs/graph-model.md, "Symlinks")."""
    names = {_key(r): r for r in rows if r["kind"] == "DATASET"}
    table: dict[str, str] = {}
    for key in sorted(names):
        if key in table:
            continue
        group, todo = {key}, [key]
        while todo:  # the names of this table that the answer holds
            for other in names[todo.pop()]["otherNames"]:
                if other in names and other not in group:
                    group.add(other)
                    todo.append(other)
        rep = (asked if asked in group else
               min(group, key=lambda k: (not names[k]["canonical"], k)))
        table.update(dict.fromkeys(group, rep))
    return table


def column_lineage(graph: Graph, node_id: str, depth: int | None = None,
                   with_downstream: bool = False, include_retired: bool = False) -> dict[str, Any]:
    """Marquez's ``/api/v1/column-lineage`` answer for a datasetField, dataset or job node id,
    read in one transaction."""
    return graph.reading(lambda g: _column_lineage(g, node_id, depth, with_downstream,
                                                   include_retired))


def _column_lineage(graph: Graph, node_id: str, depth: int | None, with_downstream: bool,
                    include_retired: bool) -> dict[str, Any]:
    node = parse_node_id(graph, node_id)
    if node.field is not None:
        starts = [{"namespace": node.namespace, "dataset": node.name, "name": node.field}]
    elif node.kind == "job":  # the fields it writes, as Marquez's ColumnLineageService
        starts = graph.read("lookup/job_output_columns", namespace=node.namespace, name=node.name)
    else:
        starts = graph.read("lookup/dataset_columns", namespace=node.namespace, name=node.name)
    rows = graph.read("lineage/columns", columns=starts, depth=clamp_depth(depth),
                      withDownstream=with_downstream, includeRetired=include_retired
                      ) if starts else []

    def fid(ns: str, ds: str, f: str) -> str:
        return f"datasetField:{ns}:{ds}:{f}"

    ids = {fid(r["namespace"], r["dataset"], r["field"]) for r in rows}
    out_edges: dict[str, list[str]] = {}
    nodes: list[dict[str, Any]] = []
    for r in rows:
        me = fid(r["namespace"], r["dataset"], r["field"])
        # one entry per input field, as Marquez answers, with every transformation between the
        # two fields (strongest first; the entry's job and times are those of the strongest)
        by_field: dict[str, list[dict[str, Any]]] = {}
        for i in r["inputs"]:
            key = fid(i["namespace"], i["dataset"], i["field"])
            if key in ids:
                by_field.setdefault(key, []).append(i)
        entries = []
        for key in sorted(by_field, key=lambda k: strength(by_field[k][0])):
            ways = sorted(by_field[key], key=strength)
            out_edges.setdefault(key, []).append(me)
            head = ways[0]
            entries.append({
                "namespace": head["namespace"], "dataset": head["dataset"], "datasetVersion": None,
                "field": head["field"], "transformationDescription": head["description"],
                "transformationType": head["subtype"],
                "transformations": [{"type": w["type"], "subtype": w["subtype"],
                                     "masking": bool(w["masking"]), "description": w["description"],
                                     "job": f"{w['jobNamespace']}:{w['job']}"}
                                    for w in dict((strength(w), w) for w in ways).values()],
                "job": f"{head['jobNamespace']}:{head['job']}", "lastSeen": _iso(head["lastSeen"])})
        first = entries[0] if entries else None
        nodes.append({"id": me, "type": "DATASET_FIELD", "data": {
            "namespace": r["namespace"], "dataset": r["dataset"], "datasetVersion": None,
            "field": r["field"],
            # a column of no known type: '' as Marquez answers for a field only column lineage
            # names (ColumnLineageNodeData), never null (marquez-java refuses it)
            "fieldType": r["fieldType"] or "",
            "transformationDescription": first["transformationDescription"] if first else None,
            "transformationType": first["transformationType"] if first else None,
            "inputFields": entries,
        }, "inEdges": [{"origin": o, "destination": me} for o in sorted(by_field)]})
    for n in nodes:
        me = n["id"]
        n["outEdges"] = [{"origin": me, "destination": d} for d in sorted(set(out_edges.get(me, [])))]
    return {"graph": nodes}


def _data(model: dict[str, Any], r: dict[str, Any], names: list[dict[str, Any]]
          ) -> dict[str, Any]:
    """A node's ``data``: Marquez's model of it; ``names``: the rows of all of a table's names,
    whose fields stand in when the listed name has no schema of its own (its fields are those of
    the listed name's written schema, else another name's, else the columns readers named)."""
    if r["kind"] == "JOB" or r["hasSchema"]:
        return model
    fields: list[dict[str, Any]] = next((n["fields"] for n in sorted([r, *names], key=lambda n: (
        not n["hasSchema"], not n["fields"], n is not r))), [])
    tags = {f["name"]: f["tags"] for f in model["fields"]}
    return {**model, "fields": [{"name": f["name"], "type": f["type"],
                                 "tags": tags.get(f["name"], []), "description": f["description"]}
                                for f in fields]}


def _iso(value: Any) -> str | None:
    """A time as Marquez's answers write it: Python's ISO form (the walk's ISO text, ``Z`` for
    UTC, becomes ``+00:00``, as the driver's DateTime did)."""
    if value is None:
        return None
    native: Any = (native_time(value) if isinstance(value, str) or hasattr(value, "to_native")
                   else value)
    return native.isoformat() if hasattr(native, "isoformat") else str(native)
