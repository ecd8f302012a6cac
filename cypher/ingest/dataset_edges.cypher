// Answers: records dataset-level lineage stated by an event: learnt from column lineage (fine,
// coarse = false), or from a lineage facet (explicit = true; coarse when a lineage facet states
// the edge without naming the source columns, or names only some: which columns feed the output
// is then not known in full). A coarse inputs x outputs edge of the same job and pair becomes stated. The
// job's other inputs keep their coarse edges into the dataset (read, no column lineage:
// ingest/coarse_edges).
// Param $rows: one map per edge {outNamespace, outDataset, inNamespace, inName, jobNamespace, jobName, runId, subtypes, coarse, explicit, declared, observed, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{outNamespace: 'example', outDataset: 'public.orders_clean', inNamespace: 'example', inName: 'public.orders', jobNamespace: 'example', jobName: 'clean_orders', runId: null, subtypes: ['IDENTITY'], coarse: false, explicit: false, declared: null, observed: true, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (o:Dataset {namespace: row.outNamespace, name: row.outDataset})
MERGE (i:Dataset {namespace: row.inNamespace, name: row.inName})
MERGE (o)-[x:DERIVED_FROM {jobNamespace: row.jobNamespace, jobName: row.jobName}]->(i)
// a fine edge's times, run and subtypes are those of the column lineage that stated it: a coarse
// edge it replaces (inputs x outputs, from events without column lineage) leaves nothing behind,
// so the edge is the same whichever arrived first. The run of the latest event (at the same
// time, the greatest run id); subtypes as a sorted set.
// (inferred: coarse and not stated by any event)
WITH o, x, row, coalesce(x.coarse, true) AND NOT coalesce(x.explicit, false) AS fresh
WITH o, x, row, fresh, CASE WHEN fresh THEN {subtypes: [], runId: null, firstSeen: null, lastSeen: null, coarse: false}
                  ELSE x {.subtypes, .runId, .firstSeen, .lastSeen, .coarse} END AS was
SET x.coarse = was.coarse OR coalesce(row.coarse, false),
    x.explicit = CASE WHEN coalesce(x.explicit, false) OR coalesce(row.explicit, false) THEN true END,
    x.declared = CASE WHEN row.declared IS NOT NULL AND (x.declared IS NULL OR row.declared > x.declared)
                      THEN row.declared ELSE x.declared END,
    x.declaredOnly = CASE WHEN coalesce(row.observed, true)
                            OR (NOT fresh AND x.firstSeen IS NOT NULL AND x.declaredOnly IS NULL)
                          THEN null ELSE true END,
    x.subtypes = COLLECT { UNWIND was.subtypes + row.subtypes AS s RETURN DISTINCT s ORDER BY s },
    x.runId = CASE WHEN row.runId IS NOT NULL
                        AND (was.runId IS NULL OR row.lastSeen > was.lastSeen
                             OR (row.lastSeen = was.lastSeen AND row.runId > was.runId))
                   THEN row.runId ELSE was.runId END,
    x.firstSeen = CASE WHEN was.firstSeen IS NULL OR row.firstSeen < was.firstSeen THEN row.firstSeen ELSE was.firstSeen END,
    x.lastSeen = CASE WHEN was.lastSeen IS NULL OR row.lastSeen > was.lastSeen THEN row.lastSeen ELSE was.lastSeen END
