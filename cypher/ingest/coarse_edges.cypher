// Answers: derives coarse dataset lineage (coarse = true: read, no column lineage) from a job's
// inputs x outputs, for each pair that the job's column lineage does not cover (an output without
// column lineage, or an input its column lineage never names: the job reads it, so it may feed
// the output). A pair that column lineage covers has its fine edge instead (ingest/dataset_edges).
// Param $jobs: the jobs to refresh [{namespace, name}]
// Returns: nothing
// :param jobs => [{namespace: 'example', name: 'etl_orders'}]
UNWIND $jobs AS key
MATCH (j:Job {namespace: key.namespace, name: key.name})-[w:WRITES]->(o:Dataset)
USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
MATCH (j)-[r:READS]->(i:Dataset)
WHERE NOT EXISTS {
  MATCH (o)-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->(i)
}
MERGE (o)-[x:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name}]->(i)
  ON CREATE SET x.coarse = true
WITH x, CASE WHEN r.firstSeen > w.firstSeen THEN r.firstSeen ELSE w.firstSeen END AS first,
        CASE WHEN r.lastSeen < w.lastSeen THEN r.lastSeen ELSE w.lastSeen END AS last
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR first < x.firstSeen THEN first ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR last > x.lastSeen THEN last ELSE x.lastSeen END
