// Answers: what the graph knows now of the datasets a dbt project's models build, found by name
// (database.schema.alias) in any namespace: the namespaces they are in, their columns, the jobs
// that write them and what those jobs read now (to compare with a branch's manifest).
// Param $names: the models' relation names
// Returns: namespace, name, columns [{name, type, sources: the 'dataset.column's it derives from}], writers [{namespace, name, sql (the SQL its runs reported), reads: [{namespace, name}]}]
// :param names => ['analytics.revenue_by_country', 'raw.users']
MATCH (d:Dataset) WHERE d.name IN $names
RETURN d.namespace AS namespace, d.name AS name,
       [(d)-[:HAS_COLUMN]->(c:Column) WHERE c.inSchema |
          {name: c.name, type: c.type,
           sources: [(c)-[e:DERIVED_FROM]->(s:Column) WHERE e.alias IS NULL AND e.retired IS NULL |
                     s.dataset + '.' + s.name]}]
         AS columns,
       [(j:Job)-[w:WRITES]->(d) WHERE w.retired IS NULL |
          {namespace: j.namespace, name: j.name, sql: j.sql,
           reads: [(j)-[r:READS]->(i:Dataset) WHERE r.retired IS NULL | {namespace: i.namespace, name: i.name}]}]
         AS writers
ORDER BY namespace, name
