"""The front doors: the HTTP API (FastAPI: ``app``, ``routes/``) and the ``lineage`` command
line (``cli/``), with what only they need at this level (``errors``, ``guard``, ``auth``,
``encode``, ``receive``, ``logs``, ``metrics`` …). Wings:

- ``render``: answers as documents (the check, policy and provenance reports, the status page);
- ``services``: what combines ingest and impact for a route or a process (Marquez's legacy
  writes, the health cache, the API's background work, the policy webhook, the rehearsal);
- ``local``: the local services and demos the CLI starts (processes, MLflow's server, real
  producers, the demos);
- ``airflow``: the Airflow sensor, a plugin that imports nothing of ours.

``routes`` and ``cli`` use the wings; the wings never import ``routes`` or ``cli``."""
