// Answers: what a "what changed" answer compares: the runs of a job, or the runs that wrote a
// dataset, newest first (by start), and where the walk upstream begins: a dataset itself, or a
// job's inputs (and its outputs, whose schema is its own).
// Param $kind: 'job' or 'dataset'
// Param $namespace: the job's or dataset's namespace
// Param $name: its name
// Param $max: at most this many runs, newest first
// Returns: found, runs (runId, job, state, start, end), inputs, outputs (a job's current and retired READS and WRITES: namespace, name), jobs (the jobs of the subject: the job, or the dataset's writers: 'namespace:name') (one row)
// :param kind => 'job'
// :param namespace => 'shop'
// :param name => 'marts_revenue_by_country'
// :param max => 50
OPTIONAL MATCH (j:Job {namespace: $namespace, name: $name}) WHERE $kind = 'job'
OPTIONAL MATCH (d:Dataset {namespace: $namespace, name: $name}) WHERE $kind = 'dataset'
WITH j, d,
     CASE WHEN j IS NOT NULL THEN COLLECT {
            MATCH (r:Run)-[:OF]->(j)
            WITH r ORDER BY coalesce(r.startTime, r.runningTime, r.stateTime) DESC, r.runId DESC
            LIMIT $max RETURN r }
          WHEN d IS NOT NULL THEN COLLECT {
            MATCH (r:Run)-[:WROTE]->(d) WITH DISTINCT r
            WITH r ORDER BY coalesce(r.startTime, r.runningTime, r.stateTime) DESC, r.runId DESC
            LIMIT $max RETURN r }
          ELSE [] END AS found
CALL (found) {
  UNWIND found AS r
  WITH r, coalesce(r.startTime, r.runningTime, r.stateTime) AS start
  ORDER BY start DESC, r.runId DESC LIMIT $max
  MATCH (r)-[:OF]->(of:Job)
  RETURN collect({runId: r.runId, job: of.namespace + ':' + of.name, state: r.state, start: start,
                  end: coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime)}) AS runs
}
RETURN j IS NOT NULL OR d IS NOT NULL AS found, runs,
       [(j)-[:READS]->(i:Dataset) | {namespace: i.namespace, name: i.name}] AS inputs,
       [(j)-[:WRITES]->(o:Dataset) | {namespace: o.namespace, name: o.name}] AS outputs,
       CASE WHEN j IS NOT NULL THEN [j.namespace + ':' + j.name]
            ELSE [(w:Job)-[:WRITES]->(d) | w.namespace + ':' + w.name] END AS jobs
