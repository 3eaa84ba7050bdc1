-- The catalog of the exposed schemas as one JSON document (parameter: schemas, a text array).
select json_build_object(
  'server_version_num', current_setting('server_version_num')::int,
  'schemas', coalesce((
    select json_agg(n.nspname order by n.nspname) from pg_namespace n where n.nspname = any(%(schemas)s)
  ), '[]'),
  'relations', coalesce((
    select json_agg(json_build_object(
      'oid', c.oid,
      'schema', n.nspname,
      'name', c.relname,
      'kind', c.relkind,
      'comment', obj_description(c.oid, 'pg_class'),
      'columns', coalesce((
        select json_agg(json_build_object(
          'name', a.attname,
          'position', a.attnum,
          'type', format_type(a.atttypid, a.atttypmod),
          'type_oid', a.atttypid,
          'not_null', a.attnotnull,
          'has_default', a.atthasdef,
          'identity', nullif(a.attidentity, ''),
          'generated', a.attgenerated <> '',
          'comment', col_description(c.oid, a.attnum)
        ) order by a.attnum)
        from pg_attribute a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      ), '[]')
    ) order by n.nspname, c.relname)
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = any(%(schemas)s)
      and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and not c.relispartition
  ), '[]')
)
