{#- Registers the files other jobs write (the Spark demo's warehouse, or make_raw.py's copy of it)
    as views in schemas `raw` and `spark`, like external tables in a warehouse. The directory comes
    from SHOP_WAREHOUSE. -#}
{% macro register_raw() %}
  {%- set wh = env_var('SHOP_WAREHOUSE') -%}
  create schema if not exists raw;
  create schema if not exists spark;
  create or replace view raw.users as
    select * from read_csv_auto('{{ wh }}/raw/users/*.csv', header = true);
  create or replace view raw.orders as
    select * from read_csv_auto('{{ wh }}/raw/orders/*.csv', header = true);
  create or replace view spark.revenue_by_country as
    select * from read_parquet('{{ wh }}/marts/revenue_by_country/*.parquet');
{% endmacro %}
{#- dbt's default schema naming prefixes custom schemas with the target's; plain names read better. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ custom_schema_name if custom_schema_name else target.schema }}
{%- endmacro %}
