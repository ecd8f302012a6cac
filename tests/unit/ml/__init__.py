"""Unit tests of the ml wing: MLflow (ingest.mlflow) and model provenance (impact.ml)."""
