"""Reading what a SQL model does to each output column (impact.change.sql_expressions), for the policy
rehearsal of a dbt branch."""

from __future__ import annotations

import pytest

from impact.change.sql_expressions import transformation

MODEL = """
with source as (select * from "shop"."raw"."users"),
renamed as (
    select
        user_id,
        sha256(lower(email)) as email_hash,   -- masked
        email as contact,                     -- a copy under another name
        cast(signup_date as date) as signup_date,
        'x, y' as label,
        count(*) as n
    from source
    group by 1, 2, 3, 4
)
select distinct user_id, email_hash, contact, signup_date, n, full_name,
       upper(country) as "Country", md5(contact) as contact_md5, max(n) over () as most
from renamed
"""


@pytest.mark.parametrize(("column", "subtype", "masking"), [
    ("user_id", "IDENTITY", False),
    ("email_hash", "TRANSFORMATION", True),
    ("contact", "IDENTITY", False),
    ("signup_date", "TRANSFORMATION", False),
    ("label", "TRANSFORMATION", False),
    ("n", "AGGREGATION", False),
    ("full_name", "IDENTITY", False),  # passed through by select *
    ("Country", "TRANSFORMATION", False),
    ("contact_md5", "TRANSFORMATION", True),
    ("most", "AGGREGATION", False),
])
def test_each_column_as_its_select_items_make_it(column: str, subtype: str, masking: bool) -> None:
    found = transformation(MODEL, column)
    assert (found.type, found.subtype, found.masking) == ("DIRECT", subtype, masking)


def test_a_masking_function_by_its_prefix_and_a_copy_of_a_masked_column() -> None:
    sql = "with a as (select mask_email(email) as e from t) select e as email from a"
    assert transformation(sql, "email").masking
    assert transformation("select redact(ssn) as ssn from t", "ssn").masking


def test_a_comment_or_a_string_never_defines_a_column() -> None:
    sql = "select email -- md5(email) as email\n, 'md5(email) as email' as note from t"
    assert transformation(sql, "email").subtype == "IDENTITY"
