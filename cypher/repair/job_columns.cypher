// Answers: what a rerun plan's column split reads of each job: its column edges in current
// lineage (from a source column into a column of what it writes) and the inputs it reads with
// no column lineage (coarse dataset edges: any column may feed any output).
// Param $jobs: list of {namespace, name}
// Returns: job ('namespace:name'), edges (inNamespace, inDataset, inColumn, outNamespace, outDataset, outColumn), coarse (namespace, name of each input read without column lineage), outputs (namespace, name of what it writes)
// :param jobs => [{namespace: 'shop', name: 'marts_revenue_by_country'}]
UNWIND $jobs AS k
MATCH (j:Job {namespace: k.namespace, name: k.name})
USING INDEX SEEK j:Job(namespace, name)
RETURN j.namespace + ':' + j.name AS job,
       COLLECT { MATCH (j)-[w:WRITES WHERE w.retired IS NULL]->(o:Dataset)-[:HAS_COLUMN]->(c:Column)-[e:DERIVED_FROM]->(s:Column)
                 WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.alias IS NULL AND e.retired IS NULL
                 RETURN DISTINCT {inNamespace: s.namespace, inDataset: s.dataset, inColumn: s.name,
                                  outNamespace: c.namespace, outDataset: c.dataset, outColumn: c.name} } AS edges,
       COLLECT { MATCH (j)-[:WRITES]->(o:Dataset)-[e:DERIVED_FROM]->(i:Dataset)
                 WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.coarse AND e.retired IS NULL
                 RETURN DISTINCT {namespace: i.namespace, name: i.name} } AS coarse,
       [(j)-[w:WRITES]->(o:Dataset) WHERE w.retired IS NULL | {namespace: o.namespace, name: o.name}] AS outputs
