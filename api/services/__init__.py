"""What the front doors run that combines ingest and impact: Marquez's legacy writes as
the API takes them (``marquez_writes``), lineage health kept between requests (``health_cache``),
what ``lineage serve`` runs beside the API (``background``), the policy webhook (``webhook``) and
the policy rules on a rehearsed change (``rehearsal``). No FastAPI ``Request`` here."""
