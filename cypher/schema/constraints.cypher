// Answers: creates the uniqueness constraints and indexes of the lineage graph (idempotent).
// Returns: nothing; safe to run again and again.
// Run in Neo4j Browser with multi-statement editing enabled (the default).
CREATE CONSTRAINT dataset_key IF NOT EXISTS
FOR (d:Dataset) REQUIRE (d.namespace, d.name) IS UNIQUE;
CREATE CONSTRAINT job_key IF NOT EXISTS
FOR (j:Job) REQUIRE (j.namespace, j.name) IS UNIQUE;
CREATE CONSTRAINT run_key IF NOT EXISTS
FOR (r:Run) REQUIRE r.runId IS UNIQUE;
CREATE CONSTRAINT column_key IF NOT EXISTS
FOR (c:Column) REQUIRE (c.namespace, c.dataset, c.name) IS UNIQUE;
CREATE CONSTRAINT tag_key IF NOT EXISTS
FOR (t:Tag) REQUIRE t.name IS UNIQUE;
CREATE CONSTRAINT namespace_key IF NOT EXISTS
FOR (m:Namespace) REQUIRE m.name IS UNIQUE;
CREATE CONSTRAINT source_key IF NOT EXISTS
FOR (s:Source) REQUIRE s.name IS UNIQUE;
CREATE CONSTRAINT retention_key IF NOT EXISTS
FOR (k:Retention) REQUIRE k.key IS UNIQUE;
CREATE CONSTRAINT erasure_request_ref IF NOT EXISTS
FOR (x:ErasureRequest) REQUIRE x.ref IS UNIQUE;
CREATE CONSTRAINT policy_violation_key IF NOT EXISTS
FOR (v:PolicyViolation) REQUIRE v.key IS UNIQUE;
CREATE INDEX policy_violation_anchor IF NOT EXISTS FOR (v:PolicyViolation) ON (v.anchor);
CREATE INDEX dataset_name IF NOT EXISTS FOR (d:Dataset) ON (d.name);
CREATE INDEX job_name IF NOT EXISTS FOR (j:Job) ON (j.name);
CREATE INDEX column_name IF NOT EXISTS FOR (c:Column) ON (c.name);
CREATE INDEX job_handoff IF NOT EXISTS FOR (j:Job) ON (j.handoff);
CREATE INDEX job_ref_run IF NOT EXISTS FOR (j:Job) ON (j.refRunId);
// retention's candidates (cypher/retention/foldable_runs.cypher): the runs last seen before the
// detailed window, and stub parent runs; no other query looks runs up by these properties
CREATE INDEX run_last_seen IF NOT EXISTS FOR (r:Run) ON (r.lastSeen);
CREATE INDEX run_stub IF NOT EXISTS FOR (r:Run) ON (r.stub);
// models (datasetType MODEL): `lineage provenance model NAME` and the listing of models
CREATE INDEX dataset_type IF NOT EXISTS FOR (d:Dataset) ON (d.datasetType);
// "Did you mean": names like an unknown one, by Lucene's fuzzy terms (cypher/lookup/similar_names.cypher)
// the whole name as one term ('keyword'), for names a few edits away ('raw.userz', 't_00412'), and
// its words ('simple': runs of letters, so 'raw.users' is 'raw' and 'users'), for words misspelt
// (namespaces too: Neo4j keeps one full-text index per set of labels and properties)
CREATE FULLTEXT INDEX name_whole IF NOT EXISTS FOR (n:Dataset|Job) ON EACH [n.name]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
CREATE FULLTEXT INDEX name_words IF NOT EXISTS FOR (n:Dataset|Job) ON EACH [n.name, n.namespace]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'simple'}};
// Earlier versions indexed DERIVED_FROM by job: on a young graph the planner then MERGEd each
// column edge by seeking every edge of its job (quadratic per job). Every query starts from a node.
DROP INDEX derived_from_job IF EXISTS;
// Earlier versions indexed runs by state: no query looks runs up by state alone, but on a young
// graph the planner found every COMPLETE run of the graph through it and kept those it ran for the
// job at hand (ingest/retire per job: the whole graph's runs, for each new job).
DROP INDEX run_state IF EXISTS;
