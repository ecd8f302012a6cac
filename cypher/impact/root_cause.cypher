// Answers: root-cause evidence upstream of broken datasets: each dataset they derive from (and
// themselves, at distance 0), once at its shortest distance, with what may have gone wrong there:
// the latest run of each job that writes it (failed or aborted, with the error message and the
// runs that started it), its
// successful writes and the last two successful reads by its consumer on the path (to judge staleness),
// failed data-quality assertions,
// and schema changes (columns added after the dataset's producers first wrote a schema, or gone
// from what they write).
// Param $datasets: list of {namespace, name} to start from (the broken ones)
// Param $depth: maximum number of DERIVED_FROM hops upstream (1 to 50)
// Param $asOf: only lineage and runs seen at or before this time; null for now
// Param $includeRetired: true to walk retired lineage too (edges the job's latest completed run no longer states)
// Returns: namespace, name, distance, path, producers, latestRuns, successes, reads, failedAssertions, added, dropped, sources; every time as ISO text
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'dashboards.revenue'}]
// :param depth => 20
// :param asOf => null
// :param includeRetired => false
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead: 1.3 s instead of 3 ms on 1,000 datasets)
CYPHER statefulShortestPlanningMode=all_if_possible
UNWIND $datasets AS key
MATCH (dst:Dataset {namespace: key.namespace, name: key.name})
USING INDEX SEEK dst:Dataset(namespace, name)
CALL (dst) {
  RETURN dst AS n, 0 AS distance, [dst.namespace + ':' + dst.name] AS path, null AS prev
  UNION
  MATCH p = ANY SHORTEST (dst)(()-[e:DERIVED_FROM WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END)]->()){1,50}(n)
  WHERE n <> dst AND size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
  RETURN n, size([r IN relationships(p) WHERE r.alias IS NULL]) AS distance, [x IN nodes(p) | x.namespace + ':' + x.name] AS path,
         nodes(p)[-2] AS prev
}
WITH n, distance, path, prev ORDER BY distance
WITH n, collect({path: path, prev: prev})[0] AS nearest, min(distance) AS distance
WITH n, nearest.path AS path, nearest.prev AS prev, distance
// a soft-deleted dataset is walked through, never a candidate (docs/graph-model.md)
WHERE n.deleted IS NULL
CALL (n) {
  OPTIONAL MATCH (j:Job)-[:WRITES]->(n)
  OPTIONAL CALL (j) {
    MATCH (r:Run)-[:OF]->(j)
    WHERE r.state IS NOT NULL AND ($asOf IS NULL OR r.stateTime <= $asOf)
    RETURN r ORDER BY r.stateTime DESC LIMIT 1
  }
  WITH j, r WHERE j IS NOT NULL
  // and the runs that started it, nearest first (an Airflow task run, then its DAG run)
  RETURN collect({job: j.namespace + ':' + j.name, runId: r.runId, state: r.state,
                  time: toString(r.stateTime), errorMessage: r.errorMessage,
                  errorLanguage: r.errorLanguage,
                  parents: COLLECT { MATCH up = (r)-[:PARENT]->{1,4}(p:Run)
                                     OPTIONAL MATCH (p)-[:OF]->(pj:Job)
                                     RETURN {job: pj.namespace + ':' + pj.name, runId: p.runId,
                                             state: p.state} ORDER BY length(up) }})
         AS latestRuns, count(j) AS producers
}
CALL (n) {
  // only completed runs that wrote this dataset (not every run of a job that writes it)
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(n)
  WITH DISTINCT r WHERE r IS NULL OR $asOf IS NULL OR r.completeTime <= $asOf
  WITH r ORDER BY r.completeTime DESC LIMIT 30
  RETURN collect(toString(r.completeTime)) AS successes
}
CALL (n, prev) {
  // the last two successful reads of it by its consumer on the way to the broken dataset (a
  // completed run that read it and wrote the dataset after it on the path), both by the same
  // job: reads by two jobs of one night say nothing of staleness. Its reads latest first, each
  // checked until one passes (a source read by hundreds of runs costs few checks); OPTIONAL: a
  // dataset without such reads is still examined
  OPTIONAL CALL (n, prev) {
    MATCH (r:Run {state: 'COMPLETE'})-[:READ]->(n)
    WHERE prev IS NOT NULL AND ($asOf IS NULL OR r.completeTime <= $asOf)
    WITH DISTINCT r ORDER BY r.completeTime DESC
    WITH r WHERE EXISTS { (r)-[:WROTE]->(prev) }
    RETURN r LIMIT 1
  }
  OPTIONAL CALL (r, n, prev) {
    MATCH (r)-[:OF]->(:Job)<-[:OF]-(before:Run {state: 'COMPLETE'})-[:READ]->(n)
    WHERE before.completeTime < r.completeTime AND EXISTS { (before)-[:WROTE]->(prev) }
    RETURN before ORDER BY before.completeTime DESC LIMIT 1
  }
  RETURN [x IN [r, before] WHERE x IS NOT NULL | toString(x.completeTime)] AS reads
}
CALL (n) {
  // only schemas the dataset's producers wrote: a reader's schema may be pruned to what it read
  // a column stamped with the dataset's current schema was last written when that schema was
  // (see docs/graph-model.md: a repeated schema only moves the dataset's schemaLastSeen)
  OPTIONAL MATCH (n)-[:HAS_COLUMN]->(c:Column) WHERE c.writtenLastSeen IS NOT NULL
  WITH collect(c) AS found
  WITH [c IN found | {name: c.name, first: c.writtenFirstSeen,
        last: CASE WHEN c.schemaDigest = n.schemaDigest AND n.schemaLastSeen > c.writtenLastSeen
              THEN n.schemaLastSeen ELSE c.writtenLastSeen END}] AS cols
  WITH cols, reduce(m = null, c IN cols | CASE WHEN m IS NULL OR c.first < m THEN c.first ELSE m END) AS first,
       reduce(m = null, c IN cols | CASE WHEN m IS NULL OR c.last > m THEN c.last ELSE m END) AS last
  RETURN [c IN cols WHERE c.first > first AND ($asOf IS NULL OR c.first <= $asOf) |
            {column: c.name, time: toString(c.first)}] AS added,
         [c IN cols WHERE c.last < last | {column: c.name, lastSeen: toString(c.last), time: toString(last)}] AS dropped
}
RETURN n.namespace AS namespace, n.name AS name, distance, path, producers, latestRuns, successes, reads,
       [(n)-[s:DERIVED_FROM WHERE ($asOf IS NULL OR s.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN s.retired IS NULL ELSE coalesce(s.retiredAt > $asOf, true) END)]->(m:Dataset) | m.namespace + ':' + m.name] AS sources,
       coalesce(n.failedAssertions, []) AS failedAssertions, added, dropped
ORDER BY distance, namespace, name
