// Answers: an erasure request as it was recorded (cypher/erasure/open.cypher).
// Param $ref: the salted hash of the subject's reference (hex)
// Returns: ref, openedAt, deadline, keys, places (JSON), models (JSON) (or no row)
// :param ref => '9f2c0e7b1d3a4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6'
MATCH (x:ErasureRequest {ref: $ref})
RETURN x.ref AS ref, x.openedAt AS openedAt, x.deadline AS deadline, x.keys AS keys,
       x.places AS places, x.models AS models
