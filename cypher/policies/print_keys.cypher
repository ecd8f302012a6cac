// Answers: every dataset and job, by key, for the policy watch to print them all before a full
// check (impact.policy.prints; policies/prints then reads them a chunk at a time).
// Returns: datasets (a list of {namespace, name}), jobs (the same)
RETURN COLLECT { MATCH (d:Dataset) RETURN d {.namespace, .name} } AS datasets,
       COLLECT { MATCH (j:Job) RETURN j {.namespace, .name} } AS jobs
