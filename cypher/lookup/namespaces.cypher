// Answers: every namespace, with how many datasets and jobs it holds (not counting those deleted:
// a soft delete, `lineage delete`, Marquez's DELETE).
// Returns: name, datasets, jobs
MATCH (n) WHERE (n:Dataset OR n:Job) AND n.deleted IS NULL
RETURN n.namespace AS name, count(CASE WHEN n:Dataset THEN 1 END) AS datasets,
       count(CASE WHEN n:Job THEN 1 END) AS jobs
ORDER BY name
