"""A small shop's nightly data platform, as ordinary PySpark jobs with no lineage code in them.

    raw/users.csv, raw/orders.csv  (written by the load jobs, a few thousand rows)
      -> staging/users_clean       (e-mail addresses hashed)
      -> marts/orders_enriched     (orders joined with users)
      -> marts/revenue_by_country  (an aggregate)
      -> dashboards/revenue        (what the "dashboard" job extracts)
    raw/users -> ml/user_features  (copies the raw e-mail: the privacy leak to find)

Run it the way production runs Spark, e.g. with the OpenLineage listener configured by a
properties file (``lineage spark-conf`` writes one):

    spark-submit --properties-file openlineage.properties examples/spark_shop/pipeline.py \\
        --warehouse /tmp/shop --nights 2 --fail-on-night 2

``--fail-on-night N`` makes the revenue job of night N read a bad column (the country, cast to a
number), so it fails at run time and the dashboard is built from stale revenue.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

COUNTRIES = ["FR", "DE", "NL", "ES", "IT", "BE", "PL", "SE"]


def load_raw(spark: SparkSession, wh: str, users: int, orders: int) -> None:
    countries = F.array(*[F.lit(c) for c in COUNTRIES])
    (spark.range(1, users + 1).withColumnRenamed("id", "user_id")
     .withColumn("email", F.concat(F.lit("user"), F.col("user_id").cast("string"), F.lit("@example.com")))
     .withColumn("full_name", F.concat(F.lit("User "), F.col("user_id").cast("string")))
     .withColumn("country", countries[F.col("user_id") % len(COUNTRIES)])
     .withColumn("signup_date",
                 F.date_sub(F.lit("2024-06-01").cast("date"), (F.col("user_id") % 365).cast("int")))
     .write.mode("overwrite").option("header", True).csv(f"{wh}/raw/users"))
    (spark.range(1, orders + 1).withColumnRenamed("id", "order_id")
     .withColumn("user_id", (F.col("order_id") * 7919) % users + 1)
     .withColumn("amount", ((F.col("order_id") * 37) % 20000) / 100)
     .withColumn("ordered_at", F.timestamp_seconds(F.lit(1717200000) + F.col("order_id") * 60))
     .write.mode("overwrite").option("header", True).csv(f"{wh}/raw/orders"))


def _csv(spark: SparkSession, path: str) -> DataFrame:
    return spark.read.option("header", True).option("inferSchema", True).csv(path)


def clean_users(spark: SparkSession, wh: str) -> None:
    users = _csv(spark, f"{wh}/raw/users")
    (users.select("user_id", F.sha2(F.lower(F.col("email")), 256).alias("email_hash"), "country",
                  "signup_date")
     .write.mode("overwrite").parquet(f"{wh}/staging/users_clean"))


def enrich_orders(spark: SparkSession, wh: str) -> None:
    orders = _csv(spark, f"{wh}/raw/orders")
    users = spark.read.parquet(f"{wh}/staging/users_clean")
    (orders.join(users, "user_id")
     .select("order_id", "user_id", "amount", "ordered_at", "country", "email_hash")
     .write.mode("overwrite").parquet(f"{wh}/marts/orders_enriched"))


def revenue_by_country(spark: SparkSession, wh: str, bad_column: bool = False) -> None:
    orders = spark.read.parquet(f"{wh}/marts/orders_enriched")
    amount = F.col("country").cast("decimal(12,2)") if bad_column else F.col("amount")
    (orders.groupBy("country")
     .agg(F.sum(amount).alias("revenue"), F.count("order_id").alias("orders"))
     .write.mode("overwrite").parquet(f"{wh}/marts/revenue_by_country"))


def dashboard(spark: SparkSession, wh: str) -> None:
    revenue = spark.read.parquet(f"{wh}/marts/revenue_by_country")
    (revenue.select("country", "revenue", (F.col("revenue") / F.col("orders")).alias("avg_order"))
     .orderBy(F.desc("revenue"))
     .write.mode("overwrite").parquet(f"{wh}/dashboards/revenue"))


def ml_user_features(spark: SparkSession, wh: str) -> None:
    users = _csv(spark, f"{wh}/raw/users")
    orders = _csv(spark, f"{wh}/raw/orders")
    per_user = orders.groupBy("user_id").agg(F.count("order_id").alias("order_count"),
                                             F.sum("amount").alias("lifetime_value"))
    (users.join(per_user, "user_id", "left")
     .select("user_id", "email", "country", "order_count", "lifetime_value")
     .write.mode("overwrite").parquet(f"{wh}/ml/user_features"))


def night(spark: SparkSession, wh: str, users: int, orders: int, fail: bool) -> list[str]:
    """One nightly run; each job runs even if an earlier one failed (as separately scheduled jobs
    would). Returns the names of the jobs that failed."""
    failed = []
    steps: list[tuple[str, Callable[[], object]]] = [("load_raw", lambda: load_raw(spark, wh, users, orders)),
             ("clean_users", lambda: clean_users(spark, wh)),
             ("enrich_orders", lambda: enrich_orders(spark, wh)),
             ("revenue_by_country", lambda: revenue_by_country(spark, wh, bad_column=fail)),
             ("dashboard", lambda: dashboard(spark, wh)),
             ("ml_user_features", lambda: ml_user_features(spark, wh))]
    for name, step in steps:
        try:
            step()
        except Exception as e:  # report and go on, like independent scheduled jobs
            print(f"job {name} failed: {str(e).splitlines()[0]}", file=sys.stderr)
            failed.append(name)
    return failed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warehouse", required=True, help="folder of the demo's tables")
    p.add_argument("--nights", type=int, default=1)
    p.add_argument("--fail-on-night", type=int, default=0, help="make the revenue job fail that night")
    p.add_argument("--users", type=int, default=2000)
    p.add_argument("--orders", type=int, default=8000)
    a = p.parse_args()
    spark = SparkSession.builder.appName("shop_nightly").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    failed: list[str] = []
    for n in range(1, a.nights + 1):
        failed += night(spark, a.warehouse, a.users, a.orders, fail=n == a.fail_on_night)
        print(f"night {n} done", file=sys.stderr)
    spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
