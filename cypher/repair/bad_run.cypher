// Answers: where bad data began for a rerun plan: a run and its child runs (a DAG run's tasks,
// an application's queries), with what they wrote (and the versions) and what their jobs write,
// and when each ended.
// Param $runId: the bad run's UUID
// Returns: runs (the run first, then its child runs down to 5 levels: runId, job, state, start, end, wrote: [{namespace, name, version}], writes: [{namespace, name}] its job's current outputs) (or no row if unknown)
// :param runId => '54e0d042-cf52-5eb7-9829-674f44f889e2'
MATCH (r:Run {runId: toLower($runId)})
WITH r, COLLECT { MATCH (c:Run)(()-[:PARENT]->()){1,5}(r) RETURN DISTINCT c } AS children
UNWIND [r] + children AS x
OPTIONAL MATCH (x)-[:OF]->(j:Job)
RETURN collect({runId: x.runId, job: j.namespace + ':' + j.name, state: x.state,
                start: coalesce(x.startTime, x.runningTime, x.stateTime),
                end: coalesce(x.completeTime, x.failTime, x.abortTime, x.stateTime),
                wrote: [(x)-[w:WROTE]->(d:Dataset) | {namespace: d.namespace, name: d.name, version: w.version}],
                writes: [(j)-[w:WRITES WHERE w.retired IS NULL]->(d:Dataset) | {namespace: d.namespace, name: d.name}]}) AS runs
