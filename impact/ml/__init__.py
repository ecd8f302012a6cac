"""Models in the lineage: which model versions the data of a dataset or column trained
(``models``), and a model version's provenance for an audit (``provenance``)."""
