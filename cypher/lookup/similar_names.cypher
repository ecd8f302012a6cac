// Answers: datasets or jobs whose names are like a name that is not in the graph, for "did you
// mean": the whole name within two edits (full-text index `name_whole`), and names sharing a
// word within two edits (`name_words`), best first, so that a miss costs milliseconds however
// many names there are.
// Param $kind: 'dataset' or 'job'
// Param $whole: Lucene query text for the whole name, escaped, then ~2 (e.g. 'raw.userz~2'); null for none
// Param $words: Lucene query text: the name's words, each followed by ~ (e.g. 'raw~ userz~'); null for none
// Param $limit: how many of each to return
// Returns: namespace, name
// :param kind => 'dataset'
// :param whole => 'raw.userz~2'
// :param words => 'raw~ userz~'
// :param limit => 100
CALL () {
  WITH $whole AS query WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('name_whole', query, {limit: $limit}) YIELD node
  RETURN node
  UNION
  WITH $words AS query WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('name_words', query, {limit: $limit}) YIELD node
  RETURN node
}
WITH node
WHERE ($kind = 'dataset' AND node:Dataset) OR ($kind = 'job' AND node:Job)
RETURN node.namespace AS namespace, node.name AS name
ORDER BY namespace, name
