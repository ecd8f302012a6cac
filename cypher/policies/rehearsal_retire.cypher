// Answers: in a rehearsal of a change (lineage check --policies, rolled back), retires the column
// edges a proposed job no longer states into its outputs: a dbt model's run states its whole
// column lineage, so the job's edges into those datasets that its new (current) lineage lacks
// are gone once the change is deployed. Run only inside a transaction that is rolled back.
// Param $jobs: the proposed jobs, each {namespace, name, outputs: [{namespace, name}]}
// Param $at: the rehearsal's time (ISO 8601)
// Returns: retired (how many edges)
// :param jobs => []
// :param at => '2026-11-27T09:00:00Z'
UNWIND $jobs AS j
MATCH (job:Job {namespace: j.namespace, name: j.name})
UNWIND j.outputs AS o
MATCH (:Dataset {namespace: o.namespace, name: o.name})-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
WHERE e.jobNamespace = job.namespace AND e.jobName = job.name AND e.alias IS NULL
  AND e.retired IS NULL AND coalesce(e.lineageDigest, '') <> coalesce(job.lineageDigest, '')
SET e.retired = true, e.retiredAt = datetime($at)
RETURN count(e) AS retired
