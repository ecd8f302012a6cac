// Answers: datasets or jobs whose names are like a name that is not in the graph, for "did you
// mean": each word of the name matched within two edits (Lucene's fuzzy terms on the full-text
// index `names`), best first, so that a miss costs milliseconds however many names there are.
// Param $kind: 'dataset' or 'job'
// Param $query: Lucene query text: the name's words, each followed by ~ (e.g. 'ordrs~ public~')
// Param $limit: how many to return
// Returns: namespace, name, score (Lucene's)
// :param kind => 'dataset'
// :param query => 'ordrs~ public~'
// :param limit => 50
CALL db.index.fulltext.queryNodes('name_words', $query, {limit: $limit}) YIELD node, score
WITH node, score
WHERE ($kind = 'dataset' AND node:Dataset) OR ($kind = 'job' AND node:Job)
RETURN node.namespace AS namespace, node.name AS name, score
ORDER BY score DESC, namespace, name
