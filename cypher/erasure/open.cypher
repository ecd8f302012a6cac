// Answers: records an erasure request (the `erasure_open` command: docs/graph-model.md,
// "Erasure"): its plan as it was when it was opened, under the salted hash of the subject's
// reference, never the reference or the key itself. Opening one again with the same reference
// keeps the first.
// Param $ref: the salted hash of the subject's reference (hex)
// Param $keys: the key columns ('namespace:dataset.column')
// Param $places: the plan's places as JSON (step, dataset, action, keyColumns, producers, after)
// Param $models: the model versions to retrain as JSON (namespace, name, version)
// Param $deadlineDays: days until the request is overdue
// Param $at: when it was opened (ISO 8601): a replay of the event log sets the same times
// Returns: ref, openedAt, created (false when a request with this reference was open already)
// :param ref => '9f2c0e7b1d3a4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6'
// :param keys => ['postgres://warehouse:5432:raw.users.id']
// :param places => '[]'
// :param models => '[]'
// :param deadlineDays => 30.0
// :param at => '2026-11-27T09:00:00Z'
MERGE (x:ErasureRequest {ref: $ref})
ON CREATE SET x.openedAt = datetime($at), x.keys = $keys, x.places = $places, x.models = $models,
              x.deadline = datetime($at) + duration({seconds: toInteger($deadlineDays * 86400)}),
              x.created = true
WITH x, x.created AS created
REMOVE x.created
RETURN x.ref AS ref, x.openedAt AS openedAt, coalesce(created, false) AS created
