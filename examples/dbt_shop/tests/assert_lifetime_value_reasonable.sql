-- Fails (returns rows) when a customer's lifetime value is above var('max_lifetime_value'):
-- set it low to make this test, and so the build of everything downstream, fail on purpose.
select user_id, lifetime_value
from {{ ref('customer_value') }}
where lifetime_value > {{ var('max_lifetime_value') }}
