"""The shop's nightly pipeline as an Airflow 3 DAG: the Spark demo's jobs, then the dbt build over
what Spark wrote, then one SQL task of the DAG's own (the overview dashboard, in DuckDB).

Airflow's OpenLineage provider reports the DAG run and each task run; the Spark and dbt runs name
their task run as parent, passed the way their integrations document it: Spark's listener reads
``spark.openlineage.parent*`` / ``rootParent*`` settings, dbt-ol reads ``OPENLINEAGE_PARENT_ID`` and
``OPENLINEAGE_ROOT_PARENT_ID``; the provider's macros give the values. The SQL task states its
lineage itself (inlets and outlets carrying OpenLineage datasets, with column lineage).

Before the overview is published, a lineage gate (api.airflow.sensor.LineageGateSensor) asks
lineage-graph whether the two marts it reads may be consumed: it runs whatever happened before it
(``trigger_rule="all_done"``), so it is the gate, not Airflow's own dependencies, that decides. On
a night when Spark's revenue job fails, the gate is closed (the job's latest run failed, upstream
of the KPIs), the overview does not run, and the gate task's log says why.

Where things are comes from the environment (``lineage demo --stack`` and the tests set it):
SHOP_WAREHOUSE (the files Spark writes), SHOP_SPARK_SUBMIT, SHOP_SPARK_PROPERTIES (the listener's
settings), SHOP_SPARK_PIPELINE, SHOP_DBT_BIN (dbt-ol's directory), SHOP_DBT_PROJECT, DBT_SHOP_DUCKDB
(the DuckDB file), SHOP_FAIL_REVENUE=1 to make Spark's revenue job fail, OPENLINEAGE_URL
(lineage-graph, which the gate asks too); PYTHONPATH holds lineage-graph's checkout (the sensor).
"""

from __future__ import annotations

import os
from datetime import datetime

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, task
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import schema_dataset

from api.airflow.sensor import LineageGateSensor

OL = "macros.OpenLineageProviderPlugin"
PARENT = {
    "parentJobNamespace": f"{{{{ {OL}.lineage_job_namespace() }}}}",
    "parentJobName": f"{{{{ {OL}.lineage_job_name(task_instance) }}}}",
    "parentRunId": f"{{{{ {OL}.lineage_run_id(task_instance) }}}}",
    "rootParentJobNamespace": f"{{{{ {OL}.lineage_root_job_namespace(task_instance) }}}}",
    "rootParentJobName": f"{{{{ {OL}.lineage_root_job_name(task_instance) }}}}",
    "rootParentRunId": f"{{{{ {OL}.lineage_root_run_id(task_instance) }}}}",
}
SPARK = (
    '"$SHOP_SPARK_SUBMIT" --master local[2] --properties-file "$SHOP_SPARK_PROPERTIES" '
    + " ".join(f"--conf spark.openlineage.{k}={v}" for k, v in PARENT.items())
    + ' "$SHOP_SPARK_PIPELINE" --warehouse "$SHOP_WAREHOUSE" --nights 1'
    + ' --fail-on-night "${SHOP_FAIL_REVENUE:-0}" --users 500 --orders 2000'
)
DBT = (
    f'export OPENLINEAGE_PARENT_ID="{{{{ {OL}.lineage_parent_id(task_instance) }}}}" '
    f'OPENLINEAGE_ROOT_PARENT_ID="{{{{ {OL}.lineage_root_parent_id(task_instance) }}}}" '
    'OPENLINEAGE_NAMESPACE=dbt_shop PATH="$SHOP_DBT_BIN:$PATH" && '
    'dbt-ol build --project-dir "$SHOP_DBT_PROJECT" --target-path "$SHOP_DBT_WORKDIR/target" '
    '--log-path "$SHOP_DBT_WORKDIR/logs"'
)

OVERVIEW_SQL = """
create schema if not exists dashboards;
create or replace table dashboards.shop_overview as
select k.country, k.revenue, k.avg_order_value, count(v.user_id) as vip_customers
from marts.country_kpis as k
left join marts.vip_customers as v on v.country = k.country
group by k.country, k.revenue, k.avg_order_value
"""


def _duckdb(name: str) -> Dataset:
    return Dataset(namespace=f"duckdb://{os.environ.get('DBT_SHOP_DUCKDB', 'shop.duckdb')}", name=name)


def _field(dataset: str, column: str, kind: str, subtype: str) -> cl.InputField:
    return cl.InputField(namespace=_duckdb(dataset).namespace, name=dataset, field=column,
                         transformations=[cl.Transformation(type=kind, subtype=subtype)])


KPIS, VIPS = "shop.marts.country_kpis", "shop.marts.vip_customers"
JOIN = [_field(KPIS, "country", "INDIRECT", "JOIN"), _field(VIPS, "country", "INDIRECT", "JOIN")]
OVERVIEW = Dataset(
    namespace=_duckdb("").namespace, name="shop.dashboards.shop_overview",
    facets={
        "schema": schema_dataset.SchemaDatasetFacet(fields=[
            schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in
            (("country", "varchar"), ("revenue", "double"), ("avg_order_value", "double"),
             ("vip_customers", "bigint"))]),
        "columnLineage": cl.ColumnLineageDatasetFacet(fields={
            "country": cl.Fields(inputFields=[_field(KPIS, "country", "DIRECT", "IDENTITY")]),
            "revenue": cl.Fields(inputFields=[_field(KPIS, "revenue", "DIRECT", "IDENTITY")]),
            "avg_order_value": cl.Fields(inputFields=[
                _field(KPIS, "avg_order_value", "DIRECT", "IDENTITY")]),
            "vip_customers": cl.Fields(inputFields=[_field(VIPS, "user_id", "DIRECT", "AGGREGATION")]),
        }, dataset=JOIN + [_field(KPIS, "country", "INDIRECT", "GROUP_BY")]),
    })

with DAG("shop_pipeline", start_date=datetime(2024, 6, 1), schedule=None, catchup=False,
         doc_md=__doc__, tags=["shop"]):
    spark = BashOperator(task_id="spark_shop", bash_command=SPARK)
    dbt = BashOperator(task_id="dbt_build", bash_command=DBT)

    @task(inlets=[_duckdb(KPIS), _duckdb(VIPS)], outlets=[OVERVIEW])  # type: ignore[untyped-decorator]
    def publish_overview() -> int:
        """The dashboard's table, built in DuckDB from two dbt marts."""
        import duckdb

        with duckdb.connect(os.environ["DBT_SHOP_DUCKDB"]) as con:
            con.execute(OVERVIEW_SQL)
            row = con.execute("select count(*) from dashboards.shop_overview").fetchone()
        return int(row[0]) if row else 0

    gate = LineageGateSensor(
        task_id="lineage_gate", url=os.environ.get("OPENLINEAGE_URL", "http://127.0.0.1:5000"),
        datasets=[(_duckdb(KPIS).namespace, KPIS), (_duckdb(VIPS).namespace, VIPS)],
        token=os.environ.get("OPENLINEAGE_API_KEY"), poke_interval=5, timeout=30,
        trigger_rule="all_done")

    spark >> dbt >> gate >> publish_overview()
