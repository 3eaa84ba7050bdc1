-- The catalog of the exposed schemas as one JSON document (svc/catalog/_read.py turns it into facts).
-- Parameters: schemas (text[], in configured order) and roles (text[], configured database roles; privileges are
-- read for current_user first, then for those of them that exist). PostgreSQL 14 or later.
--
-- Cost grows with the size of the catalog, not with the product of its parts: each part is aggregated per relation
-- (or constraint, or index, or type) in its own CTE from set-based joins, and joined to the others by oid. The
-- planner's cost estimate matters too: above jit_above_cost PostgreSQL compiles this (large) statement first, which
-- takes longer than running it. So per-object index lookups (each estimated like a page read) are kept to one per
-- relation, and obj_description()/col_description() (a query per call) are not used.
with recursive
exposed as (
  select n.oid, n.nspname, min(s.ord) as ord
  from unnest(%(schemas)s::text[]) with ordinality as s (name, ord)
  join pg_namespace n on n.nspname = s.name
  group by n.oid, n.nspname
),
role as (
  select current_user::text as name, 0::bigint as ord
  union all
  select r.name, min(r.ord)
  from unnest(%(roles)s::text[]) with ordinality as r (name, ord)
  where r.name <> current_user and exists (select from pg_roles where rolname = r.name)
  group by r.name
),
rel as (
  select c.oid, c.relname, c.relkind, c.reltype, c.relrowsecurity, c.relforcerowsecurity, c.relhasrules, n.nspname
  from pg_class c
  join exposed n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p', 'v', 'm', 'f') and not c.relispartition
),
-- Functions and procedures, less the constructors PostgreSQL makes for a range or multirange type (its internal
-- dependencies): they belong to the type, not to the API.
fn as (
  select p.*, n.nspname
  from pg_proc p
  join exposed n on n.oid = p.pronamespace
  where p.prokind in ('f', 'p')
    and p.oid not in (select d.objid from pg_depend d where d.classid = 'pg_proc'::regclass and d.deptype = 'i')
),

-- --- types ------------------------------------------------------------------------------------------------------

