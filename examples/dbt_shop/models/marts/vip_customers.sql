select user_id, email_hash, country, lifetime_value
from {{ ref('customer_value') }}
where lifetime_value > 500
