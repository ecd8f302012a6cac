select
    order_id,
    user_id,
    cast(amount as decimal(12, 2)) as amount,
    cast(ordered_at as timestamp) as ordered_at
from {{ source('raw', 'orders') }}
