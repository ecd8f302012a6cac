// Answers: the task runs of each parent run (an Airflow DAG run's tasks), with their latest
// state, so that a rerun plan clears the failed ones too (a task left failed keeps the tasks
// after it in the DAG from running: Airflow marks them upstream_failed) and knows the names a
// task's clear command could also find.
// Param $parents: list of parent run UUIDs
// Returns: parentRunId, jobName (the task run's job's name), runId, state
// :param parents => ['54e0d042-cf52-5eb7-9829-674f44f889e2']
UNWIND $parents AS parentId
MATCH (p:Run {runId: parentId})<-[:PARENT]-(t:Run)-[:OF]->(j:Job)
RETURN parentId AS parentRunId, j.name AS jobName, t.runId AS runId, t.state AS state
ORDER BY jobName, runId
