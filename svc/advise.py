"""`svc advise` (SPEC "Command line"): schema advice, from the catalog and the model the service serves from it.

What it finds, over what the APIs expose:
- a foreign key no index begins with: reading a table's rows by their parent (a relation field) and deleting or
  updating a parent row scan the table;
- a table without a primary key (none in the catalog nor `entities.<t>.primary_key`): its type has no node ID, and it
  has no update or delete; for a timescaledb hypertable, the advice names its dimension columns, which its keys must
  hold (timescaledb refuses a unique key without them);
- a foreign table served while requests are authenticated (`AUTH_JWT_SECRET`, `auth.issuer` or `auth.jwks_url`):
  row-level security does not apply to foreign tables (SPEC "Authorization");
- a VOLATILE function served as a mutation whose body only reads (an SQL function with one query and no statement or
  call that writes or changes the session): STABLE, it would be a query field, readable with other fields in one
  statement;
- an index (not unique, not a key's) on a column hidden from the APIs (`entities.<t>.columns.<c>.omit`) that no
  relation joins on: filters and orders cannot use it through the APIs.

The service logs the foreign-table advice at startup and after a reload that brings a new one (SPEC "Authorization":
"reported by startup advice"); the rest only `svc advise` prints.

Hypertables are known from timescaledb's `timescaledb_information.dimensions` (svc.catalog.HYPERTABLES_QUERY), read
while `extensions.integrations.timescaledb` is not off; timescaledb cannot be installed where this is built, so the
tests read a stand-in of that view.
"""

import re
from collections.abc import Iterable, Mapping

import attrs

from svc.catalog import Catalog, Function, Relation, RelationKind, Volatility
from svc.config import Config
from svc.model import Entity, Model, RootFunction


@attrs.frozen
class Advice:
    #: What kind of finding it is (the heading it is printed under).
    kind: str
    #: What it is about: a table, a column, a function.
    subject: str
    #: Why it matters and what to do.
    text: str


FOREIGN_KEY = "foreign key without an index"
NO_PRIMARY_KEY = "table without a primary key"
FOREIGN_TABLE = "foreign table while requests are authenticated"
SHOULD_BE_STABLE = "function that should be STABLE"
HIDDEN_INDEXED = "hidden column with an index"


def requests_authenticated(config: Config, jwt_secret: str | None) -> bool:
    """Whether requests may carry a verified token (a shared secret, or an issuer's keys)."""
    return bool(jwt_secret or config.auth.issuer or config.auth.jwks_url)


def schema_advice(
    catalog: Catalog, model: Model, *, authenticated: bool, bodies: Mapping[int, str] | None = None
) -> list[Advice]:
    """Every finding, in the order of the kinds above, then of the model's entities and functions. `bodies`: the
    source of the functions served as mutations, by oid (`SHOULD_BE_STABLE` looks at them)."""
    found: list[Advice] = []
    exposed = _exposed(catalog, model)
    for _, relation in exposed:
        found += _unindexed_foreign_keys(relation)
    for entity, relation in exposed:
        if relation.kind in (RelationKind.TABLE, RelationKind.PARTITIONED_TABLE) and not entity.primary_key:
            found.append(Advice(NO_PRIMARY_KEY, _name(relation), _no_primary_key(entity, relation)))
    if authenticated:
        found += foreign_table_advice(catalog, model)
    volatile_names = {f.name for f in catalog.functions if f.volatility is Volatility.VOLATILE}
    for served in model.functions:
        function = _function(catalog, served)
        if served.mutation and function is not None:
            body = (bodies or {}).get(function.oid)
            if body is not None and _only_reads(function, body, volatile_names):
                found.append(
                    Advice(
                        SHOULD_BE_STABLE,
                        f"{function.schema}.{function.name}",
                        f"it is VOLATILE, so mutation {served.name} serves it, but its body only reads: "
                        f"`alter function {function.schema}.{function.name} stable` would serve it as a query field",
                    )
                )
    for entity, relation in exposed:
        found += _hidden_indexed(entity, relation)
    return found


def _no_primary_key(entity: Entity, relation: Relation) -> str:
    lacks = f"type {entity.type_name} has no node ID and no update or delete"
    named = f"name a unique key as entities.{relation.name}.primary_key"
    if not relation.dimensions:
        return f"{lacks}; add a primary key (or {named})"
    return (
        f"{lacks}; it is a hypertable, whose keys must hold its dimension columns ({', '.join(relation.dimensions)}):"
        f" add a primary key of them and the columns that tell its rows apart at one time (or {named})"
    )


def foreign_table_advice(catalog: Catalog, model: Model) -> list[Advice]:
    """The foreign tables the APIs serve (the advice while requests are authenticated; the server logs it)."""
    return [
        Advice(
            FOREIGN_TABLE,
            _name(relation),
            f"row-level security does not apply to foreign tables: every role that may read {entity.type_name} "
            f"reads all its rows; grant it only to roles that may, or serve it through a view that filters",
        )
        for entity, relation in _exposed(catalog, model)
        if relation.kind is RelationKind.FOREIGN_TABLE
    ]


