// Answers: hides a dataset, a job, or a namespace with its datasets and jobs from Marquez's
// listings (Marquez's soft delete); each comes back once an event the log took after the
// deletion reports it (cypher/ingest/datasets and jobs remove the mark).
// The lineage questions still see them: their history is kept.
// Param $kind: 'dataset', 'job' or 'namespace'
// Param $namespace: the namespace
// Param $name: the dataset's or job's name (null for a namespace)
// Param $at: when the API took the write (ISO 8601): a replay of the event log sets the same times
// Returns: deleted (how many nodes were hidden)
// :param kind => 'dataset'
// :param namespace => 'food_delivery'
// :param name => 'public.discounts'
// :param at => '2026-11-27T09:00:00Z'
CALL () {
  MATCH (n:Dataset {namespace: $namespace, name: $name}) WHERE $kind = 'dataset' RETURN n
  UNION
  MATCH (n:Job {namespace: $namespace, name: $name}) WHERE $kind = 'job' RETURN n
  UNION
  MATCH (n) WHERE $kind = 'namespace' AND (n:Dataset OR n:Job) AND n.namespace = $namespace RETURN n
  UNION
  WITH $kind AS kind WHERE kind = 'namespace'
  MERGE (n:Namespace {name: $namespace}) ON CREATE SET n.createdAt = datetime($at)
  RETURN n
}
// a dataset or job an event reported that the log took after the deletion stays shown, whatever
// order a worker met the two in (cypher/ingest/datasets and jobs)
SET n.deleted = CASE WHEN n.takenAt > datetime($at) THEN n.deleted ELSE datetime($at) END
RETURN count(n.deleted) AS deleted
