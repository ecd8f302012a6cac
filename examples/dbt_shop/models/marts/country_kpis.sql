-- Reads only what the Spark revenue job writes.
select
    country,
    revenue,
    orders,
    revenue / orders as avg_order_value
from {{ source('spark', 'revenue_by_country') }}
