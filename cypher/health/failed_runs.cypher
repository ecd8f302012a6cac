// Answers: the latest failed runs, each with what its failure holds back: the datasets its job
// writes and the jobs that read them.
// Param $limit: how many runs
// Returns: job, runId, failedAt, errorMessage, outputs (namespace:name), readers (jobs reading those outputs)
// :param limit => 10
MATCH (r:Run {state: 'FAIL'})-[:OF]->(j:Job) WHERE j.deleted IS NULL
WITH r, j ORDER BY r.failTime DESC LIMIT $limit
RETURN j.namespace + ':' + j.name AS job, r.runId AS runId, r.failTime AS failedAt,
       r.errorMessage AS errorMessage,
       [(j)-[w:WRITES]->(d:Dataset) WHERE w.retired IS NULL | d.namespace + ':' + d.name] AS outputs,
       COLLECT { MATCH (j)-[w:WRITES]->(:Dataset)<-[x:READS]-(k:Job)
                 WHERE w.retired IS NULL AND x.retired IS NULL AND k <> j
                 RETURN DISTINCT k.namespace + ':' + k.name } AS readers
