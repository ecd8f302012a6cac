// Answers: keeps each job's lineage current: an edge of the job (READS, WRITES, and the dataset
// and column DERIVED_FROM edges a run of it stated or its inputs x outputs implied) is current
// while the job's latest completed run that reported any dataset still read its input and wrote
// its output; otherwise it is retired (retired = true, retiredAt: when the first completed run
// after the last one that produced it ended, lastRunId: that last run, if any). A job with no
// such run keeps every edge current; failed and aborted runs retire nothing; an edge that comes
// back is current again. A column edge is also retired when the latest completed run that
// stated column lineage for its output did not state it: that run's column lineage (the union
// of its events') is the whole truth of the output's; runs that state none change nothing.
// Declared (JobEvent), alias, hand-off and boundary edges never retire.
// Computed from the job's whole state each time, so the result is the same in any order.
// The reference run is kept on the job (refRunId): a batch compares it with its own runs of the
// job, and searches all the job's runs only when the kept one stopped qualifying (a FAIL that
// came after its COMPLETE); the times and last run of an edge retired before are computed again
// only when the batch brings a run other than the reference (an older run arriving late).
// Param $jobs: the jobs whose runs or edges changed, with the batch's runs of each [{namespace, name, runs}]
// Returns: nothing
// :param jobs => [{namespace: 'example', name: 'etl_orders', runs: []}]
// the jobs of the batch, and a job whose reference run now belongs to another job (a run id
// reported for two jobs: it is OF the job of its latest event)
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
CALL () {
  UNWIND $jobs AS key
  MATCH (j:Job {namespace: key.namespace, name: key.name})
  USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
  RETURN j, key
  UNION
  UNWIND $jobs AS given
  UNWIND given.runs AS id
  MATCH (j:Job {refRunId: id})
  USING INDEX SEEK j:Job(refRunId)
  WHERE NOT EXISTS { (:Run {runId: id})-[:OF]->(j) }
  RETURN j, {runs: []} AS key
}
OPTIONAL MATCH (kept:Run {runId: j.refRunId})
USING INDEX SEEK kept:Run(runId)
WITH key, j, kept, kept IS NOT NULL AND kept.state = 'COMPLETE' AND EXISTS { (kept)-[:OF]->(j) }
                   AND EXISTS { (kept)-[:READ|WROTE]->(:Dataset) } AS valid
OPTIONAL CALL (key, j, kept, valid) {
  WITH key, j, kept WHERE valid
  UNWIND [kept] + COLLECT { UNWIND key.runs AS id
                            MATCH (r:Run {runId: id}) USING INDEX SEEK r:Run(runId)
                            WHERE r.state = 'COMPLETE'
                              AND EXISTS { (r)-[:OF]->(j) } AND EXISTS { (r)-[:READ|WROTE]->(:Dataset) }
                            RETURN r } AS r
  RETURN r AS latest ORDER BY r.completeTime DESC, r.runId DESC LIMIT 1
  UNION
  WITH j, valid WHERE NOT valid
  MATCH (r:Run {state: 'COMPLETE'})-[:OF]->(j)
  WHERE EXISTS { (r)-[:READ|WROTE]->(:Dataset) }
  RETURN r AS latest ORDER BY r.completeTime DESC, r.runId DESC LIMIT 1
}
SET j.refRunId = latest.runId
WITH key, j, latest, valid
// a run other than the reference, or a reference that moved back: retired edges are computed again
WITH j, latest, NOT valid OR any(id IN key.runs WHERE id <> latest.runId) AS late,
     COLLECT { MATCH (latest)-[:READ]->(d:Dataset) RETURN elementId(d) } AS reads,
     COLLECT { MATCH (latest)-[:WROTE]->(d:Dataset) RETURN elementId(d) } AS wrote
// the common case costs two counts: the reference run read everything the job reads and wrote
// everything it writes (a run's datasets are always among its job's), and nothing is retired
// (a job that ever stated more than one column lineage has its column edges judged too)
WITH j, latest, late, reads, wrote
WHERE j.hasRetired OR (latest IS NOT NULL AND (COUNT { (j)-[:READS]->(:Dataset) } > size(reads)
                                               OR COUNT { (j)-[:WRITES]->(:Dataset) } > size(wrote)
                                               OR j.lineageVaried))
// per output, the column lineage its latest completed run that stated one stated: the whole
// truth of that output's column lineage (the reference run's when it stated one for it)
CALL (j, latest) {
  WITH j, latest WHERE latest IS NOT NULL AND j.lineageVaried
  MATCH (j)-[:WRITES]->(o:Dataset)
  OPTIONAL MATCH (latest)-[w0:WROTE]->(o)
  CALL (j, o, w0) {
    WITH w0 WHERE w0.lineage IS NOT NULL
    RETURN w0.lineage AS stated
    UNION
    WITH j, o, w0 WHERE w0 IS NULL OR w0.lineage IS NULL
    MATCH (o)<-[w:WROTE]-(r:Run {state: 'COMPLETE'})-[:OF]->(j)
    WHERE w.lineage IS NOT NULL
    RETURN w.lineage AS stated ORDER BY r.completeTime DESC, r.runId DESC LIMIT 1
  }
  RETURN collect([elementId(o), stated]) AS statedBy
}
WITH j, latest, late, reads, wrote, coalesce(statedBy, []) AS statedBy
// every edge of the job, with its input and output datasets
CALL (j) {
  MATCH (j)-[e:READS]->(i:Dataset)
  RETURN e, i, null AS o, false AS column
  UNION
  MATCH (j)-[e:WRITES]->(o:Dataset)
  RETURN e, null AS i, o, false AS column
  UNION
  MATCH (j)-[:WRITES]->(o:Dataset)-[e:DERIVED_FROM]->(i:Dataset)
  WHERE e.jobNamespace = j.namespace AND e.jobName = j.name
    AND e.alias IS NULL AND e.flow IS NULL AND e.boundary IS NULL AND e.declaredOnly IS NULL
  RETURN e, i, o, false AS column
  UNION
  MATCH (j)-[:WRITES]->(o:Dataset)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(ic:Column)
  WHERE e.jobNamespace = j.namespace AND e.jobName = j.name
    AND e.alias IS NULL AND e.declaredOnly IS NULL
  MATCH (i:Dataset {namespace: ic.namespace, name: ic.dataset})
  USING INDEX SEEK i:Dataset(namespace, name)
  RETURN e, i, o, true AS column
}
// a column edge judged by its output's stated lineage: the lineages that stated it, if known
WITH j, latest, late, e, i, o, statedBy, reads, wrote,
     CASE WHEN column THEN e.lineages END AS lineages
