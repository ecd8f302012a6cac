"""The Neo4j side of lineage-graph: settings, the local server, the query library, schema, writes and reads."""
