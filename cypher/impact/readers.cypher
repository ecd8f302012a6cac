// Answers: which jobs read any of the given datasets, and when each last did: the jobs a change
// to those datasets reaches.
// Param $datasets: list of {namespace, name}
// Param $includeRetired: true to include jobs whose latest completed run no longer read it
// Returns: namespace, name of each job, the datasets it reads among those given, lastSeen (ISO text), owners
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'marts.revenue_by_country'}]
// :param includeRetired => false
UNWIND $datasets AS key
MATCH (j:Job)-[r:READS]->(d:Dataset {namespace: key.namespace, name: key.name})
USING INDEX SEEK d:Dataset(namespace, name)
WHERE ($includeRetired OR r.retired IS NULL) AND j.deleted IS NULL  // a soft-deleted job: never listed
RETURN j.namespace AS namespace, j.name AS name,
       collect(d.namespace + ':' + d.name) AS reads, toString(max(r.lastSeen)) AS lastSeen,
       coalesce(j.owners, []) AS owners
ORDER BY namespace, name
