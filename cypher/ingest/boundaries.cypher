// Answers: links each job of a hand-off (a lineage facet's JOB entries: the job is a node of
// lineage) to what it consumes and produces directly, so that walks pass through it: a job that
// feeds something (a flow edge ends at it) derives from each dataset it reads; a job that is fed
// (a flow edge starts at it) is a source of each dataset it writes. For a job that reported a
// lineage facet, only its dangling inputs and outputs (no edge of its own lineage names them).
// Boundary edges are (Job)-[:DERIVED_FROM {boundary: true}]->(Dataset) and
// (Dataset)-[:DERIVED_FROM {boundary: true}]->(Job), of the job itself; those that no longer
// qualify are removed. Jobs with boundary edges are marked handoff and refreshed every time.
// Param $jobs: the jobs of the batch [{namespace, name}]
// Returns: nothing
// :param jobs => [{namespace: 'airflow://prod', name: 'dag_a.task_3'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
CALL () {
  UNWIND $jobs AS key
  MATCH (j:Job {namespace: key.namespace, name: key.name})
  USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
  RETURN j
  UNION
  MATCH (j:Job {handoff: true})
  RETURN j
}
WITH j,
     EXISTS { MATCH ()-[f:DERIVED_FROM]->(j) WHERE f.boundary IS NULL } AS feeds,
     EXISTS { MATCH (j)-[f:DERIVED_FROM]->() WHERE f.boundary IS NULL } AS fed,
     coalesce(j.explicitLineage, false) AS explicit
// what it consumes directly: its inputs (all, or the dangling ones)
CALL (j, feeds, explicit) {
  MATCH (j)-[r:READS]->(i:Dataset)
  WHERE feeds AND NOT (explicit AND EXISTS {
    MATCH (x)-[e:DERIVED_FROM]->(i)
    WHERE e.boundary IS NULL AND (x = j OR (e.jobNamespace = j.namespace AND e.jobName = j.name)) })
  RETURN collect(i) AS inputs, collect(r) AS reads
}
CALL (j, fed, explicit) {
  MATCH (j)-[w:WRITES]->(o:Dataset)
  WHERE fed AND NOT (explicit AND EXISTS {
    MATCH (o)-[e:DERIVED_FROM]->(x)
    WHERE e.boundary IS NULL AND (x = j OR (e.jobNamespace = j.namespace AND e.jobName = j.name)) })
  RETURN collect(o) AS outputs, collect(w) AS writes
}
CALL (j, inputs) {
  MATCH (j)-[b:DERIVED_FROM {boundary: true}]->(i:Dataset) WHERE NOT i IN inputs
  DELETE b
}
CALL (j, outputs) {
  MATCH (o:Dataset)-[b:DERIVED_FROM {boundary: true}]->(j) WHERE NOT o IN outputs
  DELETE b
}
CALL (j, reads) {
  UNWIND reads AS r
  WITH j, r, endNode(r) AS i
  MERGE (j)-[b:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, boundary: true}]->(i)
  SET b.firstSeen = r.firstSeen, b.lastSeen = r.lastSeen
}
CALL (j, writes) {
  UNWIND writes AS w
  WITH j, w, endNode(w) AS o
  MERGE (o)-[b:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, boundary: true}]->(j)
  SET b.firstSeen = w.firstSeen, b.lastSeen = w.lastSeen
}
SET j.handoff = CASE WHEN size(inputs) + size(outputs) > 0 THEN true END
