// Answers: removes lineage past the summary window (docs/graph-model.md, "Retention"): a retired
// edge (a job's READS or WRITES, a dataset or column DERIVED_FROM of a job) last stated before
// the summary window's start. Current lineage is never removed, however old. A column edge's last
// time is read as docs/graph-model.md says (its job's lineageLastSeen while it carries the job's
// current lineageDigest). A job whose last retired edge goes loses its hasRetired mark. At most
// $limit edges a call: call again until it removes fewer.
// Param $before: the summary window's start
// Param $limit: at most this many edges
// Returns: removed (how many edges)
// :param before => datetime('2024-01-01T00:00:00Z')
// :param limit => 1000
CALL () {
  MATCH (a)-[e:READS|WRITES|DERIVED_FROM]->()
  WHERE e.retired AND e.lastSeen < $before
  OPTIONAL MATCH (j:Job {namespace: e.jobNamespace, name: e.jobName})
  WITH e, CASE WHEN a:Job THEN a ELSE j END AS job
  WHERE job IS NULL OR e.lineageDigest IS NULL OR e.lineageDigest <> job.lineageDigest
        OR job.lineageLastSeen < $before
  RETURN e, job LIMIT $limit
}
WITH collect(DISTINCT job) AS jobs, collect(e) AS gone
FOREACH (e IN gone | DELETE e)
WITH jobs, gone
// a job keeps hasRetired only while it has a retired edge (as cypher/ingest/retire.cypher sets it)
CALL (jobs) {
  UNWIND jobs AS j
  SET j.hasRetired = CASE WHEN EXISTS { (j)-[x:READS|WRITES]->() WHERE x.retired }
                            OR EXISTS { (j)-[:WRITES]->(:Dataset)-[x:DERIVED_FROM]->()
                                        WHERE x.retired AND x.jobNamespace = j.namespace
                                          AND x.jobName = j.name }
                            OR EXISTS { (j)-[:WRITES]->(:Dataset)-[:HAS_COLUMN]->(:Column)
                                        -[x:DERIVED_FROM]->()
                                        WHERE x.retired AND x.jobNamespace = j.namespace
                                          AND x.jobName = j.name }
                          THEN true END
}
RETURN size(gone) AS removed
