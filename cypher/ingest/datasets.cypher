// Answers: upserts Dataset nodes; newest facets win, older events only fill what is missing.
// Param $rows: one map per dataset {namespace, name, firstSeen, lastSeen, props, digests}
// Returns: duplicates, how many of the given event digests were already recorded
// :param rows => [{namespace: 'example', name: 'public.orders', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), props: {description: 'All orders'}, digests: []}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (x:Dataset {namespace: row.namespace, name: row.name})
WITH x, row, (x.propsTime IS NULL OR row.lastSeen >= x.propsTime) AS newer,
     size([d IN row.digests WHERE d IN coalesce(x.events, [])]) AS dup
FOREACH (k IN keys(row.props) |
  SET x[k] = CASE WHEN newer OR x[k] IS NULL THEN row.props[k] ELSE x[k] END)
SET x.propsTime = CASE WHEN newer THEN row.lastSeen ELSE x.propsTime END,
    x.events = coalesce(x.events, []) + [d IN row.digests WHERE NOT d IN coalesce(x.events, [])],
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN sum(dup) AS duplicates
