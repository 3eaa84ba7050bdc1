"""Keys of postgres_fdw foreign tables, read from the remote catalog (SPEC "Extension integrations": postgres_fdw).

A foreign table has no keys of its own; the table it stands for on its server has. `SERVERS_QUERY` (run here)
gives each server's options and the connecting role's user mapping, `REMOTE_KEYS_QUERY` (run on the server) the
remote tables' primary keys and plain unique indexes, and `with_remote_keys` gives each foreign table those keys in
its own column names. Keys a foreign table already has (none today) and keys in config (the model's) win.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, LiteralString

import attrs

from ._facts import Catalog, Key, Relation

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
#: indexes on plain columns (a unique constraint has one), with the index's name, which a violation names.
REMOTE_KEYS_QUERY: LiteralString = """
select n.nspname::text, c.relname::text, x.relname::text, i.indisprimary,
  array(select a.attname::text
        from unnest(i.indkey::int2[]) with ordinality k (attnum, ord)
        join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
        order by k.ord)
from pg_index i
join pg_class c on c.oid = i.indrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_class x on x.oid = i.indexrelid
where i.indisunique and i.indisvalid and i.indexprs is null and i.indpred is null
  and (n.nspname, c.relname) in (select * from unnest(%(schemas)s::text[], %(names)s::text[]))
order by n.nspname, c.relname, not i.indisprimary, x.relname
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
    """The `REMOTE_KEYS_QUERY` parameters of one server's foreign tables."""
    tables = sorted({(r.remote.schema, r.remote.name) for r in _on(catalog, server) if r.remote})
    return {"schemas": [schema for schema, _ in tables], "names": [name for _, name in tables]}


def with_remote_keys(catalog: Catalog, server: str, rows: Iterable[Sequence[Any]]) -> Catalog:
    """The catalog with the keys `REMOTE_KEYS_QUERY` found on `server` given to its foreign tables, in their own
    column names; a key over a column the foreign table does not declare is left out."""
    found: dict[tuple[str, str], list[Key]] = {}
    for schema, table, name, primary, columns in rows:
        found.setdefault((schema, table), []).append(Key(name, tuple(columns), is_primary=primary))
    on_server = {r.oid for r in _on(catalog, server)}

    def keyed(relation: Relation) -> Relation:
        if relation.oid not in on_server or relation.remote is None or relation.primary_key is not None:
            return relation
        keys = []
        for key in found.get((relation.remote.schema, relation.remote.name), []):
            local = relation.remote.local_columns(key.columns)
            if local is not None:
                keys.append(attrs.evolve(key, columns=local))
        return attrs.evolve(
            relation,
            primary_key=next((k for k in keys if k.is_primary), None),
            unique_keys=tuple(k for k in keys if not k.is_primary),
        )

    return attrs.evolve(catalog, relations=tuple(keyed(r) for r in catalog.relations))


def _on(catalog: Catalog, server: str) -> list[Relation]:
    return [r for r in catalog.relations if r.remote is not None and r.foreign_server == server]
