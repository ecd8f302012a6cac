// Answers: when each dataset, job or data source was first seen (the event time of its first
// event), for Marquez's stats (how many existed at the end of each hour or day).
// Param $kind: 'datasets', 'jobs' or 'sources'
// Returns: first (one row per dataset, job or source), in milliseconds since 1970 (plain numbers:
// tens of thousands of them cross to Python in milliseconds, as times they took seconds)
// :param kind => 'datasets'
CALL () {
  MATCH (d:Dataset) WHERE $kind = 'datasets' RETURN d.firstSeen AS first
  UNION ALL
  MATCH (j:Job) WHERE $kind = 'jobs' AND NOT coalesce(j.stub, false) RETURN j.firstSeen AS first
  UNION ALL
  MATCH (d:Dataset) WHERE $kind = 'sources'
  WITH coalesce(d.dataSourceName, 'default') AS source, min(d.firstSeen) AS first
  RETURN first
}
RETURN first.epochMillis AS first
