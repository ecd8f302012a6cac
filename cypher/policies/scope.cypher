// Answers: which datasets a batch of lineage could have changed a rule's answer for: the
// datasets the batch touched and every dataset upstream of them (the sources whose paths may
// have changed) or downstream of them (the sinks whose origins may have changed). Retired lineage
// is walked too: a path a batch retired was a path before it.
// Param $datasets: the datasets the batch touched, a list of {namespace, name}
// Param $jobs: the jobs of hand-offs its explicit lineage joined to others, a list of {namespace, name}
// Returns: upstream (the touched and those upstream, each {namespace, name}), downstream (the touched and those downstream)
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'marts.orders_enriched'}]
// :param jobs => []
CYPHER statefulShortestPlanningMode=all_if_possible
CALL () {
  UNWIND $datasets AS start
  MATCH (d:Dataset {namespace: start.namespace, name: start.name})
  RETURN d
  UNION
  UNWIND $jobs AS start
  MATCH (d:Job {namespace: start.namespace, name: start.name})
  RETURN d
}
WITH collect(d) AS starts
CALL (starts) {
  UNWIND starts AS d
  MATCH ANY SHORTEST (d)(()-[:DERIVED_FROM]->()){0,50}(n:Dataset)
  RETURN collect(DISTINCT {namespace: n.namespace, name: n.name}) AS upstream
}
CALL (starts) {
  UNWIND starts AS d
  MATCH ANY SHORTEST (d)(()<-[:DERIVED_FROM]-()){0,50}(n:Dataset)
  RETURN collect(DISTINCT {namespace: n.namespace, name: n.name}) AS downstream
}
RETURN upstream, downstream
