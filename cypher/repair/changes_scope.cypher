// Answers: where "what changed" looks: every dataset upstream of the starts (over lineage current
// then: edges first seen by $until and not retired before $since), each once at its shortest
// distance, with what changed in its written schema, its writes in the window, its recent
// successes (its cadence), its failing assertions and the jobs that write it.
// Param $starts: list of {namespace, name, distance, walk}: the datasets the answer begins at (a dataset itself at 0; a job's outputs at 0, not walked, and its inputs at 1)
// Param $since: the window's start (exclusive); null for the beginning
// Param $until: the window's end; null for now
// Param $depth: maximum number of DERIVED_FROM hops upstream (1 to 50)
// Returns: namespace, name, distance, born (when its first written column was first written), columns (those whose schema may have changed in the window: name, type, current (in its latest written schema), firstWritten, lastWritten, types (writtenTypes: 'time\u001ftype')), writes (in the window, newest first: runId, job, state, start, end, firstSeen, lastSeen), successes (completed writes' ends up to $until, newest first, up to 30), failedAssertions, assertedAt (the stamp time of its assertions), writers (the jobs that write it in lineage current then: 'namespace:name')
// :param starts => [{namespace: 'file', name: '/tmp/shop/marts/revenue_by_country', distance: 0, walk: true}]
// :param since => datetime('2026-01-01T00:00:00Z')
// :param until => null
// :param depth => 20
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead)
CYPHER statefulShortestPlanningMode=all_if_possible
UNWIND $starts AS s
MATCH (src:Dataset {namespace: s.namespace, name: s.name})
USING INDEX SEEK src:Dataset(namespace, name)
CALL (src, s) {
  RETURN src AS d, s.distance AS distance
  UNION
  WITH src, s WHERE s.walk
  MATCH p = ANY SHORTEST (src)((a)-[e:DERIVED_FROM WHERE ($until IS NULL OR e.firstSeen <= $until)
                                    AND (e.retired IS NULL OR ($since IS NOT NULL AND e.retiredAt > $since))]->(b)){1,50}(d:Dataset)
  WHERE size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
  RETURN d, s.distance + size([r IN relationships(p) WHERE r.alias IS NULL]) AS distance
}
WITH d, min(distance) AS distance
CALL (d) {
  MATCH (d)-[:HAS_COLUMN]->(c:Column) WHERE c.writtenFirstSeen IS NOT NULL
  RETURN min(c.writtenFirstSeen) AS born
}
// a column dropped in the window was last written by the last write before it, or later
CALL (d) {
  OPTIONAL MATCH (:Run)-[w:WROTE]->(d) WHERE $since IS NOT NULL AND w.lastSeen <= $since
  RETURN max(w.lastSeen) AS lastBefore
}
CALL (d, born, lastBefore) {
  MATCH (d)-[:HAS_COLUMN]->(c:Column)
  WHERE c.writtenFirstSeen IS NOT NULL
    AND ((c.writtenFirstSeen > born AND ($since IS NULL OR c.writtenFirstSeen > $since))
         OR (coalesce(c.schemaDigest <> d.schemaDigest, true)
             AND ($since IS NULL OR c.writtenLastSeen >= coalesce(lastBefore, $since)))
         OR size(coalesce(c.writtenTypes, [])) > 1)
  RETURN collect({name: c.name, type: c.type, current: coalesce(c.schemaDigest = d.schemaDigest, false),
                  firstWritten: c.writtenFirstSeen, lastWritten: c.writtenLastSeen,
                  types: coalesce(c.writtenTypes, [])}) AS columns
}
CALL (d) {
  OPTIONAL MATCH (r:Run)-[w:WROTE]->(d)
  WITH r, w, coalesce(r.startTime, r.runningTime, r.stateTime) AS start,
       coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS end
  WHERE r IS NOT NULL AND ($since IS NULL OR end > $since) AND ($until IS NULL OR start <= $until)
  WITH r, w, start, end ORDER BY start DESC, r.runId DESC LIMIT 200
  MATCH (r)-[:OF]->(j:Job)
  RETURN collect({runId: r.runId, job: j.namespace + ':' + j.name, state: r.state, start: start,
                  end: end, firstSeen: w.firstSeen, lastSeen: w.lastSeen}) AS writes
}
CALL (d) {
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(d)
  WITH DISTINCT r WHERE r IS NOT NULL AND ($until IS NULL OR r.completeTime <= $until)
  WITH r ORDER BY r.completeTime DESC LIMIT 30
  RETURN collect(r.completeTime) AS successes
}
RETURN d.namespace AS namespace, d.name AS name, distance, born, columns, writes, successes,
       coalesce(d.failedAssertions, []) AS failedAssertions,
       CASE WHEN d.`@assertions` IS NOT NULL THEN datetime(left(d.`@assertions`, 27)) END AS assertedAt,
       [(w:Job)-[e:WRITES]->(d) WHERE e.retired IS NULL OR ($since IS NOT NULL AND e.retiredAt > $since)
        | w.namespace + ':' + w.name] AS writers
ORDER BY distance, namespace, name
