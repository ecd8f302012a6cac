// Answers: records column-level lineage: (derived Column)-[:DERIVED_FROM]->(source Column), one
// edge per job, type and subtype, keeping masking, description, the last run, first/last seen.
// An edge stamped with its job's current lineage (lineageDigest) was last seen at the later of
// its own lastSeen and the job's lineageLastSeen (ingest/lineages); ingest/lineages ran first for
// the jobs of these rows, so each edge's own times and run are up to date here.
// Param $rows: one map per edge {outNamespace, outDataset, outColumn, inNamespace, inDataset, inColumn, jobNamespace, jobName, runId, type, subtype, masking, description, firstSeen, lastSeen, stamp (the job's current lineage digest if the edge belongs to it, else null), declared (the stamp of the declaration stating it, if any), observed (false when only declared), explicit (stated by a lineage facet), lineages (the digests of the job's lineages stating it)}
// Returns: written, how many edges were written (the loader checks it is all of them)
// :param rows => [{outNamespace: 'example', outDataset: 'public.orders_clean', outColumn: 'email_hash', inNamespace: 'example', inDataset: 'public.orders', inColumn: 'email', jobNamespace: 'example', jobName: 'clean_orders', runId: null, type: 'DIRECT', subtype: 'TRANSFORMATION', masking: true, description: 'sha256(email)', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), stamp: null}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
// both ends exist: ingest/columns and ingest/column_keys ran first in the same transaction
// the hints keep the plan an index seek while the graph is young (statistics of a near-empty
// graph once planned this as a full index scan: a 4,600-row batch took 31 s)
MATCH (oc:Column {namespace: row.outNamespace, dataset: row.outDataset, name: row.outColumn})
USING INDEX SEEK oc:Column(namespace, dataset, name)
MATCH (ic:Column {namespace: row.inNamespace, dataset: row.inDataset, name: row.inColumn})
USING INDEX SEEK ic:Column(namespace, dataset, name)
MERGE (oc)-[x:DERIVED_FROM {jobNamespace: row.jobNamespace, jobName: row.jobName,
                            type: row.type, subtype: row.subtype}]->(ic)
// the latest event sets masking, description and run (at the same time, the greatest run id)
WITH x, row, (x.lastSeen IS NULL OR row.lastSeen > x.lastSeen
              OR (row.lastSeen = x.lastSeen AND coalesce(row.runId, '') >= coalesce(x.runId, ''))) AS newer
SET x.lineageDigest = coalesce(row.stamp, x.lineageDigest),
    // every lineage of the job that stated the edge (a run states the edge if its lineage is here)
    x.lineages = CASE WHEN row.lineages IS NULL THEN x.lineages
                      ELSE COLLECT { UNWIND coalesce(x.lineages, []) + row.lineages AS l
                                     RETURN DISTINCT l ORDER BY l } END,
    x.masking = CASE WHEN newer THEN row.masking ELSE x.masking END,
    x.description = CASE WHEN newer THEN row.description ELSE x.description END,
    x.runId = CASE WHEN newer AND row.runId IS NOT NULL THEN row.runId ELSE x.runId END,
    // declared: the stamp of the latest declaration (a JobEvent's or DatasetEvent's lineage
    // facet) that states the edge; declaredOnly: no run ever stated it (ingest/declarations)
    x.explicit = CASE WHEN coalesce(x.explicit, false) OR coalesce(row.explicit, false) THEN true END,
    x.declared = CASE WHEN row.declared IS NOT NULL AND (x.declared IS NULL OR row.declared > x.declared)
                      THEN row.declared ELSE x.declared END,
    x.declaredOnly = CASE WHEN coalesce(row.observed, true)
                            OR (x.firstSeen IS NOT NULL AND x.declaredOnly IS NULL)
                          THEN null ELSE true END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN count(*) AS written
