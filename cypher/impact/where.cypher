// Answers: GDPR "where is this column": every column the data of a column reaches, labelled by
// the most exposing way it gets there. Each edge has a level, from the facts its producer
// reported, never from the words of a description: 5 raw (DIRECT IDENTITY, masking not true),
// 4 unknown (no transformation reported, or no subtype: possibly raw), 3 transformed (another
// DIRECT subtype), 2 masked (masking: true), 1 aggregated (DIRECT AGGREGATION), 0 influence
// (INDIRECT: filter, join, group by ...).
// A path is as exposing as its weakest step; a column's label is its most exposing path,
// found as the highest level L whose walk over edges of level >= L reaches it.
// Param $namespace: namespace of the column's dataset
// Param $dataset: name of the column's dataset
// Param $column: name of the column, e.g. email
// Param $depth: maximum number of hops (1 to 50)
// Param $asOf: the lineage current at this time (edges first seen by then and not retired by then); null for now
// Param $includeRetired: true to walk retired lineage too (edges the job's latest completed run no longer states)
// Returns: namespace, dataset, column, level, label, distance (symlink hops not counted), steps (source first: from, to, job, run, type, subtype, masking, description, lastSeen, alias, retired: null when current, summary: when the step was last seen before the detailed window of retention, its runs folded, lastRunId, lastRunState, else null; times as ISO text), lastFlowed (ISO text)
// :param namespace => 'postgres://warehouse:5432'
// :param dataset => 'raw.users'
// :param column => 'email'
// :param depth => 20
// :param asOf => null
// :param includeRetired => false
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead: 1.3 s instead of 3 ms on 1,000 datasets)
CYPHER statefulShortestPlanningMode=all_if_possible
MATCH (src:Column {namespace: $namespace, dataset: $dataset, name: $column})
USING INDEX SEEK src:Column(namespace, dataset, name)
UNWIND [5, 4, 3, 2, 1, 0] AS level
CALL (src, level) {
  MATCH p = ANY SHORTEST (src)(()<-[e:DERIVED_FROM WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END) AND
      CASE WHEN e.type = 'INDIRECT' THEN 0
           WHEN e.subtype = 'AGGREGATION' THEN 1
           WHEN e.masking = true THEN 2
           WHEN e.type = 'DIRECT' AND e.subtype = 'IDENTITY' THEN 5
           WHEN e.type = 'UNKNOWN' OR e.subtype = 'UNKNOWN' THEN 4
           ELSE 3 END >= level]-()){1,50}(n)
  WHERE n <> src AND size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
  RETURN n, p
}
WITH n, level, p ORDER BY level DESC, size([r IN relationships(p) WHERE r.alias IS NULL])
WITH n, collect({level: level, p: p})[0] AS best
WITH n, best.level AS level, best.p AS p
// a column of a soft-deleted dataset is walked through, never listed (docs/graph-model.md)
WITH * WHERE NOT EXISTS { MATCH (x:Dataset {namespace: n.namespace, name: n.dataset}) WHERE x.deleted IS NOT NULL }
// an edge stamped with its job's current lineage was last seen, in that lineage's latest run, when
// that lineage was (see docs/graph-model.md: repeated lineage only moves the job's lineageLastSeen)
WITH n, level, p, [e IN relationships(p) | {e: e, job: COLLECT {
       MATCH (j:Job {namespace: e.jobNamespace, name: e.jobName})
       WHERE j.lineageDigest = e.lineageDigest
       RETURN j {.lineageLastSeen, .lineageRunId} }[0]}] AS hops
WITH n, level, p, [h IN hops | {e: h.e,
       lastSeen: CASE WHEN h.job.lineageLastSeen > h.e.lastSeen THEN h.job.lineageLastSeen ELSE h.e.lastSeen END,
       run: CASE WHEN h.job.lineageLastSeen >= h.e.lastSeen AND h.job.lineageRunId IS NOT NULL
            THEN h.job.lineageRunId ELSE h.e.runId END}] AS hops,
     // the detailed window's start at the last retention run: older lineage is summary lineage
     COLLECT { MATCH (k:Retention {key: 'graph'}) RETURN k.detailedSince }[0] AS detailedSince
RETURN n.namespace AS namespace, n.dataset AS dataset, n.name AS column, level,
       ['influence', 'aggregated', 'masked', 'transformed', 'unknown', 'raw'][level] AS label,
       size([r IN relationships(p) WHERE r.alias IS NULL]) AS distance,
       [h IN hops | {
          from: endNode(h.e).namespace + ':' + endNode(h.e).dataset + '.' + endNode(h.e).name,
          to: startNode(h.e).namespace + ':' + startNode(h.e).dataset + '.' + startNode(h.e).name,
          jobNamespace: h.e.jobNamespace, job: h.e.jobName, run: h.run, type: h.e.type,
          subtype: h.e.subtype, masking: h.e.masking, description: h.e.description,
          lastSeen: toString(h.lastSeen), alias: coalesce(h.e.alias, false),
          retired: CASE WHEN h.e.retired THEN {job: h.e.jobNamespace + ':' + h.e.jobName, lastRunId: h.e.lastRunId, retiredAt: toString(h.e.retiredAt)} END,
          summary: CASE WHEN h.lastSeen < detailedSince THEN {runs: coalesce(h.e.`summary.runs`, 0), lastRunId: coalesce(h.e.`summary.lastRunId`, h.e.runId), lastRunState: h.e.`summary.lastRunState`} END}] AS steps,
       toString(reduce(m = null, h IN hops |
              CASE WHEN m IS NULL OR h.lastSeen < m THEN h.lastSeen ELSE m END)) AS lastFlowed
ORDER BY level DESC, distance, namespace, dataset, column
