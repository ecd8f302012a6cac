// Answers: which constraints the lineage graph has, to check that the schema is applied.
// Returns: name, type, labels and properties of each constraint.
SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties
RETURN name, type, labelsOrTypes, properties ORDER BY name
