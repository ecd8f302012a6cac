"""From root cause to repair: which runs read bad data, what to rerun in which order, and the
versions to roll back to (docs/graph-model.md, "Repair")."""
