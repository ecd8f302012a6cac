// Answers: which datasets consume the given datasets without column lineage (a coarse edge learnt
// from a job's inputs x outputs): whether they use a given column is unknown.
// Param $datasets: list of {namespace, name}
// Param $asOf: only edges first seen at or before this time; null for now
// Returns: source, namespace, name, job, lastRun, owners
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'marts.revenue_by_country'}]
// :param asOf => null
UNWIND $datasets AS key
MATCH (src:Dataset {namespace: key.namespace, name: key.name})<-[e:DERIVED_FROM {coarse: true}]-(d:Dataset)
USING INDEX SEEK src:Dataset(namespace, name)
WHERE $asOf IS NULL OR e.firstSeen <= $asOf
OPTIONAL CALL (e) {
  MATCH (:Job {namespace: e.jobNamespace, name: e.jobName})<-[:OF]-(r:Run) WHERE r.state IS NOT NULL
  RETURN r.stateTime AS lastRun ORDER BY r.stateTime DESC LIMIT 1
}
RETURN src.namespace + ':' + src.name AS source, d.namespace AS namespace, d.name AS name,
       e.jobNamespace + ':' + e.jobName AS job, lastRun, coalesce(d.owners, []) AS owners
ORDER BY source, namespace, name
