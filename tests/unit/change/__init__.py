"""Unit tests of the change wing: the pre-deploy check (impact.change): change documents, dbt, SQL."""
