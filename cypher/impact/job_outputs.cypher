// Answers: the datasets a job writes (where a job's blast radius starts), its own and those of
// its child jobs (jobs whose runs have a run of it as PARENT, up to 5 levels: the tasks of an
// Airflow DAG, the queries of a Spark application), or no row for an unknown job.
// Param $namespace: the job's namespace
// Param $name: the job's name
// Param $includeRetired: true to include outputs its latest completed run no longer wrote
// Returns: found (whether the job exists), outputs (list of {namespace, name, via: the child job that writes it, or null})
// :param namespace => 'shop-nightly'
// :param name => 'enrich_orders'
// :param includeRetired => false
OPTIONAL MATCH (j:Job {namespace: $namespace, name: $name})
OPTIONAL CALL (j) {
  MATCH (j)<-[:OF]-(:Run)(()<-[:PARENT]-()){1,5}(:Run)-[:OF]->(c:Job)
  WHERE c <> j
  RETURN collect(DISTINCT c) AS children
}
RETURN j IS NOT NULL AS found,
       CASE WHEN j IS NULL THEN [] ELSE
         [(j)-[w:WRITES]->(d:Dataset) WHERE $includeRetired OR w.retired IS NULL | {namespace: d.namespace, name: d.name, via: null}] +
         COLLECT { UNWIND coalesce(children, []) AS c
                   MATCH (c)-[w:WRITES]->(d:Dataset) WHERE $includeRetired OR w.retired IS NULL
                   RETURN {namespace: d.namespace, name: d.name, via: c.namespace + ':' + c.name} AS o
                   ORDER BY o.via, o.namespace, o.name } END AS outputs,
       [c IN coalesce(children, []) | c.namespace + ':' + c.name] AS children
