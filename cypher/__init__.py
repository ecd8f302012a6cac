"""The named Cypher library; see graph.queries for the file format. Shipped as package data."""