WITH j, latest, late, e, i, o, lineages, reads, wrote,
     [p IN statedBy WHERE p[0] = elementId(o) | p[1]][0] AS stated
WITH j, latest, late, e, i, o, lineages,
     latest IS NOT NULL AND ((i IS NOT NULL AND NOT elementId(i) IN reads)
                             OR (o IS NOT NULL AND NOT elementId(o) IN wrote)
                             OR (stated IS NOT NULL AND lineages IS NOT NULL
                                 AND none(l IN lineages WHERE l IN stated))) AS gone
CALL (j, e, gone) {
  WITH j, e WHERE NOT gone AND e.retired IS NOT NULL
  REMOVE e.retired, e.retiredAt, e.lastRunId
}
// the job's completed runs that reported a dataset, latest first, with what each read and wrote:
// read once per job, and only when an edge's retirement is to be computed (not once per edge:
// a job whose inputs vary by run, a partitioned path per day, has as many edges as runs)
WITH j, late, collect({e: e, i: i, o: o, lineages: lineages, gone: gone}) AS edges
CALL (j, late, edges) {
  WITH j WHERE any(x IN edges WHERE x.gone AND (x.e.retired IS NULL OR late))
  MATCH (r:Run {state: 'COMPLETE'})-[:OF]->(j)
  WHERE EXISTS { (r)-[:READ|WROTE]->(:Dataset) }
  WITH r ORDER BY r.completeTime DESC, r.runId DESC
  RETURN collect({runId: r.runId, time: r.completeTime,
                  reads: COLLECT { MATCH (r)-[:READ]->(d:Dataset) RETURN elementId(d) },
                  wrote: COLLECT { MATCH (r)-[:WROTE]->(d:Dataset) RETURN elementId(d) },
                  stated: COLLECT { MATCH (r)-[w:WROTE]->(d:Dataset) WHERE w.lineage IS NOT NULL
                                    RETURN [elementId(d), w.lineage] }}) AS runs
}
UNWIND edges AS x
WITH j, late, runs, x.e AS e, x.i AS i, x.o AS o, x.lineages AS lineages, x.gone AS gone
CALL (j, e, i, o, lineages, gone, late, runs) {
  WITH j, e, i, o, lineages, runs WHERE gone AND (e.retired IS NULL OR late)
  // each run stated the edge (read its input, wrote its output and, for a column edge, listed
  // it in the column lineage it stated for that output), said nothing of it (a column edge's
  // run that stated no column lineage for the output) or ruled it out
  WITH j, e, lineages, [r IN runs | r {.runId, .time,
          match: (i IS NULL OR elementId(i) IN r.reads) AND (o IS NULL OR elementId(o) IN r.wrote),
          stated: [p IN r.stated WHERE p[0] = elementId(o) | p[1]][0]}] AS seen
  WITH j, e, [r IN seen | r {.runId, .time,
          stated: r.match AND (lineages IS NULL
                               OR any(l IN lineages WHERE l IN coalesce(r.stated, []))),
          silent: r.match AND lineages IS NOT NULL AND r.stated IS NULL}] AS judged
  // the last completed run that stated it, and the first completed run after it that ruled it
  // out; runs retention folded (docs/graph-model.md, "Retention") are known by the edge's summary
  // (its last completed run) and by the retirement computed while they were detailed
  WITH j, e, judged, [r IN judged WHERE r.stated][0] AS left
  WITH j, e, judged, CASE WHEN e.`summary.lastCompleteTime` IS NOT NULL
                           AND (left IS NULL OR e.`summary.lastCompleteTime` > left.time)
                          THEN {runId: e.`summary.lastCompleteRunId`,
                                time: e.`summary.lastCompleteTime`} ELSE left END AS last
  WITH j, e, last, [r IN judged WHERE (last IS NULL OR r.time > last.time)
                                    AND NOT r.stated AND NOT r.silent][-1].time AS after
  WITH e, last, CASE WHEN j.`summary.until` IS NOT NULL AND e.retiredAt <= j.`summary.until`
                          AND (last IS NULL OR e.retiredAt > last.time)
                          AND (after IS NULL OR e.retiredAt < after)
                     THEN e.retiredAt ELSE after END AS retiredAt
  SET e.retired = true, e.retiredAt = retiredAt, e.lastRunId = last.runId
}
WITH j, max(CASE WHEN gone THEN 1 ELSE 0 END) AS retiredEdges
SET j.hasRetired = CASE WHEN retiredEdges > 0 THEN true END
