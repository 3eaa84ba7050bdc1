"""Keys of postgres_fdw foreign tables, read from the remote catalog (SPEC "Extension integrations": postgres_fdw).

A foreign table has no keys of its own; the table it stands for on its server has. `SERVERS_QUERY` (run here)
gives each server's options and the connecting role's user mapping, `REMOTE_CONSTRAINTS_QUERY` (run on the server)
the remote tables' primary keys, plain unique indexes and checks, and `with_remote_constraints` gives each foreign
table those in its own column names, so that their violations are typed like a local table's. Keys in config (the
model's) win.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, LiteralString

import attrs

from ._facts import Catalog, Check, Key, Relation
from ._names import is_generated_check_name

#: Run here with `{"servers": [...]}`: per server its name, its options and those of the connecting role's user
#: mapping (else PUBLIC's; null when there is none or the role may not see its options).
SERVERS_QUERY: LiteralString = """
select s.srvname,
  coalesce((select json_object_agg(o.option_name, o.option_value) from pg_options_to_table(s.srvoptions) o), '{}'),
  (select coalesce((select json_object_agg(o.option_name, o.option_value)
                    from pg_options_to_table(m.umoptions) o), '{}')
   from pg_user_mappings m
   where m.srvid = s.oid and (m.usename = current_user or m.umuser = 0)
   order by m.umuser desc limit 1)
from pg_foreign_server s
where s.srvname = any(%(servers)s)
order by s.srvname
"""

#: Run on a remote with `{"schemas": [...], "names": [...]}` (pairs): each table's primary key and valid unique
#: indexes on plain columns (a unique constraint has one) under the index's name, which a violation names; and its
#: CHECK constraints, whose violations postgres_fdw passes on too. Kind `p`, `u` or `c`, the columns, and a check's
#: text.
REMOTE_CONSTRAINTS_QUERY: LiteralString = """
with wanted as (
  select c.oid, n.nspname::text as schema, c.relname::text as name
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where (n.nspname, c.relname) in (select * from unnest(%(schemas)s::text[], %(names)s::text[]))
)
select w.schema, w.name, x.relname::text, case when i.indisprimary then 'p' else 'u' end,
  array(select a.attname::text from unnest(i.indkey::int2[]) with ordinality k (attnum, ord)
        join pg_attribute a on a.attrelid = w.oid and a.attnum = k.attnum order by k.ord),
  null
from wanted w
join pg_index i on i.indrelid = w.oid
join pg_class x on x.oid = i.indexrelid
where i.indisunique and i.indisvalid and i.indexprs is null and i.indpred is null
union all
select w.schema, w.name, k.conname::text, 'c',
  array(select a.attname::text from pg_attribute a
        where a.attrelid = w.oid and a.attnum = any(k.conkey) order by a.attnum),
  pg_get_constraintdef(k.oid)
from wanted w
join pg_constraint k on k.conrelid = w.oid and k.contype = 'c'
order by 1, 2, 4, 3
"""


@attrs.frozen
class ForeignServer:
    """A postgres_fdw server's options and the connecting role's user mapping's (None: it has none here)."""

    name: str
    options: Mapping[str, str]
    user_options: Mapping[str, str] | None


def remote_servers(catalog: Catalog) -> tuple[str, ...]:
    """The servers of the postgres_fdw foreign tables the catalog holds, once each."""
    return tuple(sorted({r.foreign_server for r in catalog.relations if r.remote and r.foreign_server}))


def remote_tables(catalog: Catalog, server: str) -> dict[str, list[str]]:
    """The `REMOTE_CONSTRAINTS_QUERY` parameters of one server's foreign tables."""
    tables = sorted({(r.remote.schema, r.remote.name) for r in _on(catalog, server) if r.remote})
    return {"schemas": [schema for schema, _ in tables], "names": [name for _, name in tables]}


def with_remote_constraints(catalog: Catalog, server: str, rows: Iterable[Sequence[Any]]) -> Catalog:
    """The catalog with what `REMOTE_CONSTRAINTS_QUERY` found on `server` given to its foreign tables, in their own
    column names (a constraint over a column the foreign table does not declare is left out): keys, and checks
    (in the remote's words, none of their forms read: they only name the error a violation is)."""
    found: dict[tuple[str, str], list[tuple[str, str, tuple[str, ...], str | None]]] = {}
    for schema, table, name, kind, columns, definition in rows:
        found.setdefault((schema, table), []).append((name, kind, tuple(columns), definition))
    on_server = {r.oid for r in _on(catalog, server)}

    def constrained(relation: Relation) -> Relation:
        remote = relation.remote
        if relation.oid not in on_server or remote is None or relation.primary_key is not None:
            return relation
        keys, checks = [], []
        for name, kind, columns, definition in found.get((remote.schema, remote.name), []):
            local = remote.local_columns(columns)
            if local is None:
                continue
            if kind == "c":
                chosen = not is_generated_check_name(name, remote.name, columns)
                checks.append(Check(name, local, definition or "", chosen))
            else:
                keys.append(Key(name, local, is_primary=kind == "p"))
        return attrs.evolve(
            relation,
            primary_key=next((k for k in keys if k.is_primary), None),
            unique_keys=tuple(k for k in keys if not k.is_primary),
            checks=(*relation.checks, *checks),
        )

    return attrs.evolve(catalog, relations=tuple(constrained(r) for r in catalog.relations))


def _on(catalog: Catalog, server: str) -> list[Relation]:
    return [r for r in catalog.relations if r.remote is not None and r.foreign_server == server]
