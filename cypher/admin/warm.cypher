// Answers: nothing a person asks; it reads, in the order the questions need them, the records the
// lineage walks touch (datasets, their DERIVED_FROM edges both ways with the properties the walks
// filter and return, jobs' READS and WRITES, then columns and theirs), so that Neo4j's page cache
// holds them before the first question. Run after a restart (`lineage serve` does it in the
// background, impact/warm.py); each statement returns how many records it read.
// Returns: one row per statement: what, records.
// Run in Neo4j Browser with multi-statement editing enabled (the default).
MATCH (d:Dataset)
WITH count(d.namespace) + count(d.name) + count(d.owners) AS records
RETURN 'datasets' AS what, records;
MATCH (:Dataset)<-[e:DERIVED_FROM]-(n)
WITH count(e.firstSeen) + count(e.retired) + count(e.alias) + count(e.jobName) + count(e.coarse)
     + count(e.subtypes) + count(e.lastSeen) + count(n.name) AS records
RETURN 'dataset edges, downstream' AS what, records;
MATCH (:Dataset)-[e:DERIVED_FROM]->(n)
WITH count(e.retiredAt) + count(n.namespace) AS records
RETURN 'dataset edges, upstream' AS what, records;
MATCH (j:Job)-[r:READS|WRITES]->(:Dataset)
WITH count(r.retired) + count(r.lastSeen) + count(j.name) AS records
RETURN 'reads and writes' AS what, records;
MATCH (c:Column)
WITH count(c.namespace) + count(c.dataset) + count(c.name) AS records
RETURN 'columns' AS what, records;
MATCH (:Column)<-[e:DERIVED_FROM]-(n)
WITH count(e.firstSeen) + count(e.retired) + count(e.alias) + count(e.type) + count(e.subtype)
     + count(e.masking) + count(n.name) AS records
RETURN 'column edges' AS what, records
