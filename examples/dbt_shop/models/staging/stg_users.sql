-- Users without their e-mail address in clear: the address is hashed (PII masked).
select
    user_id,
    sha256(lower(email)) as email_hash,
    country,
    cast(signup_date as date) as signup_date
from {{ source('raw', 'users') }}
