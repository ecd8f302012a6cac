"""The Neo4j side of lineage-graph: settings, local server, query library, schema, reads, writes."""
