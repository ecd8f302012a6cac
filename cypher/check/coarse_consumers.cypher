// Answers: which datasets consume the given datasets without column lineage (a coarse edge learnt
// from a job's inputs x outputs): whether they use a given column is unknown.
// Param $datasets: list of {namespace, name}
// Param $asOf: the lineage current at this time (edges first seen by then and not retired by then); null for now
// Param $includeRetired: true to walk retired lineage too (edges the job's latest completed run no longer states)
// Returns: source, namespace, name, job, lastRun, owners
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'marts.revenue_by_country'}]
// :param asOf => null
// :param includeRetired => false
UNWIND $datasets AS key
MATCH (given:Dataset {namespace: key.namespace, name: key.name})
USING INDEX SEEK given:Dataset(namespace, name)
// the dataset under each of its names (symlinks: docs/graph-model.md)
CALL (given) {
  RETURN given AS src
  UNION
  MATCH (given)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(src:Dataset)
  RETURN src
}
MATCH (src)<-[e:DERIVED_FROM {coarse: true}]-(d:Dataset)
WHERE ($asOf IS NULL OR e.firstSeen <= $asOf) AND ($includeRetired OR CASE WHEN $asOf IS NULL THEN e.retired IS NULL ELSE coalesce(e.retiredAt > $asOf, true) END)
OPTIONAL CALL (e) {
  MATCH (:Job {namespace: e.jobNamespace, name: e.jobName})<-[:OF]-(r:Run) WHERE r.state IS NOT NULL
  RETURN r.stateTime AS lastRun ORDER BY r.stateTime DESC LIMIT 1
}
WITH DISTINCT given.namespace + ':' + given.name AS source, d, e, lastRun
RETURN source, d.namespace AS namespace, d.name AS name, e.jobNamespace + ':' + e.jobName AS job,
       lastRun, coalesce(d.owners, []) AS owners
ORDER BY source, namespace, name
