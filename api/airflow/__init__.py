"""Airflow's side: ``sensor``, a sensor that waits on lineage-graph's gate. It runs inside
Airflow, so it imports nothing of lineage-graph."""
