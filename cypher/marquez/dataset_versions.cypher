// Answers: what a dataset's versions are made of (docs/marquez.md, "Versions"): the runs that wrote
// it, newest first, with the run; its declarations and first sighting are among its props
// (declarations, firstSeen); and the columns it was written with (to tell each version's schema).
// Param $namespace: the dataset's namespace
// Param $name: the dataset's name
// Param $max: at most this many writes, newest first
// Returns: props (the dataset's), writes (runId, at, run: the run's props, job, inputs, outputs), firstWritten (the earliest time a run's event named it as an output), columns (name, type, description, tags, from, until: when written first and last), total (every write)
// :param namespace => 'food_delivery'
// :param name => 'public.orders'
// :param max => 1000
MATCH (d:Dataset {namespace: $namespace, name: $name})
USING INDEX SEEK d:Dataset(namespace, name)
OPTIONAL MATCH (r:Run)-[w:WROTE]->(d)
WITH d, r, w, coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS at
ORDER BY at DESC, r.runId
WITH d, collect(CASE WHEN r IS NULL THEN null ELSE {r: r, w: w, at: at} END) AS made
CALL (d, made) {
  UNWIND made[..$max] AS x
  WITH x.r AS r, x.w AS w, x.at AS at
  RETURN collect({runId: r.runId, at: at, written: w.lastSeen, props: properties(r),
                  job: [(r)-[:OF]->(j:Job) | {namespace: j.namespace, name: j.name}][0],
                  inputs: [(r)-[x:READ]->(i:Dataset) | {namespace: i.namespace, name: i.name, version: x.version}],
                  outputs: [(r)-[x:WROTE]->(o:Dataset) | {namespace: o.namespace, name: o.name, version: x.version}]}) AS writes
}
RETURN properties(d) AS props, size(made) AS total, writes,
       COLLECT { MATCH (:Run)-[w:WROTE]->(d) RETURN w.firstSeen AS t ORDER BY t LIMIT 1 }[0] AS firstWritten,
       COLLECT { MATCH (d)-[:HAS_COLUMN]->(c:Column) WHERE c.writtenFirstSeen IS NOT NULL
                 RETURN {name: c.name, type: c.type, description: c.description, tags: [t IN coalesce(d.fieldTags, []) WHERE t STARTS WITH c.name + '\u001f'
                               | substring(t, size(c.name) + 1)] + [(c)-[:TAGGED]->(t:Tag) | t.name],
                         from: c.writtenFirstSeen,
                         until: CASE WHEN c.schemaDigest = d.schemaDigest
                                      AND d.schemaLastSeen > c.writtenLastSeen
                                     THEN d.schemaLastSeen ELSE c.writtenLastSeen END} AS c ORDER BY c.name } AS columns
