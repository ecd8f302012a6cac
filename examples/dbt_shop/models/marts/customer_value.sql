-- What each customer has spent, by country.
select
    u.user_id,
    u.email_hash,
    u.country,
    count(o.order_id) as orders,
    sum(o.amount) as lifetime_value
from {{ ref('stg_users') }} as u
join {{ ref('stg_orders') }} as o on o.user_id = u.user_id
group by u.user_id, u.email_hash, u.country
