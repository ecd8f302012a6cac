// Answers: derives coarse dataset lineage (coarse = true) from a job's inputs x outputs, for the
// outputs of that job that have no column lineage of their own.
// Param $jobs: the jobs to refresh [{namespace, name}]
// Returns: nothing
// :param jobs => [{namespace: 'example', name: 'etl_orders'}]
UNWIND $jobs AS key
MATCH (j:Job {namespace: key.namespace, name: key.name})-[w:WRITES]->(o:Dataset)
USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
WHERE NOT EXISTS {
  MATCH (o)-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->()
}
MATCH (j)-[r:READS]->(i:Dataset)
MERGE (o)-[x:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name}]->(i)
  ON CREATE SET x.coarse = true
WITH x, CASE WHEN r.firstSeen > w.firstSeen THEN r.firstSeen ELSE w.firstSeen END AS first,
        CASE WHEN r.lastSeen < w.lastSeen THEN r.lastSeen ELSE w.lastSeen END AS last
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR first < x.firstSeen THEN first ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR last > x.lastSeen THEN last ELSE x.lastSeen END