-- What a type refers to: an array its element, a domain its base, a range its subtype, a multirange its range, a
-- composite type (not a relation's row type) its attributes' types.
type_reference (oid, referenced) as materialized (
  select t.oid, t.typelem from pg_type t where t.typcategory = 'A' and t.typelem <> 0
  union all
  select t.oid, t.typbasetype from pg_type t where t.typtype = 'd'
  union all
  select g.rngtypid, g.rngsubtype from pg_range g
  union all
  select g.rngmultitypid, g.rngtypid from pg_range g
  union all
  select c.reltype, a.atttypid
  from pg_class c join pg_attribute a on a.attrelid = c.oid
  where c.relkind = 'c' and a.attnum > 0 and not a.attisdropped
),
-- The types the facts start from: the exposed schemas' own, and those of columns and function signatures. One
-- array: the planner multiplies its estimate of a recursive query's start at each step, so the start is kept small.
type_seed as (
  select array(
    select t.oid from pg_type t join exposed n on n.oid = t.typnamespace
    union
    select a.atttypid from rel r join pg_attribute a on a.attrelid = r.oid where a.attnum > 0 and not a.attisdropped
    union
    select unnest(coalesce(f.proallargtypes, f.proargtypes::oid[])) from fn f
    union
    select f.prorettype from fn f
  ) as oids
),
-- Every type the facts mention: the seeds and what they refer to, transitively.
type_id (oid) as (
  select unnest(oids) from type_seed
  union
  select r.referenced from type_id ti join type_reference r on r.oid = ti.oid
),
domain_checks as (
  select c.contypid, json_agg(json_build_object('name', c.conname, 'expression', pg_get_constraintdef(c.oid))
    order by c.conname) as checks
  from pg_constraint c
  where c.contypid <> 0 and c.contype = 'c'
  group by c.contypid
),
enum_labels as (
  select e.enumtypid, json_agg(e.enumlabel order by e.enumsortorder) as labels from pg_enum e group by e.enumtypid
),
composite_attributes as (
  select c.reltype, json_agg(json_build_object(
      'name', a.attname, 'position', a.attnum, 'type_oid', a.atttypid::bigint, 'not_null', a.attnotnull
    ) order by a.attnum) as attributes
  from pg_class c
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  where c.relkind = 'c'
  group by c.reltype
),
-- A domain's ultimate base type, and the typmod closest to the domain (domains over domains are followed).
domain_base (oid, base, typmod) as (
  select t.oid, t.typbasetype, t.typtypmod from pg_type t where t.typtype = 'd'
  union all
  select d.oid, b.typbasetype, case when d.typmod <> -1 then d.typmod else b.typtypmod end
  from domain_base d join pg_type b on b.oid = d.base and b.typtype = 'd'
),
domain_resolved as (
  select d.oid, d.base, d.typmod from domain_base d join pg_type b on b.oid = d.base where b.typtype <> 'd'
),
types as (
  select json_agg(json_build_object(
      'oid', t.oid::bigint,
      'schema', n.nspname,
      'name', t.typname,
      -- format_type leaves out the schema of a type (an array's element type) on the search path; the facts always
      -- name it, whatever the path. Columns' types are named the same way.
      'sql_name', case when en.nspname <> 'pg_catalog' and pg_type_is_visible(e.oid) then quote_ident(en.nspname) || '.'
        else '' end || format_type(t.oid, null),
      'kind', t.typtype,
      'category', t.typcategory,
      'element_oid', case when t.typcategory = 'A' then nullif(t.typelem, 0)::bigint end,
      'base_oid', nullif(t.typbasetype, 0)::bigint,
      'base_typmod', t.typtypmod,
      'domain_not_null', t.typnotnull,
      'domain_checks', dc.checks,
      'enum_labels', el.labels,
      'attributes', ca.attributes,
      'range_subtype_oid', rg.rngsubtype::bigint,
      'multirange_range_oid', mr.rngtypid::bigint,
      'relation_oid', case when tc.relkind <> 'c' then t.typrelid::bigint end,
      'comment', ds.description
    ) order by t.oid) as types
  from type_id ti
  join pg_type t on t.oid = ti.oid
  join pg_namespace n on n.oid = t.typnamespace
  join pg_type e on e.oid = case when t.typcategory = 'A' and t.typelem <> 0 then t.typelem else t.oid end
  join pg_namespace en on en.oid = e.typnamespace
  left join pg_class tc on tc.oid = t.typrelid
  left join domain_checks dc on dc.contypid = t.oid
  left join enum_labels el on el.enumtypid = t.oid
  left join composite_attributes ca on ca.reltype = t.oid
  left join pg_range rg on rg.rngtypid = t.oid
  left join pg_range mr on mr.rngmultitypid = t.oid
  left join pg_description ds on ds.objoid = t.oid and ds.classoid = 'pg_type'::regclass and ds.objsubid = 0
),

-- --- privileges -------------------------------------------------------------------------------------------------

relation_privilege as (
  select r.oid, o.name as role, o.ord,
    array_remove(array[
      case when has_table_privilege(o.name, r.oid, 'SELECT') then 'SELECT' end,
      case when has_table_privilege(o.name, r.oid, 'INSERT') then 'INSERT' end,
      case when has_table_privilege(o.name, r.oid, 'UPDATE') then 'UPDATE' end,
      case when has_table_privilege(o.name, r.oid, 'DELETE') then 'DELETE' end
    ], null) as privileges
  from rel r cross join role o
),
relation_privileges as (
  select oid, json_object_agg(role, privileges order by ord) as privileges from relation_privilege group by oid
),

-- --- columns ----------------------------------------------------------------------------------------------------

-- A relation's comments (its own under 0, its columns' under their numbers) and its columns' defaults: one index
-- lookup per relation, whatever the (possibly stale) statistics of pg_description and pg_attrdef say.
relation_text as materialized (
  select r.oid,
    (select jsonb_object_agg(d.objsubid, d.description) from pg_description d
      where d.objoid = r.oid and d.classoid = 'pg_class'::regclass) as comments,
    (select jsonb_object_agg(ad.adnum, pg_get_expr(ad.adbin, ad.adrelid)) from pg_attrdef ad
      where ad.adrelid = r.oid) as defaults
  from rel r
),

column_facts as (
  select a.attrelid, a.attnum, a.attname, a.atttypid, a.attnotnull, a.atthasdef, a.attidentity, a.attgenerated,
    -- Named as types' sql_name is (the schema always written).
    case when en.nspname <> 'pg_catalog' and pg_type_is_visible(e.oid) then quote_ident(en.nspname) || '.' else ''
    end || format_type(a.atttypid, a.atttypmod) as type,
    coalesce(d.base, a.atttypid) as base,
    case when a.atttypmod <> -1 or d.oid is null then a.atttypmod else d.typmod end as typmod,
    rt.defaults ->> a.attnum::text as default_text,
    rt.comments ->> a.attnum::text as description,
    -- Without column grants (attacl), a column's privileges are its table's (read for the relation); only a column
    -- with grants of its own is checked, role by role.
    case when a.attacl is not null then (
      select json_object_agg(o.name, array_remove(array[
          case when has_column_privilege(o.name, a.attrelid, a.attnum, 'SELECT') then 'SELECT' end,
          case when has_column_privilege(o.name, a.attrelid, a.attnum, 'INSERT') then 'INSERT' end,
          case when has_column_privilege(o.name, a.attrelid, a.attnum, 'UPDATE') then 'UPDATE' end
        ], null) order by o.ord)
      from role o) end as privileges
  from relation_text rt
  join pg_attribute a on a.attrelid = rt.oid and a.attnum > 0 and not a.attisdropped
  join pg_type t on t.oid = a.atttypid
  join pg_type e on e.oid = case when t.typcategory = 'A' and t.typelem <> 0 then t.typelem else t.oid end
  join pg_namespace en on en.oid = e.typnamespace
  left join domain_resolved d on d.oid = a.atttypid
),
columns as (
  select c.attrelid, json_agg(json_build_object(
      'name', c.attname,
      'position', c.attnum,
      'type', c.type,
      'type_oid', c.atttypid::bigint,
      'not_null', c.attnotnull,
      'has_default', c.atthasdef,
      'identity', nullif(c.attidentity, ''),
      'generated', c.attgenerated <> '',
      'comment', c.description,
      'default', c.default_text,
      -- typmods: varchar(n)/char(n) store n + 4; numeric(p, s) stores ((p << 16) | s) + 4, s in 11 signed bits.
      'max_length', case when c.base in ('bpchar'::regtype, 'varchar'::regtype) and c.typmod >= 4
        then c.typmod - 4 end,
      'numeric_precision', case when c.base = 'numeric'::regtype and c.typmod >= 4
        then ((c.typmod - 4) >> 16) & 65535 end,
      'numeric_scale', case when c.base = 'numeric'::regtype and c.typmod >= 4
        then (((c.typmod - 4) & 2047) # 1024) - 1024 end,
      'privileges', c.privileges
    ) order by c.attnum) as columns
  from column_facts c
  group by c.attrelid
),

-- --- indexes ----------------------------------------------------------------------------------------------------

index_key as (
  select i.indexrelid, json_agg(json_build_object(
      'column', a.attname,
      'expression', case when k.attnum = 0 then pg_get_indexdef(i.indexrelid, k.n::integer, true) end,
      'opclass', oc.opcname,
      'descending', (i.indoption[k.n - 1] & 1) = 1
    ) order by k.n) as columns
  from rel r
  join pg_index i on i.indrelid = r.oid
  cross join lateral unnest(i.indkey::int2[]) with ordinality as k (attnum, n)
  join pg_opclass oc on oc.oid = i.indclass[k.n - 1]
  left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum and k.attnum <> 0
  where k.n <= i.indnkeyatts
  group by i.indexrelid
),
-- The columns index expressions and predicates read: the Var nodes of their stored expression trees.
index_reference as (
  select i.indexrelid,
    json_agg(a.attname order by m.n) filter (where m.part = 'expression') as expression_columns,
    json_agg(a.attname order by m.n) filter (where m.part = 'predicate') as predicate_columns
  from rel r
  join pg_index i on i.indrelid = r.oid
  cross join lateral (
    select 'expression', e.v, e.n
    from regexp_matches(i.indexprs::text, ':varattno ([0-9]+)', 'g') with ordinality as e (v, n)
    union all
    select 'predicate', p.v, p.n
    from regexp_matches(i.indpred::text, ':varattno ([0-9]+)', 'g') with ordinality as p (v, n)
  ) as m (part, v, n)
  join pg_attribute a on a.attrelid = i.indrelid and a.attnum = m.v[1]::smallint
  where i.indexprs is not null or i.indpred is not null
  group by i.indexrelid
),
indexes as (
  select i.indrelid, json_agg(json_build_object(
      'name', ic.relname,
      'method', am.amname,
      'unique', i.indisunique,
      'primary', i.indisprimary,
      'constraint', con.conname,
      'constraint_type', con.contype,
      'nulls_not_distinct', coalesce((to_jsonb(i) ->> 'indnullsnotdistinct')::boolean, false),  -- PostgreSQL 15+
      -- PostgreSQL 18+: a key WITHOUT OVERLAPS (its last column a period); read through to_jsonb so 15 runs this too.
      'without_overlaps', coalesce((to_jsonb(con) ->> 'conperiod')::boolean, false),
      'columns', k.columns,
      'predicate', pg_get_expr(i.indpred, i.indrelid, true),
      'expression_columns', coalesce(x.expression_columns, '[]'),
      'predicate_columns', coalesce(x.predicate_columns, '[]')
    ) order by ic.relname) as indexes
  from rel r
  join pg_index i on i.indrelid = r.oid
  join pg_class ic on ic.oid = i.indexrelid
  join pg_am am on am.oid = ic.relam
  join index_key k on k.indexrelid = i.indexrelid
  left join index_reference x on x.indexrelid = i.indexrelid
  left join pg_constraint con
    on con.conindid = i.indexrelid and con.conrelid = i.indrelid and con.contype in ('p', 'u', 'x')
  group by i.indrelid
),

-- Full-text documents kept by PostgreSQL's own trigger: `tsvector_update_trigger(column, config, sources...)` (or
-- `_column`, whose config is a column: then none is known). Its arguments tell search the document's text.
text_search_trigger as (
  select t.tgrelid, json_agg(json_build_object(
      'function', p.proname,
      'arguments', regexp_split_to_array(regexp_replace(encode(t.tgargs, 'escape'), '\\000$', ''), '\\000')
    ) order by t.tgname) as triggers
  from rel r
  join pg_trigger t on t.tgrelid = r.oid and not t.tgisinternal and t.tgenabled <> 'D'
  join pg_proc p on p.oid = t.tgfoid
  where p.proname in ('tsvector_update_trigger', 'tsvector_update_trigger_column')
    and p.pronamespace = 'pg_catalog'::regnamespace
  group by t.tgrelid
),

-- --- constraints ------------------------------------------------------------------------------------------------

-- The partitions of each exposed partitioned table, at any depth: their own foreign keys are lifted to it.
partition_of (root, oid) as (
  select r.oid, i.inhrelid from rel r join pg_inherits i on i.inhparent = r.oid where r.relkind = 'p'
  union all
  select p.root, i.inhrelid from partition_of p join pg_inherits i on i.inhparent = p.oid
),
-- Foreign keys, checks and exclusions of the exposed relations, and foreign keys of their partitions. A constraint
-- with a parent (conparentid) is a copy PostgreSQL made for a partition, or for a partition it references.
constraint_row as (
  select con.oid, coalesce(p.root, con.conrelid) as relid, p.root is not null as on_partition
  from pg_constraint con
  left join partition_of p on p.oid = con.conrelid
  where con.contype in ('f', 'c', 'x') and con.conparentid = 0
    and (con.conrelid in (select oid from rel) or p.root is not null and con.contype = 'f')
),
constraint_column as (
  select c.oid,
    json_agg(a.attname order by k.n) as columns_in_key_order,
    json_agg(a.attname order by a.attnum) as columns_in_table_order,
    json_agg(t.attname order by k.n) filter (where t.attname is not null) as target_columns
  from constraint_row c
  join pg_constraint con on con.oid = c.oid
  cross join lateral unnest(con.conkey, con.confkey) with ordinality as k (attnum, target_attnum, n)
  join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
  left join pg_attribute t on t.attrelid = con.confrelid and t.attnum = k.target_attnum
  group by c.oid
),
-- PostgreSQL builds an exclusion constraint's generated name from its index's column names.
exclusion_index_column as (
  select c.oid, json_agg(a.attname order by a.attnum) as index_columns
  from constraint_row c
  join pg_constraint con on con.oid = c.oid and con.contype = 'x'
  join pg_attribute a on a.attrelid = con.conindid and a.attnum > 0
  group by c.oid
),
constraint_facts as (
  select c.relid, c.on_partition, con.contype, con.conname, pc.relname as partition,
    case con.contype
      when 'f' then json_build_object(
        'name', con.conname,
        'columns', cc.columns_in_key_order,
        'target_schema', tn.nspname,
        'target_name', tc.relname,
        'target_columns', cc.target_columns,
        'on_delete', con.confdeltype,
        'on_update', con.confupdtype,
        -- PostgreSQL 18+: a period foreign key (`FOREIGN KEY (x, PERIOD valid_at) REFERENCES ...`).
        'period', coalesce((to_jsonb(con) ->> 'conperiod')::boolean, false),
        'comment', (select d.description from pg_description d
          where d.objoid = con.oid and d.classoid = 'pg_constraint'::regclass and d.objsubid = 0))
      else json_build_object(
        'name', con.conname,
        'type', con.contype,
        -- An exclusion's columns are its index's (expressions included): the reader takes them from there.
        'columns', case when con.contype = 'c' then coalesce(cc.columns_in_table_order, '[]') end,
        'expression', pg_get_constraintdef(con.oid),
        'index_columns', x.index_columns)
    end as fact
  from constraint_row c
  join pg_constraint con on con.oid = c.oid
  join pg_class pc on pc.oid = con.conrelid
  left join constraint_column cc on cc.oid = c.oid
  left join exclusion_index_column x on x.oid = c.oid
  left join pg_class tc on tc.oid = con.confrelid
  left join pg_namespace tn on tn.oid = tc.relnamespace
),
constraints as (
  select relid,
    json_agg(fact order by conname) filter (where contype = 'f' and not on_partition) as foreign_keys,
    json_agg(fact order by partition, conname) filter (where on_partition) as partition_foreign_keys,
    json_agg(fact order by conname) filter (where contype in ('c', 'x')) as checks_and_exclusions
  from constraint_facts
  group by relid
),
policies as (
  select p.polrelid, json_agg(json_build_object(
      'name', p.polname,
      'command', case p.polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE'
        when 'd' then 'DELETE' else 'ALL' end,
      'roles', (select json_agg(case when o = 0 then 'public' else pg_get_userbyid(o)::text end
        order by o <> 0, pg_get_userbyid(o)) from unnest(p.polroles) as o),
      'permissive', p.polpermissive,
      'using', pg_get_expr(p.polqual, p.polrelid, true),
      'with_check', pg_get_expr(p.polwithcheck, p.polrelid, true)
    ) order by p.polname) as policies
  from rel r
  join pg_policy p on p.polrelid = r.oid
  group by p.polrelid
),

-- postgres_fdw's table and column options: the remote table, and each column's remote name.
remote_table as (
  select r.oid, json_build_object(
      'schema', coalesce((select o.option_value from pg_options_to_table(ft.ftoptions) o
        where o.option_name = 'schema_name'), r.nspname),
      'name', coalesce((select o.option_value from pg_options_to_table(ft.ftoptions) o
        where o.option_name = 'table_name'), r.relname),
      'columns', (select json_object_agg(a.attname, coalesce((select o.option_value
          from pg_options_to_table(a.attfdwoptions) o where o.option_name = 'column_name'), a.attname))
        from pg_attribute a where a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped)
    ) as remote
  from rel r
  join pg_foreign_table ft on ft.ftrelid = r.oid
  join pg_foreign_server fs on fs.oid = ft.ftserver
  join pg_foreign_data_wrapper fw on fw.oid = fs.srvfdw
  where fw.fdwname = 'postgres_fdw'
),

-- --- relations --------------------------------------------------------------------------------------------------

relations as (
  select json_agg(json_build_object(
      'oid', r.oid::bigint,
      'schema', r.nspname,
      'name', r.relname,
      'kind', r.relkind,
      'comment', rt.comments ->> '0',
      'type_oid', r.reltype::bigint,
      'columns', coalesce(c.columns, '[]'),
      'indexes', coalesce(i.indexes, '[]'),
      'foreign_keys', coalesce(k.foreign_keys, '[]'),
      'partition_foreign_keys', coalesce(k.partition_foreign_keys, '[]'),
      'constraints', coalesce(k.checks_and_exclusions, '[]'),
      'rls_enabled', r.relrowsecurity,
      'rls_forced', r.relforcerowsecurity,
      'has_rules', r.relhasrules,
      'policies', coalesce(p.policies, '[]'),
      'privileges', rp.privileges,
      -- A bit mask of the commands the relation accepts: 1 << CMD_UPDATE | 1 << CMD_INSERT | 1 << CMD_DELETE.
      'updatable', case when r.relkind in ('v', 'm', 'f') then pg_relation_is_updatable(r.oid, true) else 28 end,
      'foreign_server', fs.srvname,
      'foreign_data_wrapper', fw.fdwname,
      'remote', rm.remote,
      'text_search_triggers', coalesce(ts.triggers, '[]')
    ) order by r.nspname, r.relname) as relations
  from rel r
  join relation_text rt on rt.oid = r.oid
  left join columns c on c.attrelid = r.oid
  left join indexes i on i.indrelid = r.oid
  left join constraints k on k.relid = r.oid
  left join policies p on p.polrelid = r.oid
  left join relation_privileges rp on rp.oid = r.oid
  left join pg_foreign_table ft on ft.ftrelid = r.oid
  left join pg_foreign_server fs on fs.oid = ft.ftserver
  left join pg_foreign_data_wrapper fw on fw.oid = fs.srvfdw
  left join text_search_trigger ts on ts.tgrelid = r.oid
  left join remote_table rm on rm.oid = r.oid
),

-- --- functions --------------------------------------------------------------------------------------------------

functions as (
  select json_agg(json_build_object(
      'oid', f.oid::bigint,
      'schema', f.nspname,
      'name', f.proname,
      'comment', (select d.description from pg_description d
        where d.objoid = f.oid and d.classoid = 'pg_proc'::regclass and d.objsubid = 0),
      'volatility', f.provolatile,
      'strict', f.proisstrict,
      'security_definer', f.prosecdef,
      'returns_set', f.proretset,
      'return_type_oid', f.prorettype::bigint,
      'defaults', f.pronargdefaults,
      -- proallargtypes (with OUT and TABLE arguments) is null when every argument is IN: proargtypes has them.
      'arguments', (select coalesce(json_agg(json_build_object(
          'name', nullif(f.proargnames[a.n], ''),
          'type_oid', a.type_oid::bigint,
          'mode', coalesce(f.proargmodes[a.n], 'i'),
          'default', case when f.pronargdefaults > 0 then pg_get_function_arg_default(f.oid, a.n::integer) end
        ) order by a.n), '[]')
        from unnest(coalesce(f.proallargtypes, f.proargtypes::oid[])) with ordinality as a (type_oid, n)),
      'language', l.lanname,
      'executable', (select json_object_agg(o.name, has_function_privilege(o.name, f.oid, 'EXECUTE') order by o.ord)
        from role o),
      'kind', f.prokind
    ) order by f.nspname, f.proname, f.oid) as functions
  from fn f
  join pg_language l on l.oid = f.prolang
)

select json_build_object(
  'server_version_num', current_setting('server_version_num')::integer,
  'current_user', current_user,
  -- Off, pg_get_constraintdef doubles the backslashes in string constants.
  'standard_conforming_strings', current_setting('standard_conforming_strings') = 'on',
  -- timescaledb's view of its hypertables' dimensions, there when the extension is installed in the database: its
  -- rows are read by HYPERTABLES_QUERY after this one (a query cannot name a relation that may not exist).
  'hypertables_readable', to_regclass('timescaledb_information.dimensions') is not null,
  'roles', (select json_agg(name order by ord) from role),
  'schemas', coalesce((select json_agg(nspname order by ord) from exposed), '[]'),
  'schema_comments', coalesce((
    select json_object_agg(n.nspname, d.description order by n.ord)
    from exposed n join pg_description d on d.objoid = n.oid and d.classoid = 'pg_namespace'::regclass
  ), '{}'),
  -- pg_trgm's settings exist once its library is loaded or they are set; absent, they are left out.
  'settings', json_strip_nulls(json_build_object(
    'pg_trgm.similarity_threshold', current_setting('pg_trgm.similarity_threshold', true),
    'pg_trgm.word_similarity_threshold', current_setting('pg_trgm.word_similarity_threshold', true),
    'default_text_search_config', current_setting('default_text_search_config')
  )),
  -- Each extension with the relations, types and functions it owns (deptype 'e'): the reader marks those it meets.
  'extensions', coalesce((
    select json_agg(json_build_object(
        'name', e.extname,
        'schema', n.nspname,
        'version', e.extversion,
        'members', (
          select json_build_object(
            'relations', coalesce(json_agg(d.objid::bigint) filter (where d.classid = 'pg_class'::regclass), '[]'),
            'types', coalesce(json_agg(d.objid::bigint) filter (where d.classid = 'pg_type'::regclass), '[]'),
            'functions', coalesce(json_agg(d.objid::bigint) filter (where d.classid = 'pg_proc'::regclass), '[]'))
          from pg_depend d
          where d.refclassid = 'pg_extension'::regclass and d.refobjid = e.oid and d.deptype = 'e')
      ) order by e.extname)
    from pg_extension e join pg_namespace n on n.oid = e.extnamespace
  ), '[]'),
  'relations', coalesce((select relations from relations), '[]'),
  'types', coalesce((select types from types), '[]'),
  'functions', coalesce((select functions from functions), '[]')
)
