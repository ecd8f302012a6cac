// Answers: the runs that started each run of a rerun plan, nearest first (an Airflow task run,
// then its DAG run; a dbt invocation, then the task that ran it), with their jobs' integration,
// so that a plan groups its reruns by what an orchestrator reruns.
// Param $runs: list of run UUIDs
// Returns: runId, jobName (the run's job's name), ancestors (nearest first: runId, job, jobName, integration, jobType, nominalStart, start)
// :param runs => ['54e0d042-cf52-5eb7-9829-674f44f889e2']
UNWIND $runs AS id
MATCH (r:Run {runId: id})
OPTIONAL MATCH (r)-[:OF]->(j:Job)
RETURN r.runId AS runId, j.name AS jobName,
       COLLECT { MATCH up = (r)-[:PARENT]->{1,5}(p:Run)
                 OPTIONAL MATCH (p)-[:OF]->(pj:Job)
                 RETURN {runId: p.runId, job: pj.namespace + ':' + pj.name, jobName: pj.name,
                         integration: pj.integration,
                         jobType: pj.jobType, nominalStart: p.nominalStartTime,
                         start: coalesce(p.startTime, p.stateTime)}
                 ORDER BY length(up) } AS ancestors
