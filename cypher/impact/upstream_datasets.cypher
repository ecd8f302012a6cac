// Answers: upstream lineage of a dataset: every dataset it derives from, up to $depth
// DERIVED_FROM hops, each once at its shortest distance, with the path and the job of the step.
// Param $namespace: namespace of the dataset
// Param $name: name of the dataset
// Param $depth: maximum number of hops (1 to 50)
// Param $asOf: the lineage current at this time (edges first seen by then and not retired by then); null for now
// Param $includeRetired: true to walk retired lineage too (edges the job's latest completed run no longer states)
// Returns: namespace, name, distance, path (the dataset first, sources last), job, coarse, subtypes, lastSeen (ISO text), owners, kind (dataset, or job: a job of a hand-off), basis (explicit, flow, boundary or alias: docs/graph-model.md), retired (the first retired edge on the path: job, lastRunId, retiredAt; null when current), summary (when the step's edge was last seen before the detailed window of retention: runs folded, lastRunId, lastRunState; docs/graph-model.md, "Retention"), otherNames (the dataset's other names: 'namespace:name')
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'dashboards.revenue'
// :param depth => 20
// :param asOf => null
// :param includeRetired => false
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead: 1.3 s instead of 3 ms on 1,000 datasets)
CYPHER statefulShortestPlanningMode=all_if_possible
MATCH (dst:Dataset {namespace: $namespace, name: $name})
USING INDEX SEEK dst:Dataset(namespace, name)
MATCH p = ANY SHORTEST (dst)((a)-[e:DERIVED_FROM WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END)]->(b)){1,50}(n)
WHERE n <> dst AND size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
WITH n, p, last(relationships(p)) AS via,
     // the detailed window's start at the last retention run: older lineage is summary lineage
     COLLECT { MATCH (k:Retention {key: 'graph'}) RETURN k.detailedSince }[0] AS detailedSince
// a soft-deleted node is walked through, never listed (docs/graph-model.md)
WHERE n.deleted IS NULL
RETURN n.namespace AS namespace, n.name AS name, size([r IN relationships(p) WHERE r.alias IS NULL]) AS distance,
       [x IN nodes(p) | x.namespace + ':' + x.name] AS path,
       via.jobNamespace AS jobNamespace, via.jobName AS job, via.coarse AS coarse,
       via.subtypes AS subtypes, toString(via.lastSeen) AS lastSeen, coalesce(n.owners, []) AS owners,
       CASE WHEN n:Job THEN 'job' ELSE 'dataset' END AS kind,
       CASE WHEN via.alias THEN 'alias' WHEN via.boundary THEN 'boundary' WHEN via.flow THEN 'flow'
            WHEN via.explicit THEN 'explicit' END AS basis,
       CASE WHEN via.lastSeen < detailedSince THEN {runs: coalesce(via.`summary.runs`, 0), lastRunId: coalesce(via.`summary.lastRunId`, via.runId), lastRunState: via.`summary.lastRunState`} END AS summary,
       [r IN relationships(p) WHERE r.retired | {job: r.jobNamespace + ':' + r.jobName, lastRunId: r.lastRunId, retiredAt: toString(r.retiredAt)}][0] AS retired,
       // its other names (symlinks and declared aliases, either way, also through a common alias: the
       // names its alias edges join, read from the SYMLINK edges they come from), so that a table
       // reached under two names by separate lineage paths is listed once (impact/answers.py)
       CASE WHEN n:Dataset THEN COLLECT { MATCH (n)-[:SYMLINK]-{1,4}(a:Dataset)
                                          WHERE a <> n RETURN DISTINCT a.namespace + ':' + a.name }
            ELSE [] END AS otherNames
ORDER BY distance, namespace, name
