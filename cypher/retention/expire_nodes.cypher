// Answers: removes what is left of lineage past the summary window (docs/graph-model.md,
// "Retention"), last seen before the window's start: a column outside its dataset's current
// schema with no lineage edge either way; a dataset with no lineage, run, symlink or rename left
// (with its columns, none of which has lineage); a job with no run, read or write left; a policy
// violation cleared before it; a tag nothing carries, created before it. At most $limit nodes a
// kind a call: call again until it removes fewer.
// Param $before: the summary window's start
// Param $limit: at most this many nodes of each kind
// Returns: columns, datasets, jobs, violations, tags (how many of each were removed)
// :param before => datetime('2024-01-01T00:00:00Z')
// :param limit => 1000
CALL () {
  MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column)
  WHERE c.lastSeen < $before AND (c.schemaDigest IS NULL OR c.schemaDigest <> d.schemaDigest)
    AND NOT EXISTS { (c)-[:DERIVED_FROM|PRODUCED_BY]-() }
  WITH c LIMIT $limit
  DETACH DELETE c
  RETURN count(*) AS columns
}
CALL () {
  MATCH (d:Dataset)
  WHERE d.lastSeen < $before
    AND NOT EXISTS { (d)-[:DERIVED_FROM|READ|WROTE|READS|WRITES|SYMLINK|RENAMED_FROM]-() }
    AND NOT EXISTS { (d)-[:HAS_COLUMN]->(:Column)-[:DERIVED_FROM|PRODUCED_BY]-() }
  WITH d LIMIT $limit
  OPTIONAL MATCH (d)-[:HAS_COLUMN]->(c:Column)
  DETACH DELETE c
  WITH DISTINCT d
  DETACH DELETE d
  RETURN count(*) AS datasets
}
CALL () {
  MATCH (j:Job)
  WHERE j.lastSeen < $before AND NOT EXISTS { (j)-[:READS|WRITES|OF|PRODUCED_BY]-() }
  WITH j LIMIT $limit
  DETACH DELETE j
  RETURN count(*) AS jobs
}
CALL () {
  MATCH (v:PolicyViolation)
  WHERE v.clearedAt < $before
  WITH v LIMIT $limit
  DELETE v
  RETURN count(*) AS violations
}
CALL () {
  MATCH (t:Tag)
  WHERE t.createdAt < $before AND NOT EXISTS { (t)<-[:TAGGED]-() }
  WITH t LIMIT $limit
  DELETE t
  RETURN count(*) AS tags
}
RETURN columns, datasets, jobs, violations, tags
