-- FerretDB 1.24 on PostgreSQL: by-_id reads that read an index (docs/deploy.md "Store").
--
-- FerretDB 1.24 turns a filter's equality into jsonb containment, `_jsonb->'_id' @> '"<id>"'`,
-- while the indexes it creates are btree indexes on `(_jsonb->'_id')`, which cannot answer `@>`:
-- every find, update and delete, even by `_id`, scans its collection's table. A GIN index on the
-- same expression answers `@>`. This script gives every FerretDB collection table in this database
-- one, now and (through an event trigger) for every collection FerretDB creates later.
-- FerretDB runs its queries as prepared statements with the field name as a parameter
-- (`_jsonb->$1 @> $2`): a generic plan cannot match the index's expression, so the database is set
-- to plan every execution with its values (plan_cache_mode), for sessions that start afterwards.
-- Idempotent; run it as a superuser of the database FerretDB uses, then restart FerretDB (its
-- pooled connections keep the plans and settings they have):
--   psql "$FERRETDB_POSTGRESQL_URL" -v ON_ERROR_STOP=1 -f scripts/ferretdb-postgresql-id-indexes.sql

DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET plan_cache_mode = force_custom_plan', current_database());
END;
$$;

CREATE OR REPLACE FUNCTION kiln_ferretdb_id_index(schema_name text, table_name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- FerretDB's own metadata tables, and tables of anything else, are left alone.
  IF table_name LIKE '\_ferretdb\_%'
     OR to_regclass(format('%I.%I', schema_name, '_ferretdb_database_metadata')) IS NULL
     OR NOT EXISTS (
       SELECT 1 FROM pg_attribute
       WHERE attrelid = to_regclass(format('%I.%I', schema_name, table_name))
         AND attname = '_jsonb' AND NOT attisdropped)
  THEN
    RETURN;
  END IF;
  EXECUTE format(
    'CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((_jsonb -> ''_id'') jsonb_path_ops)',
    left(table_name, 48) || '_kiln_id_gin', schema_name, table_name);
END;
$$;

CREATE OR REPLACE FUNCTION kiln_ferretdb_id_index_on_create() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  created record;
BEGIN
  FOR created IN
    SELECT n.nspname::text AS schema_name, c.relname::text AS table_name
    FROM pg_event_trigger_ddl_commands() AS d
    JOIN pg_class AS c ON c.oid = d.objid
    JOIN pg_namespace AS n ON n.oid = c.relnamespace
    WHERE d.command_tag = 'CREATE TABLE' AND c.relkind = 'r'
  LOOP
    PERFORM kiln_ferretdb_id_index(created.schema_name, created.table_name);
  END LOOP;
END;
$$;

DROP EVENT TRIGGER IF EXISTS kiln_ferretdb_id_index;
CREATE EVENT TRIGGER kiln_ferretdb_id_index ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
  EXECUTE FUNCTION kiln_ferretdb_id_index_on_create();

-- The collections that exist already.
SELECT count(*) AS tables_looked_at FROM (
  SELECT kiln_ferretdb_id_index(n.nspname::text, c.relname::text)
  FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND c.relname NOT LIKE '\_ferretdb\_%'
) AS done;
