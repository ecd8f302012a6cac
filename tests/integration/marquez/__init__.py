"""Integration tests of the marquez wing: Marquez's API, clients and models (impact.marquez, api.routes' Marquez resources)."""
