"""Write the files the dbt project reads, in the Spark demo's layout, without Spark.

    python examples/dbt_shop/make_raw.py --warehouse /tmp/shop

writes raw/users/part-00000.csv, raw/orders/part-00000.csv (what the demo's load job writes) and
marts/revenue_by_country/part-00000.parquet (what its revenue job writes). With the Spark demo
(`lineage demo --stack`) Spark writes them instead and this script is not used.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ["FR", "DE", "NL", "ES", "IT", "BE", "PL", "SE"]


def write(warehouse: Path, users: int = 200, orders: int = 800) -> None:
    """The same rows the Spark demo's load job makes for the same sizes."""
    countries = {u: COUNTRIES[u % len(COUNTRIES)] for u in range(1, users + 1)}
    user_rows: list[dict[str, object]] = [
        {"user_id": u, "email": f"user{u}@example.com", "full_name": f"User {u}", "country": country,
         "signup_date": (date(2024, 6, 1) - timedelta(days=u % 365)).isoformat()}
        for u, country in countries.items()]
    orders_of = [(o, (o * 7919) % users + 1, ((o * 37) % 20000) / 100) for o in range(1, orders + 1)]
    order_rows: list[dict[str, object]] = [
        {"order_id": o, "user_id": user, "amount": amount,
         "ordered_at": datetime.fromtimestamp(1717200000 + o * 60, UTC).strftime("%Y-%m-%d %H:%M:%S")}
        for o, user, amount in orders_of]
    for table, rows in (("users", user_rows), ("orders", order_rows)):
        out = warehouse / "raw" / table
        out.mkdir(parents=True, exist_ok=True)
        with (out / "part-00000.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    revenue: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for _, user, amount in orders_of:
        revenue[countries[user]] += amount
        count[countries[user]] += 1
    out = warehouse / "marts" / "revenue_by_country"
    out.mkdir(parents=True, exist_ok=True)
    names = sorted(revenue)
    pq.write_table(pa.table({"country": names, "revenue": [round(revenue[c], 2) for c in names],
                             "orders": [count[c] for c in names]}), out / "part-00000.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--orders", type=int, default=800)
    args = parser.parse_args()
    write(args.warehouse, args.users, args.orders)


if __name__ == "__main__":
    main()
