// Answers: every namespace, dataset and job with the tags that decide who may see it, and the
// columns that carry tags: what api.access hides from a grant (docs/graph-model.md, "Access").
// Soft-deleted nodes are included: a name stays hidden after its node is hidden.
// Returns: kind ('namespace', 'dataset' or 'job'), namespace, name, tags, fieldTags (each
//   'column<U+001F>tag': a producer's tags facet naming the field, or a tag set through the API)
MATCH (d:Dataset)
RETURN 'dataset' AS kind, d.namespace AS namespace, d.name AS name,
       coalesce(d.tags, []) + [(d)-[:TAGGED]->(t:Tag) | t.name] AS tags,
       coalesce(d.fieldTags, []) +
         [(d)-[:HAS_COLUMN]->(c:Column)-[:TAGGED]->(g:Tag) | c.name + '\u001f' + g.name] AS fieldTags
UNION ALL
MATCH (j:Job)
RETURN 'job' AS kind, j.namespace AS namespace, j.name AS name,
       coalesce(j.tags, []) + [(j)-[:TAGGED]->(t:Tag) | t.name] AS tags, [] AS fieldTags
UNION ALL
MATCH (n:Namespace)
RETURN 'namespace' AS kind, n.name AS namespace, n.name AS name, [] AS tags, [] AS fieldTags
