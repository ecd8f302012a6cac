// Answers: derives coarse dataset lineage (coarse = true: read, no column lineage) from a job's
// inputs x outputs, for the pairs its column lineage leaves open: every input of an output that
// has no column lineage; for an output with column lineage, only the inputs that no column
// lineage of the job names at all (the job reads them, so they may feed it). An input that the
// job's column lineage names for another output does not feed this one (a job reading A and B
// and writing C from A and D from B has two edges, not four). Coarse edges that no longer
// qualify (column lineage arrived later) are removed first, so the result is the same in any
// order. A job that reported a lineage facet (explicitLineage) gets none: the facet is its whole
// lineage (docs/graph-model.md, "Explicit lineage").
// Param $jobs: the jobs to refresh [{namespace, name}]
// Returns: nothing
// :param jobs => [{namespace: 'example', name: 'etl_orders'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $jobs AS key
MATCH (j:Job {namespace: key.namespace, name: key.name})
USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
// from the job's outputs: a coarse edge starts at a dataset the job writes (matching the edge
// by its properties alone scanned every DERIVED_FROM of the graph, for each job)
CALL (j) {
  MATCH (j)-[:WRITES]->(o:Dataset)-[c:DERIVED_FROM]->(i:Dataset)
  WHERE c.jobNamespace = j.namespace AND c.jobName = j.name AND c.coarse AND c.explicit IS NULL
    AND (j.explicitLineage
         OR (EXISTS { MATCH (o)-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->() }
             AND EXISTS { MATCH ()-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->(i) }))
  DELETE c
}
// a job that reported a lineage facet states its whole lineage through lineage facets: what
// column lineage facets or inputs x outputs of its events said is removed, nothing is inferred
CALL (j) {
  WITH j WHERE j.explicitLineage
  MATCH (j)-[:WRITES]->(o:Dataset)
  CALL (j, o) {
    MATCH (o)-[e:DERIVED_FROM]->(:Dataset)
    WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.explicit IS NULL
    DELETE e
  }
  CALL (j, o) {
    MATCH (o)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
    WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.explicit IS NULL
    DELETE e
  }
}
WITH j WHERE j.explicitLineage IS NULL
MATCH (j)-[w:WRITES]->(o:Dataset)
MATCH (j)-[r:READS]->(i:Dataset)
WHERE NOT EXISTS {
  MATCH (o)-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->(i)
} AND NOT (
  EXISTS { MATCH (o)-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->() }
  AND EXISTS { MATCH ()-[:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name, coarse: false}]->(i) })
MERGE (o)-[x:DERIVED_FROM {jobNamespace: j.namespace, jobName: j.name}]->(i)
  ON CREATE SET x.coarse = true
WITH x, CASE WHEN r.firstSeen > w.firstSeen THEN r.firstSeen ELSE w.firstSeen END AS first,
        CASE WHEN r.lastSeen < w.lastSeen THEN r.lastSeen ELSE w.lastSeen END AS last
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR first < x.firstSeen THEN first ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR last > x.lastSeen THEN last ELSE x.lastSeen END
