// Answers: what the policy rules read of some datasets and jobs, as it is now, for the watch to
// tell a batch that changed lineage from one that only restated it (impact.policy.prints). Of a
// dataset: the properties the rules read (names, tags, owners, description, schema, a soft
// delete) and, apart, the figures a quality rule reads. Of a job: its current column lineage
// (its digest: docs/graph-model.md, "Repeated schemas and column lineage"), every dataset it
// reads or writes, retired or not, and, when it stated several lineages or has retired edges
// (then the digest does not tell which of its edges are current), its current lineage edges.
// Param $datasets: the datasets, a list of {namespace, name} (every one: policies/print_keys)
// Param $jobs: the jobs, a list of {namespace, name}
// Returns: kind ('dataset' or 'job'), namespace, name, print (a list), stats (a dataset's figures), datasets (a job's, each [namespace, name])
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
// :param jobs => [{namespace: 'shop-nightly', name: 'clean_users'}]
// the datasets and jobs named, each by its key: a branch for "every one" scanned every node of
// the label even when it was not taken (PROFILE at 100,000 datasets: 200,000 rows discarded)
UNWIND $datasets AS one
MATCH (d:Dataset {namespace: one.namespace, name: one.name})
RETURN 'dataset' AS kind, d.namespace AS namespace, d.name AS name,
       [d.tags, d.fieldTags, d.owners, d.description, d.schemaDigest, d.schemaColumns,
        d.deleted IS NOT NULL, d.datasetType] AS print,
       [d.rowCount, d.metricsRowCount, d.columnMetrics] AS stats, [] AS datasets
UNION ALL
UNWIND $jobs AS one
MATCH (j:Job {namespace: one.namespace, name: one.name})
WITH j, coalesce(j.lineageVaried, false) OR coalesce(j.hasRetired, false) AS unsettled,
     COLLECT { MATCH (j)-[e:READS|WRITES]->(d:Dataset)
               RETURN [type(e), d.namespace, d.name, e.retired IS NOT NULL] } AS io
// an unsettled job's current lineage edges themselves, dataset and column (the rules read no
// retired edge: one that retires leaves this list, one that comes back joins it)
WITH j, unsettled, io, CASE WHEN unsettled THEN COLLECT {
       MATCH (j)-[:WRITES]->(o:Dataset)-[e:DERIVED_FROM]->(i:Dataset)
       WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.retired IS NULL
       RETURN [o.namespace, o.name, '', i.namespace, i.name, '', e.coarse] AS edge
       UNION ALL
       MATCH (j)-[:WRITES]->(o:Dataset)-[:HAS_COLUMN]->(c:Column)-[e:DERIVED_FROM]->(i:Column)
       WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.retired IS NULL
       RETURN [o.namespace, o.name, c.name, i.namespace, i.dataset, i.name,
               [e.type, e.subtype, e.masking]] AS edge } END AS lineage
RETURN 'job' AS kind, j.namespace AS namespace, j.name AS name,
       [j.lineageDigest, unsettled, coalesce(j.explicitLineage, false),
        coalesce(j.handoff, false), j.deleted IS NOT NULL, lineage, io] AS print,
       null AS stats, [x IN io | [x[1], x[2]]] AS datasets
