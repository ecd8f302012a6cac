"""Spark: ``env`` (the OpenLineage listener's jar, assembled from Maven Central by this
package's ``pom.xml``, and the configuration that points it at us) and ``load`` (``lineage ingest
--engine spark``)."""
