// Answers: nothing; it removes the sample a worker writes before its first batch
// (ingest/sample_events.py, ingest.pipeline.plan_ahead): every dataset and job the sample names in
// its namespace, their columns, and its runs. The namespace is the sample's alone
// (docs/graph-model.md, "Nodes").
// Param $namespace: the sample's namespace (ingest.sample_events.NS)
// Param $datasets: the names of the datasets it names
// Param $jobs: the names of the jobs it names
// Param $runs: its run ids
// Returns: removed (how many nodes)
// :param namespace => 'lineage-graph://rehearsal'
// :param datasets => ['source', 'source_alias', 'target', 'old_target', 'elsewhere', 'declared']
// :param jobs => ['job', 'parent', 'declaring', 'next_job']
// :param runs => ['00000000-0000-4000-8000-00000000a001', '00000000-0000-4000-8000-00000000a002']
CALL () {
  MATCH (n:Dataset) WHERE n.namespace = $namespace AND n.name IN $datasets RETURN n
  UNION
  MATCH (n:Column) WHERE n.namespace = $namespace AND n.dataset IN $datasets AND n.name IS NOT NULL
  RETURN n
  UNION
  MATCH (n:Job) WHERE n.namespace = $namespace AND n.name IN $jobs RETURN n
  UNION
  MATCH (n:Run) WHERE n.runId IN $runs RETURN n
}
DETACH DELETE n
RETURN count(*) AS removed
