// Answers: the model versions trained on data of these datasets: each write of a dataset of type
// MODEL (datasetType facet) by a run that read one of them. A version is the write's version
// (the version facet), else its run. trainedOn lists the input columns the version's column
// lineage names ('namespace:dataset.column'); null when that lineage was not stated (then which
// columns trained it is unknown). Versions are immutable: a version trained on a dataset stays
// trained on it, whatever its job reads today (retired lineage does not apply).
// Param $datasets: list of 'namespace:name'
// Starts from the models (few, by the dataset_type index), not from the datasets: a daily job's
// input has a READ edge per run.
// Returns: sourceNamespace, sourceName, inputVersion (the version read), namespace, name (the model), version, runId, job, state, trainedAt (ISO text: the run's end, else its last event), trainedOn
// :param datasets => ['file:/tmp/shop/ml/user_features']
MATCH (m:Dataset {datasetType: 'MODEL'})
WHERE m.deleted IS NULL
MATCH (m)<-[w:WROTE]-(r:Run)-[rd:READ]->(src:Dataset)
WHERE src.namespace + ':' + src.name IN $datasets
RETURN src.namespace AS sourceNamespace, src.name AS sourceName, rd.version AS inputVersion,
       m.namespace AS namespace, m.name AS name, coalesce(w.version, r.runId) AS version,
       r.runId AS runId, r.jobNamespace + ':' + r.jobName AS job, r.state AS state,
       toString(coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime, w.lastSeen)) AS trainedAt,
       w.trainedOn AS trainedOn
ORDER BY name, trainedAt, version
