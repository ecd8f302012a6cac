// Answers: the job-and-dataset lineage graph around a dataset or a job, for display (the shape of
// Marquez's GET /api/v1/lineage), walked in both directions but always along the data flow: what
// feeds the node and what the node feeds, never siblings that merely share an input. Depth counts
// jobs along the way, as in Marquez.
// Param $nodeType: 'DATASET' or 'JOB'
// Param $namespace: namespace of the node
// Param $name: name of the node
// Param $depth: maximum number of jobs between the node and any node returned (1 to 50)
// Param $includeRetired: true to include READS and WRITES the job's latest completed run no longer states (Marquez shows the current version only)
// Returns: one row per node: kind, namespace, name, a dataset's current fields, the jobs/datasets it links to, a dataset's other names and whether it carries the symlinks (the Marquez models of the nodes come from marquez/datasets and marquez/jobs)
// :param nodeType => 'DATASET'
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'marts.orders_enriched'
// :param depth => 20
// :param includeRetired => false
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead: 1.3 s instead of 3 ms on 1,000 datasets)
CYPHER statefulShortestPlanningMode=all_if_possible
CALL () {
  MATCH (s:Dataset {namespace: $namespace, name: $name})
  USING INDEX SEEK s:Dataset(namespace, name) WHERE $nodeType = 'DATASET'
  RETURN s, [s] AS outs, [s] AS ins, 0 AS base
  UNION
  MATCH (s:Job {namespace: $namespace, name: $name})
  USING INDEX SEEK s:Job(namespace, name) WHERE $nodeType = 'JOB'
  // a parent job (an Airflow DAG, a Spark application) through its child jobs' reads and writes
  RETURN s, COLLECT { MATCH (s)-[x:WRITES]->(d:Dataset) WHERE $includeRetired OR x.retired IS NULL RETURN d
                      UNION
                      MATCH (s)<-[:OF]-(:Run)(()<-[:PARENT]-()){1,5}(:Run)-[:OF]->(:Job)-[x:WRITES]->(d:Dataset)
                      WHERE $includeRetired OR x.retired IS NULL RETURN d } AS outs,
         COLLECT { MATCH (s)-[x:READS]->(d:Dataset) WHERE $includeRetired OR x.retired IS NULL RETURN d
                   UNION
                   MATCH (s)<-[:OF]-(:Run)(()<-[:PARENT]-()){1,5}(:Run)-[:OF]->(:Job)-[x:READS]->(d:Dataset)
                   WHERE $includeRetired OR x.retired IS NULL RETURN d } AS ins, 1 AS base
}
// datasets downstream (read by a job that writes the next), with how many jobs lie on the way,
// from every name of what the node writes (symlinks, declared aliases: docs/graph-model.md)
// (OPTIONAL: a job that writes nothing, or reads nothing below, still answers with itself)
OPTIONAL CALL (outs, base) {
  UNWIND outs AS o
  UNWIND [o] + COLLECT { MATCH (o)-[:DERIVED_FROM {alias: true}]->(a:Dataset) RETURN a } AS start
  CALL (start, base) {
    RETURN start AS d, base AS hops
    UNION
    MATCH p = ANY SHORTEST (start)((:Dataset)<-[r:READS WHERE $includeRetired OR r.retired IS NULL]-(:Job)
                             -[w:WRITES WHERE $includeRetired OR w.retired IS NULL]->(:Dataset)){1,50}(d)
    WHERE base + length(p) / 2 <= $depth
    RETURN d, base + length(p) / 2 AS hops
  }
  RETURN d, hops
}
WITH s, ins, base, d, min(hops) AS hops
// a table reached under one of its names is reached under all: the walk goes on once from the
// other names of what it reached (one producer writes a table by its path, the next reads it by
// its catalog name)
WITH s, ins, base, collect({d: d, hops: hops}) AS reached
CALL (reached) {
  UNWIND reached AS x
  RETURN x.d AS d, x.hops AS hops
  UNION
  UNWIND reached AS x
  WITH x.d AS seen, x.hops AS h
  MATCH (seen)-[:DERIVED_FROM {alias: true}]->(a:Dataset)
  CALL (a, h) {
    RETURN a AS d, h AS hops
    UNION
    MATCH p = ANY SHORTEST (a)((:Dataset)<-[r:READS WHERE $includeRetired OR r.retired IS NULL]-(:Job)
                             -[w:WRITES WHERE $includeRetired OR w.retired IS NULL]->(:Dataset)){1,50}(d)
    WHERE h + length(p) / 2 <= $depth
    RETURN d, h + length(p) / 2 AS hops
  }
  RETURN d, hops
}
WITH s, ins, base, d, min(hops) AS hops
// the jobs downstream: readers of those datasets that are still within depth
CALL (d, hops) {
  RETURN d AS n
  UNION
  MATCH (j:Job)-[x:READS]->(d) WHERE hops < $depth AND ($includeRetired OR x.retired IS NULL)
  RETURN j AS n
}
WITH s, ins, base, collect(n) AS down
// the same upstream: datasets written by a job that reads the previous, and their writers
OPTIONAL CALL (ins, base) {
  UNWIND ins AS i
  UNWIND [i] + COLLECT { MATCH (i)-[:DERIVED_FROM {alias: true}]->(a:Dataset) RETURN a } AS start
  CALL (start, base) {
    RETURN start AS d, base AS hops
    UNION
    MATCH p = ANY SHORTEST (start)((:Dataset)<-[w:WRITES WHERE $includeRetired OR w.retired IS NULL]-(:Job)
                             -[r:READS WHERE $includeRetired OR r.retired IS NULL]->(:Dataset)){1,50}(d)
    WHERE base + length(p) / 2 <= $depth
    RETURN d, base + length(p) / 2 AS hops
  }
  RETURN d, hops
}
WITH s, down, base, d, min(hops) AS hops
// a table reached under one of its names is reached under all: the walk goes on once from the
// other names of what it reached (one producer writes a table by its path, the next reads it by
// its catalog name)
WITH s, down, base, collect({d: d, hops: hops}) AS reached
CALL (reached) {
  UNWIND reached AS x
  RETURN x.d AS d, x.hops AS hops
  UNION
  UNWIND reached AS x
  WITH x.d AS seen, x.hops AS h
  MATCH (seen)-[:DERIVED_FROM {alias: true}]->(a:Dataset)
  CALL (a, h) {
    RETURN a AS d, h AS hops
    UNION
    MATCH p = ANY SHORTEST (a)((:Dataset)<-[w:WRITES WHERE $includeRetired OR w.retired IS NULL]-(:Job)
                             -[r:READS WHERE $includeRetired OR r.retired IS NULL]->(:Dataset)){1,50}(d)
    WHERE h + length(p) / 2 <= $depth
    RETURN d, h + length(p) / 2 AS hops
  }
  RETURN d, hops
}
WITH s, down, base, d, min(hops) AS hops
CALL (d, hops) {
  RETURN d AS n
  UNION
  MATCH (j:Job)-[x:WRITES]->(d) WHERE hops < $depth AND ($includeRetired OR x.retired IS NULL)
  RETURN j AS n
}
WITH s, down, collect(n) AS up
UNWIND [s] + down + up AS n
WITH DISTINCT n
CALL (n) {
  OPTIONAL MATCH (n)-[r:READS|WRITES]-(m) WHERE $includeRetired OR r.retired IS NULL
  RETURN collect(CASE WHEN type(r) = 'READS' AND startNode(r) = n OR type(r) = 'WRITES' AND endNode(r) = n
                      THEN {namespace: m.namespace, name: m.name} END) AS inputs,
         collect(CASE WHEN type(r) = 'WRITES' AND startNode(r) = n OR type(r) = 'READS' AND endNode(r) = n
                      THEN {namespace: m.namespace, name: m.name} END) AS outputs
}
// a dataset's fields: its current schema, in that schema's order (as lookup/dataset.cypher)
OPTIONAL CALL (n) {
  MATCH (n)-[:HAS_COLUMN]->(c:Column)
  WITH c ORDER BY c.name
  WITH collect(c) AS all
  WITH CASE WHEN n.schemaColumns IS NOT NULL THEN [f IN n.schemaColumns | head([c IN all WHERE c.name = f])]
            WHEN n.schemaDigest IS NOT NULL THEN [c IN all WHERE c.schemaDigest = n.schemaDigest]
            ELSE all END AS current
  RETURN [c IN current WHERE c IS NOT NULL | {name: c.name, type: c.type, description: c.description}] AS fields
}
RETURN CASE WHEN n:Job THEN 'JOB' ELSE 'DATASET' END AS kind, n.namespace AS namespace,
       n.name AS name, CASE WHEN n:Dataset THEN fields ELSE null END AS fields, inputs, outputs,
       // a dataset's other names, and whether it is the name carrying the symlinks (the table's
       // canonical name): the answer lists a table once (docs/graph-model.md, "Symlinks")
       CASE WHEN n:Dataset THEN COLLECT { MATCH (n)-[:SYMLINK]-{1,4}(a:Dataset) WHERE a <> n
                                          RETURN DISTINCT a.namespace + ':' + a.name }
            ELSE [] END AS otherNames,
       n:Dataset AND EXISTS { (n)-[:SYMLINK]->(:Dataset) } AS canonical,
       n.schemaColumns IS NOT NULL OR n.schemaDigest IS NOT NULL AS hasSchema
ORDER BY kind, namespace, name
