// Answers: what "what changed" compares for each job: its runs in the window (newest first), its
// latest run in it, and its last two completed runs that started by the window's start (the
// baseline, and the one before: a value that differed between those two varies by run and is
// no change), each with its facets as [key, value] pairs (job facets as it saw them:
// jobFacet.<name>; its run facets: facet.<name>; its other properties left out), what it read
// and wrote (with the column lineage digests it stated), and
// the job's column edges into what its latest run wrote where that run's column lineage differs
// from the baseline's.
// Param $jobs: list of {namespace, name}
// Param $since: the window's start (exclusive); null for the beginning
// Param $until: the window's end; null for now
// Returns: job ('namespace:name'), integration, window (runId, state, start, end, error), compared (the latest run in the window, then the baseline, then the run before it; each null when none: runId, state, start, end, facets ([key, value]), reads (namespace, name, version), writes (namespace, name, version, lineage)), edges (output, column, inNamespace, inDataset, inColumn, type, subtype, masking, lineages)
// :param jobs => [{namespace: 'shop', name: 'marts_revenue_by_country'}]
// :param since => datetime('2026-01-01T00:00:00Z')
// :param until => null
UNWIND $jobs AS k
MATCH (j:Job {namespace: k.namespace, name: k.name})
USING INDEX SEEK j:Job(namespace, name)
CALL (j) {
  OPTIONAL MATCH (r:Run)-[:OF]->(j)
  WITH r, coalesce(r.startTime, r.runningTime, r.stateTime) AS start
  WHERE r IS NOT NULL AND ($since IS NULL OR start > $since) AND ($until IS NULL OR start <= $until)
  WITH r, start ORDER BY start DESC, r.runId DESC
  RETURN collect({runId: r.runId, state: r.state, start: start,
                  end: coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime),
                  error: r.errorMessage})[..200] AS window, collect(r)[0] AS latest
}
CALL (j) {
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[:OF]->(j)
  WITH r, coalesce(r.startTime, r.runningTime, r.stateTime) AS start
  WHERE r IS NOT NULL AND $since IS NOT NULL AND start <= $since
  WITH r ORDER BY start DESC, r.runId DESC LIMIT 2
  RETURN collect(r) AS before
}
WITH j, window, latest, before[0] AS base, before[1] AS prior
CALL (j, latest, base) {
  OPTIONAL MATCH (latest)-[w:WROTE]->(o:Dataset)
  WHERE j.lineageVaried AND base IS NOT NULL AND w.lineage IS NOT NULL
    AND NOT coalesce(w.lineage = [(base)-[b:WROTE]->(o) | b.lineage][0], false)
  OPTIONAL MATCH (o)-[:HAS_COLUMN]->(c:Column)-[e:DERIVED_FROM]->(s:Column)
  WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.alias IS NULL
  RETURN collect(CASE WHEN e IS NOT NULL THEN {
           output: o.namespace + ':' + o.name, column: c.name, inNamespace: s.namespace,
           inDataset: s.dataset, inColumn: s.name, type: e.type, subtype: e.subtype,
           masking: e.masking, lineages: coalesce(e.lineages, [])} END) AS edges
}
RETURN j.namespace + ':' + j.name AS job, j.integration AS integration, window,
       [x IN [latest, base, prior] | CASE WHEN x IS NOT NULL THEN {
          runId: x.runId, state: x.state, start: coalesce(x.startTime, x.runningTime, x.stateTime),
          end: coalesce(x.completeTime, x.failTime, x.abortTime, x.stateTime),
          facets: [k IN keys(x) WHERE k STARTS WITH 'jobFacet.' OR k STARTS WITH 'facet.' | [k, x[k]]],
          reads: [(x)-[e:READ]->(i:Dataset) | {namespace: i.namespace, name: i.name, version: e.version}],
          writes: [(x)-[e:WROTE]->(o:Dataset) | {namespace: o.namespace, name: o.name, version: e.version,
                                                 lineage: coalesce(e.lineage, [])}]} END] AS compared,
       edges
