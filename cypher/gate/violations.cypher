// Answers: the stored violations a gate counts (impact.policy.gate, when the policy watch keeps
// them current): open, not waived, of rules other than metadata ones (what a dataset lacks says
// nothing of its data), anchored at the datasets the gate looks at.
// Param $anchors: 'namespace:name' of the dataset gated and those upstream of it
// Returns: rule, severity, kind, anchor, targetDataset, what
// :param anchors => ['shop:raw.users']
UNWIND $anchors AS anchor
MATCH (v:PolicyViolation {anchor: anchor})
WHERE v.clearedAt IS NULL AND v.counts AND v.kind <> 'metadata'
RETURN v.rule AS rule, v.severity AS severity, v.kind AS kind, v.anchor AS anchor,
       v.targetDataset AS targetDataset, v.what AS what
ORDER BY v.key
