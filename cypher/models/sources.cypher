// Answers: what an audit needs of each dataset a model's training data came from: its owners,
// tags (the dataset's and its columns'), and the latest run that wrote it by a time (the version
// it wrote, its job, state and times).
// Param $datasets: list of {namespace, name}
// Param $asOf: the time the model was trained (ISO text); writes after it are not counted
// Returns: namespace, name, owners, tags, columnTags ('column=tag'), datasetType, lastWrite ({runId, job, state, start, end, version}, or null)
// :param datasets => [{namespace: 'file', name: '/tmp/shop/raw/users'}]
// :param asOf => '2030-01-01T00:00:00Z'
UNWIND $datasets AS key
MATCH (d:Dataset {namespace: key.namespace, name: key.name})
OPTIONAL CALL (d) {
  MATCH (r:Run)-[w:WROTE]->(d)
  WHERE r.state IS NOT NULL AND ($asOf IS NULL OR coalesce(r.startTime, w.firstSeen) <= datetime($asOf))
  RETURN r, w ORDER BY coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) DESC LIMIT 1
}
RETURN d.namespace AS namespace, d.name AS name, coalesce(d.owners, []) AS owners,
       coalesce(d.tags, []) + [(d)-[:TAGGED]->(t:Tag) | t.name] AS tags,
       [t IN coalesce(d.fieldTags, []) | split(t, '\u001f')[0] + '=' + split(t, '\u001f')[1]]
         + [(d)-[:HAS_COLUMN]->(c:Column)-[:TAGGED]->(t:Tag) | c.name + '=' + t.name] AS columnTags,
       d.datasetType AS datasetType,
       CASE WHEN r IS NULL THEN null ELSE {runId: r.runId, job: r.jobNamespace + ':' + r.jobName,
            state: r.state, start: toString(r.startTime),
            end: toString(coalesce(r.completeTime, r.failTime, r.abortTime)), version: w.version} END AS lastWrite
