// Answers: upserts Dataset nodes; each property the value of its latest event.
// Param $rows: one map per dataset {namespace, name, firstSeen, lastSeen, props, stamp, stamps (the properties whose stamp is older than stamp), digests, declarations (the stamps of the DatasetEvents that named it, if any), received (the latest time the event log took one of its events, unix seconds; absent for events not read from the log)}
// Returns: duplicates, how many of the given event digests were already recorded
// :param rows => [{namespace: 'example', name: 'public.orders', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), props: {description: 'All orders'}, stamp: '2024-05-01T02:00:00.000000Z|0123456789abcdef', stamps: null, digests: []}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (x:Dataset {namespace: row.namespace, name: row.name})
WITH x, row, size([d IN row.digests WHERE d IN coalesce(x.events, [])]) AS dup
// each property keeps the value of its latest stamp (event time, then event digest), kept beside
// it as '@' + its name: the same value whatever order the events arrive in
FOREACH (k IN [k IN keys(row.props) WHERE x['@' + k] IS NULL OR coalesce(row.stamps[k], row.stamp) > x['@' + k]] |
  SET x[k] = row.props[k], x['@' + k] = coalesce(row.stamps[k], row.stamp))
SET x.events = coalesce(x.events, []) + [d IN row.digests WHERE NOT d IN coalesce(x.events, [])],
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
// a sorted set: the same list whatever order the events arrive in; only a DatasetEvent's row has
// declarations, and the other rows skip the sort
FOREACH (_ IN CASE WHEN row.declarations IS NULL THEN [] ELSE [1] END |
  SET x.declarations = COLLECT { UNWIND coalesce(x.declarations, []) + row.declarations AS d
                                 RETURN DISTINCT d ORDER BY d })
// reported again: shown again after a soft delete through Marquez's API (cypher/marquez/soft_delete),
// unless the event log took every event of the row before the deletion (received, unix seconds):
// a worker that loads such an event late (behind on another Kafka partition) leaves it hidden.
// takenAt: the latest time the log took an event naming it (a deletion before it hides nothing)
WITH x, row, dup, CASE WHEN row.received IS NOT NULL
                       THEN datetime({epochMillis: toInteger(row.received * 1000)}) END AS taken
SET x.deleted = CASE WHEN taken IS NOT NULL AND x.deleted IS NOT NULL AND taken < x.deleted
                     THEN x.deleted END,
    x.takenAt = CASE WHEN taken IS NOT NULL AND (x.takenAt IS NULL OR taken > x.takenAt)
                     THEN taken ELSE x.takenAt END
RETURN sum(dup) AS duplicates
