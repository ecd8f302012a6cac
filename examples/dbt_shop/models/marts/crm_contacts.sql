-- The CRM export: copies the raw e-mail address (the PII copy a privacy review should find).
select user_id, email, full_name, country
from {{ source('raw', 'users') }}