def mutation_function_oids(catalog: Catalog, model: Model) -> list[int]:
    """The functions whose bodies `schema_advice` looks at: those served as mutations."""
    return [function.oid for served in model.functions if served.mutation and (function := _function(catalog, served))]


def render(found: Iterable[Advice]) -> str:
    """The advice as printed: one heading per kind, one line per finding under it."""
    lines: list[str] = []
    kind = None
    for advice in found:
        if advice.kind != kind:
            kind = advice.kind
            lines.append(f"{'' if not lines else chr(10)}{kind}:")
        lines.append(f"  {advice.subject}: {advice.text}")
    return "\n".join(lines) + "\n" if lines else "no advice: nothing to change found\n"


def _exposed(catalog: Catalog, model: Model) -> list[tuple[Entity, Relation]]:
    """The model's entities with their relations in the catalog."""
    return [
        (entity, relation)
        for entity in model.entities
        if (relation := catalog.relation(entity.ref.schema, entity.ref.table)) is not None
    ]


def _function(catalog: Catalog, served: RootFunction) -> Function | None:
    candidates = [f for f in catalog.functions if f.schema == served.schema and f.name == served.function]
    if len(candidates) > 1:  # overloads: the one with as many input arguments
        candidates = [f for f in candidates if len(f.input_arguments) == len(served.arguments)]
    return candidates[0] if len(candidates) == 1 else None


def _name(relation: Relation) -> str:
    return f"{relation.schema}.{relation.name}"


def _unindexed_foreign_keys(relation: Relation) -> list[Advice]:
    found = []
    for key in relation.foreign_keys:
        width = len(key.columns)
        covered = any(
            index.predicate is None
            and len(index.columns) >= width
            and {column.column for column in index.columns[:width]} == set(key.columns)
            for index in relation.indexes
        )
        if not covered:
            columns = ", ".join(key.columns)
            found.append(
                Advice(
                    FOREIGN_KEY,
                    f"{_name(relation)} ({columns})",
                    f"references {key.target_schema}.{key.target_name}, and no index begins with these columns: "
                    f"reading {relation.name} rows by their {key.target_name} and deleting or updating "
                    f"{key.target_name} rows scan {relation.name}; "
                    f"`create index on {_name(relation)} ({columns})`",
                )
            )
    return found


def _hidden_indexed(entity: Entity, relation: Relation) -> list[Advice]:
    shown = {field.column for field in entity.fields}
    joined = {local for relation_ in entity.relations for local, _ in relation_.pairs}
    joined |= {column for key in relation.foreign_keys for column in key.columns}
    hidden = {column.name for column in relation.columns} - shown - joined - set(entity.primary_key or ())
    found = []
    for index in relation.indexes:
        if index.unique or index.primary:
            continue
        for column in index.columns:
            if column.column in hidden:
                found.append(
                    Advice(
                        HIDDEN_INDEXED,
                        f"{_name(relation)}.{column.column}",
                        f"hidden from the APIs but indexed by {index.name}: no filter or order can use the index "
                        f"through them; expose the column, or drop the index if nothing else uses it",
                    )
                )
    return found


#: Words of statements that write or change the session, and of functions that do or whose answer changes within
#: a statement: an SQL function naming one is not advised to be STABLE.
_WRITES = re.compile(
    r"\b(insert|update|delete|merge|truncate|copy|create|drop|alter|grant|revoke|lock|notify|listen|unlisten|"
    r"vacuum|analyze|refresh|call|do|set|reset|discard|comment|security|cluster|reindex|import|prepare|execute|"
    r"nextval|setval|random|clock_timestamp|timeofday|gen_random_uuid|uuid_generate_v1|uuid_generate_v4|pg_notify|"
    r"set_config|txid_current|pg_current_xact_id|pg_sleep|pg_advisory_lock|pg_advisory_xact_lock|lo_import|"
    r"dblink_exec)\b"
)
_COMMENTS_AND_LITERALS = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)


def _only_reads(function: Function, body: str, volatile_names: set[str]) -> bool:
    """Whether an SQL function's body is one query that reads only (a conservative reading: any doubt is no)."""
    if function.language != "sql":
        return False
    text = _COMMENTS_AND_LITERALS.sub(" ", body).lower().strip().rstrip(";").strip()
    if ";" in text or not re.match(r"(select|with|values|table)\b", text) or _WRITES.search(text):
        return False
    called = set(re.findall(r"([a-z_][a-z0-9_$]*)\s*\(", text))
    return not (called & ({name.lower() for name in volatile_names} - {function.name.lower()}))
