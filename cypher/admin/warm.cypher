// Answers: nothing a person asks; it reads the records the questions touch (runs, what they
// read and wrote and their jobs, for root cause; then columns and their DERIVED_FROM edges, then
// datasets, their edges both ways with the properties the walks filter and return, and jobs'
// READS and WRITES: read last, these are what a page cache too small for the whole store keeps),
// so that Neo4j's page cache holds them before the first question.
// Text and lists are measured (size), not only counted, so that their own records are read too.
// Run after a restart (`lineage serve` does it in the background, impact/warm.py); each
// statement returns a count of what it read.
// Returns: one row per statement: what, records.
// Run in Neo4j Browser with multi-statement editing enabled (the default).
// Runs first (root cause reads them): what a page cache too small for the store drops first.
MATCH (r:Run)-[:OF]->(:Job)
WITH count(r.state) + count(r.stateTime) + count(r.completeTime) + count(r.errorMessage)
     AS records
RETURN 'runs' AS what, records;
MATCH (r:Run)-[e:READ|WROTE]->(:Dataset)
WITH count(e) + count(r.state) AS records
RETURN 'runs read and wrote' AS what, records;
MATCH (c:Column)
WITH count(c.namespace) + sum(size(c.dataset)) + sum(size(c.name)) AS records
RETURN 'columns' AS what, records;
MATCH (:Column)<-[e:DERIVED_FROM]-(n)
WITH count(e.firstSeen) + count(e.retired) + count(e.alias) + count(e.type) + count(e.subtype)
     + count(e.masking) + sum(size(e.jobName)) AS records
RETURN 'column edges' AS what, records;
// through the (namespace, name) index each question starts from
MATCH (d:Dataset)
USING INDEX d:Dataset(namespace, name)
WHERE d.namespace IS NOT NULL AND d.name IS NOT NULL
WITH sum(size(d.namespace)) + sum(size(d.name)) + sum(size(coalesce(d.owners, []))) AS records
RETURN 'datasets' AS what, records;
MATCH (:Dataset)<-[e:DERIVED_FROM]-(n)
WITH count(e.firstSeen) + count(e.retired) + count(e.alias) + sum(size(e.jobNamespace))
     + sum(size(e.jobName)) + count(e.coarse) + sum(size(coalesce(e.subtypes, []))) + count(e.lastSeen)
     + sum(size(n.namespace)) + sum(size(n.name)) AS records
RETURN 'dataset edges, downstream' AS what, records;
MATCH (:Dataset)-[e:DERIVED_FROM]->(n)
WITH count(e.retiredAt) + count(n.namespace) AS records
RETURN 'dataset edges, upstream' AS what, records;
MATCH (j:Job)-[r:READS|WRITES]->(:Dataset)
WITH count(r.retired) + count(r.lastSeen) + sum(size(j.namespace)) + sum(size(j.name)) AS records
RETURN 'reads and writes' AS what, records
