// Answers: upstream lineage of a column: every column its data comes from, up to $depth
// DERIVED_FROM hops, each once at its shortest distance, with the transformation of the step.
// Param $namespace: namespace of the column's dataset
// Param $dataset: name of the column's dataset
// Param $column: name of the column
// Param $depth: maximum number of hops (1 to 50)
// Param $asOf: the lineage current at this time (edges first seen by then and not retired by then); null for now
// Param $includeRetired: true to walk retired lineage too (edges the job's latest completed run no longer states)
// Returns: namespace, dataset, column, distance, transformations (of the last hop, strongest first), path (the column first), job, type, subtype, masking, lastSeen (ISO text), alias (the column is another name of the previous one: a symlink), otherNames (the column under its table's other names: 'namespace:dataset.column'), retired (the first retired edge on the path; null when current), summary (when the last hop was last seen before the detailed window of retention: runs folded, lastRunId, lastRunState; docs/graph-model.md, "Retention")
// :param namespace => 'postgres://warehouse:5432'
// :param dataset => 'marts.revenue_by_country'
// :param column => 'revenue'
// :param depth => 20
// :param asOf => null
// :param includeRetired => false
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead: 1.3 s instead of 3 ms on 1,000 datasets)
CYPHER statefulShortestPlanningMode=all_if_possible
MATCH (dst:Column {namespace: $namespace, dataset: $dataset, name: $column})
USING INDEX SEEK dst:Column(namespace, dataset, name)
MATCH p = ANY SHORTEST (dst)(()-[e:DERIVED_FROM WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END)]->()){1,50}(n)
WHERE n <> dst AND size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
// the last hop: every edge between its two columns (one per job and transformation), strongest
// first (DIRECT IDENTITY, TRANSFORMATION, AGGREGATION, other DIRECT, UNKNOWN, then INDIRECT), so
// that its headline never depends on which parallel edge the walk happened to take
WITH n, p, nodes(p)[-2] AS prev
CALL (n, prev) {
  MATCH (prev)-[e:DERIVED_FROM]->(n) WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END)
  WITH e ORDER BY CASE e.type WHEN 'DIRECT' THEN
                    CASE e.subtype WHEN 'IDENTITY' THEN 0 WHEN 'TRANSFORMATION' THEN 1
                                   WHEN 'AGGREGATION' THEN 2 ELSE 3 END
                  WHEN 'UNKNOWN' THEN 4 ELSE 5 END, e.subtype, e.jobNamespace, e.jobName
  RETURN collect(e) AS hop
}
WITH n, p, hop[0] AS via, hop
// a column of a soft-deleted dataset is walked through, never listed (docs/graph-model.md)
WITH * WHERE NOT EXISTS { MATCH (x:Dataset {namespace: n.namespace, name: n.dataset}) WHERE x.deleted IS NOT NULL }
// an edge stamped with its job's current lineage was last seen when that lineage was (see
// docs/graph-model.md: repeated lineage only moves the job's lineageLastSeen)
WITH n, p, via, hop, COLLECT { MATCH (j:Job {namespace: via.jobNamespace, name: via.jobName})
                          WHERE j.lineageDigest = via.lineageDigest
                          RETURN j.lineageLastSeen }[0] AS current,
     // the detailed window's start at the last retention run: older lineage is summary lineage
     COLLECT { MATCH (k:Retention {key: 'graph'}) RETURN k.detailedSince }[0] AS detailedSince
WITH n, p, via, hop, CASE WHEN current > via.lastSeen THEN current ELSE via.lastSeen END AS lastSeen, detailedSince
RETURN n.namespace AS namespace, n.dataset AS dataset, n.name AS column, size([r IN relationships(p) WHERE r.alias IS NULL]) AS distance,
       [x IN nodes(p) | x.dataset + '.' + x.name] AS path,
       via.jobNamespace AS jobNamespace, via.jobName AS job, via.type AS type,
       via.subtype AS subtype, via.masking AS masking,
       [h IN hop | {type: h.type, subtype: h.subtype, masking: h.masking,
                    job: h.jobNamespace + ':' + h.jobName}] AS transformations,
       toString(lastSeen) AS lastSeen,
       CASE WHEN lastSeen < detailedSince THEN {runs: coalesce(via.`summary.runs`, 0), lastRunId: coalesce(via.`summary.lastRunId`, via.runId), lastRunState: via.`summary.lastRunState`} END AS summary,
       coalesce(via.alias, false) AS alias,
       // the column's other names (the same column under its table's other names), so that a
       // column reached under two names of its table by separate paths is listed once
       COLLECT { MATCH (d:Dataset)-[:HAS_COLUMN]->(n) MATCH (d)-[:SYMLINK]-{1,4}(a:Dataset) WHERE a <> d
                 RETURN DISTINCT a.namespace + ':' + a.name + '.' + n.name } AS otherNames,
       [r IN relationships(p) WHERE r.retired | {job: r.jobNamespace + ':' + r.jobName, lastRunId: r.lastRunId, retiredAt: toString(r.retiredAt)}][0] AS retired
ORDER BY distance, namespace, dataset, column
