// Answers: the versions of the models named $name: a dataset of type MODEL whose name is $name
// or ends with '/' + $name (MLflow's registered model churn is models/churn), each write of it
// a version (the version facet, else the run), newest first, with the run that trained it and
// what that run read.
// Param $name: the model's name, e.g. churn or models/churn
// Param $namespace: the model's namespace, or null for any
// Returns: namespace, name, version, runId, job, state, startTime, trainedAt (ISO text), trainedOn, runFacets (the run's mlflow* facets as JSON text), model (the model's mlflowModel facet as JSON text), registry (its mlflowRegistry facet: the registry as last synced), inputs ({namespace, name, version})
// :param name => 'churn'
// :param namespace => null
MATCH (m:Dataset {datasetType: 'MODEL'})
WHERE (m.name = $name OR m.name ENDS WITH '/' + $name) AND ($namespace IS NULL OR m.namespace = $namespace)
  AND m.deleted IS NULL
MATCH (r:Run)-[w:WROTE]->(m)
RETURN m.namespace AS namespace, m.name AS name, coalesce(w.version, r.runId) AS version,
       r.runId AS runId, r.jobNamespace + ':' + r.jobName AS job, r.state AS state,
       toString(r.startTime) AS startTime,
       toString(coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime, w.lastSeen)) AS trainedAt,
       w.trainedOn AS trainedOn,
       {params: r.`facet.mlflowParams`, metrics: r.`facet.mlflowMetrics`, run: r.`facet.mlflowRun`} AS runFacets,
       m.`outputFacet.mlflowModel` AS model, m.`facet.mlflowRegistry` AS registry,
       [(r)-[x:READ]->(d:Dataset) | {namespace: d.namespace, name: d.name, version: x.version}] AS inputs
ORDER BY trainedAt DESC, version DESC
