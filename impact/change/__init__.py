"""A proposed change and the pre-deploy check (``lineage check``, ``POST /api/v1/check``).

``document`` (the change file's shapes), ``read`` (a change file, SQL or a dbt manifest into
changes), ``sql`` and ``sql_expressions`` (what compiled SQL does to each column), ``dbt`` (a
dbt pull request as changes), ``check`` (what the changes break, against the real graph). Other
wings use ``read`` and ``check``."""
