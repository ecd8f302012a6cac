// Answers: one run in full: its properties and facets, its job, what it read and wrote (with
// versions), its parent run and its child runs.
// Param $runId: the run's UUID
// Returns: props, job, inputs, outputs, parent, children, descendants (child runs down to 5 levels: runId, job, state, errorMessage, inputs) (or no row if unknown)
// :param runId => '54e0d042-cf52-5eb7-9829-674f44f889e2'
MATCH (r:Run {runId: toLower($runId)})
OPTIONAL MATCH (r)-[:OF]->(j:Job)
RETURN properties(r) AS props, j.namespace + ':' + j.name AS job,
       [(r)-[x:READ]->(d:Dataset) | {namespace: d.namespace, name: d.name, version: x.version}] AS inputs,
       [(r)-[x:WROTE]->(d:Dataset) | {namespace: d.namespace, name: d.name, version: x.version,
                                      rowCount: x.rowCount}] AS outputs,
       [(r)-[:PARENT]->(p:Run) | p.runId][0] AS parent,
       [(c:Run)-[:PARENT]->(r) | c.runId] AS children,
       COLLECT { MATCH (c:Run)(()-[:PARENT]->()){1,5}(r)
                 WITH DISTINCT c ORDER BY c.runId
                 RETURN {runId: c.runId, job: c.jobNamespace + ':' + c.jobName, state: c.state,
                         errorMessage: c.errorMessage,
                         inputs: [(c)-[:READ]->(d:Dataset) | {namespace: d.namespace, name: d.name}]}
               } AS descendants
