"""Frozen facts about the database, as read from its catalog. No API names here: those are the model's.

Everything the model, the compiler and the error mapper need to know about the exposed schemas, read in one
repeatable-read transaction (SPEC "What the service does": tables, views, materialized views, foreign tables, keys,
constraints, indexes, functions, policies, grants, comments). Objects are identified by their database names
(schema, name); types by oid, since columns, arguments and attributes refer to them that way.

Facts are what the catalog says, lightly interpreted where PostgreSQL's own text needs parsing once: CHECK
constraints closed over an IN-list, simple single-column bounds (for `@constraint`), exclusive arcs (exactly one of
several columns set), whether a constraint's name was chosen or generated, and foreign keys declared only on a
partitioned table's partitions (lifted to the parent).
"""

import enum
from collections.abc import Mapping, Sequence
from typing import cast

import attrs

# --- types -------------------------------------------------------------------------------------------------------


class TypeKind(enum.Enum):
    BASE = "b"
    COMPOSITE = "c"
    DOMAIN = "d"
    ENUM = "e"
    PSEUDO = "p"
    RANGE = "r"
    MULTIRANGE = "m"


@attrs.frozen
class Attribute:
    """An attribute of a composite type (a table's row type is one too, but tables carry `Column`s)."""

    name: str
    position: int
    type_oid: int
    not_null: bool


@attrs.frozen
class DomainCheck:
    name: str
    expression: str  # pg_get_constraintdef text, for example "CHECK (VALUE > 0)"
    #: pg_jsonschema's schema-match function with a literal schema: its JSON text.
    json_schema: str | None = None


@attrs.frozen
class PgType:
    """A type a column, argument, attribute or result refers to: the types of the exposed schemas and every type
    referenced from them (built-ins included, so `int4` or `_text` resolve too)."""

    oid: int
    schema: str
    name: str  # the type's own name: `int4`, `_text`, `mpaa_rating`
    sql_name: str  # as format_type writes it: `integer`, `text[]`, `public.mpaa_rating`
    kind: TypeKind
    category: str  # pg_type.typcategory: A array, B boolean, D date/time, N numeric, S string, U user, ...
    element_oid: int | None = None  # arrays: the element type
    base_oid: int | None = None  # domains: the type they constrain
    base_typmod: int = -1  # domains: e.g. varchar(20) as a domain's base
    domain_not_null: bool = False
    domain_checks: tuple[DomainCheck, ...] = ()
    enum_labels: tuple[str, ...] = ()  # enums, in their sort order
    attributes: tuple[Attribute, ...] = ()  # composites (not tables' row types)
    range_subtype_oid: int | None = None  # ranges
    multirange_range_oid: int | None = None  # multiranges: their range type
    relation_oid: int | None = None  # a table's (or view's) row type: that relation
    comment: str | None = None
    extension: str | None = None  # owned by this extension (hidden unless exposed)


# --- relations ---------------------------------------------------------------------------------------------------


class RelationKind(enum.Enum):
    TABLE = "r"
    PARTITIONED_TABLE = "p"
    VIEW = "v"
    MATERIALIZED_VIEW = "m"
    FOREIGN_TABLE = "f"


@attrs.frozen
class Column:
    name: str
    position: int
    type: str  # format_type with the typmod: `character varying(40)`, `numeric(5,2)`, `public.year`
    type_oid: int
    not_null: bool
    has_default: bool
    identity: str | None  # 'a' (always), 'd' (by default) or None
    generated: bool  # a stored generated column: read-only
    comment: str | None
    default: str | None = None  # pg_get_expr of the default
    max_length: int | None = None  # varchar(n)/char(n) (also through a domain): n
    numeric_precision: int | None = None  # numeric(p, s) (also through a domain): p
    numeric_scale: int | None = None  # numeric(p, s): s
    #: Per configured role (see `Catalog.roles`): the column privileges it has, among SELECT, INSERT, UPDATE.
    privileges: Mapping[str, frozenset[str]] = attrs.field(factory=dict)


@attrs.frozen
class Key:
    """A primary key or a unique constraint/index: columns (in key order) whose values identify one row.

    `predicate` is set for a partial unique index (`where deleted_at is null`); `expressions` lists the index's
    expression texts (unique indexes on `lower(email)`) and `columns` then holds the columns they reference.
    """

    name: str
    columns: tuple[str, ...]
    is_primary: bool = False
    is_constraint: bool = True  # a constraint, or else a bare unique index
    predicate: str | None = None
    expressions: tuple[str, ...] = ()
    nulls_not_distinct: bool = False
    #: PostgreSQL 18's `PRIMARY KEY/UNIQUE (..., valid_at WITHOUT OVERLAPS)`: the last column is a period (a range
    #: or multirange) and the other columns identify one row per instant, not one row.
    without_overlaps: bool = False

    @property
    def is_plain(self) -> bool:
        """Usable as a lookup key: a whole-table key over plain columns."""
        return self.predicate is None and not self.expressions


class ForeignKeyAction(enum.Enum):
    NO_ACTION = "a"
    RESTRICT = "r"
    CASCADE = "c"
    SET_NULL = "n"
    SET_DEFAULT = "d"


@attrs.frozen
class ForeignKey:
    name: str
    columns: tuple[str, ...]
    target_schema: str
    target_name: str
    target_columns: tuple[str, ...]
    on_delete: ForeignKeyAction = ForeignKeyAction.NO_ACTION
    on_update: ForeignKeyAction = ForeignKeyAction.NO_ACTION
    #: Declared on partitions only and lifted to their partitioned parent: the partitions' constraint names (the
    #: database reports a violation under one of these).
    partition_constraints: tuple[str, ...] = ()
    comment: str | None = None
    #: PostgreSQL 18's `FOREIGN KEY (..., PERIOD valid_at) REFERENCES t (..., PERIOD valid_at)`: the last columns are
    #: periods, and the row's period lies within the union of the referenced rows' periods.
    period: bool = False


@attrs.frozen
class Bounds:
    """Simple single-column CHECK forms, documented by `@constraint` (advisory: the database still checks).

    Read from `col > n`, `col >= n`, `col < n`, `col <= n`, `col BETWEEN a AND b`, `length(col)`/`char_length(col)`
    compared with a number, `col ~ 'pattern'`, `cardinality(col)`/`array_length(col, 1)` compared with a number, and
    AND-combinations of these over one column.
    """

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None


@attrs.frozen
class Check:
    name: str
    columns: tuple[str, ...]  # the columns it reads (conkey), in table order
    expression: str  # pg_get_constraintdef: "CHECK ((price > (0)::numeric))"
    #: The name was written by the schema's author (not PostgreSQL's generated `<table>_<cols>_check[N]`).
    name_chosen: bool
    #: `col IN ('a', 'b')` / `col = ANY (ARRAY['a', 'b'])` on one text column: its values, in the order written.
    allowed_values: tuple[str, ...] | None = None
    bounds: Bounds | None = None
    #: On one json or jsonb column, pg_jsonschema's schema-match function with a literal schema: its JSON text.
    json_schema: str | None = None
    #: An exclusive arc: the columns of which exactly one is not null (`num_nonnulls(a, b) = 1` and its equivalent
    #: forms, `_checks.exactly_one`), in the order written.
    exactly_one: tuple[str, ...] | None = None


@attrs.frozen
class Exclusion:
    name: str
    columns: tuple[str, ...]
    name_chosen: bool
    expression: str


@attrs.frozen
class IndexColumn:
    """One index column: a table column, or an expression (then `column` is None)."""

    column: str | None
    expression: str | None
    opclass: str  # `text_ops`, `gin_trgm_ops`, `vector_cosine_ops`, `tsvector_ops`...
    descending: bool = False


@attrs.frozen
class Index:
    name: str
    method: str  # pg_am.amname: btree, hash, gin, gist, brin, spgist, hnsw, ivfflat, pgroonga, bm25, diskann...
    columns: tuple[IndexColumn, ...]  # key columns only (no INCLUDE columns)
    unique: bool
    primary: bool
    predicate: str | None = None
    #: Table columns the index reads (key columns, those referenced by expressions and the predicate).
    referenced_columns: tuple[str, ...] = ()


@attrs.frozen
class TextSearchTrigger:
    """PostgreSQL's own trigger keeping a full-text document: `tsvector_update_trigger(column, config, sources...)`
    (`config` is None for `tsvector_update_trigger_column`, whose configuration is read from a column per row)."""

    column: str
    config: str | None
    sources: tuple[str, ...]


@attrs.frozen
class Policy:
    name: str
    command: str  # ALL, SELECT, INSERT, UPDATE, DELETE
    roles: tuple[str, ...]  # `public` for every role
    permissive: bool
    using: str | None
    with_check: str | None


@attrs.frozen
class RemoteTable:
    """The table a postgres_fdw foreign table reads and writes on its server: its `schema_name` and `table_name`
    options (else the foreign table's own names), and each local column's remote name (its `column_name` option)."""

    schema: str
    name: str
    columns: Mapping[str, str]

    def local_columns(self, remote: Sequence[str]) -> tuple[str, ...] | None:
        """The local names of remote columns, or None when one is not a column of the foreign table."""
        local = {name: column for column, name in self.columns.items()}
        found = tuple(local.get(name) for name in remote)
        return None if None in found else cast(tuple[str, ...], found)


@attrs.frozen
class Relation:
    oid: int
    schema: str
    name: str
    kind: RelationKind
    comment: str | None
    columns: tuple[Column, ...]
    type_oid: int = 0  # its row type
    primary_key: Key | None = None
    unique_keys: tuple[Key, ...] = ()  # unique constraints and unique indexes, not the primary key
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[Check, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()
    indexes: tuple[Index, ...] = ()
    rls_enabled: bool = False
    rls_forced: bool = False
    #: CREATE RULE ... ON the relation (views have their SELECT rule; a table's rules rewrite its writes).
    has_rules: bool = False
    #: timescaledb: a hypertable's dimension columns (its time column first); none for other tables.
    dimensions: tuple[str, ...] = ()
    policies: tuple[Policy, ...] = ()
    #: Per configured role: the table privileges it has, among SELECT, INSERT, UPDATE, DELETE.
    privileges: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    #: Views and foreign tables: what the database can write through it (pg_relation_is_updatable).
    insertable: bool = True
    updatable: bool = True
    deletable: bool = True
    extension: str | None = None  # owned by this extension (hidden unless exposed)
    #: Foreign tables: the foreign server's name and its wrapper (`postgres_fdw`).
    foreign_server: str | None = None
    foreign_data_wrapper: str | None = None
    #: postgres_fdw foreign tables: the remote table their rows live in (its keys are read from the remote catalog).
    remote: RemoteTable | None = None
    #: Full-text documents kept by `tsvector_update_trigger` (search reads their configuration and source text).
    text_search_triggers: tuple[TextSearchTrigger, ...] = ()

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


# --- functions ---------------------------------------------------------------------------------------------------


class Volatility(enum.Enum):
    IMMUTABLE = "i"
    STABLE = "s"
    VOLATILE = "v"


class ArgumentMode(enum.Enum):
    IN = "i"
    OUT = "o"
    INOUT = "b"
    VARIADIC = "v"
    TABLE = "t"


@attrs.frozen
class Argument:
    name: str | None  # unnamed arguments exist (`$1`)
    type_oid: int
    mode: ArgumentMode
    has_default: bool  # only trailing input arguments can have one
    default: str | None = None  # the default expression's text


@attrs.frozen
class Function:
    oid: int
    schema: str
    name: str
    comment: str | None
    volatility: Volatility
    strict: bool
    security_definer: bool
    returns_set: bool
    return_type_oid: int  # `record` (2249) for OUT/TABLE columns, `void` (2278) for none
    arguments: tuple[Argument, ...]  # every argument in declaration order, OUT and TABLE columns included
    language: str
    #: Per configured role: whether it may EXECUTE.
    executable: Mapping[str, bool] = attrs.field(factory=dict)
    extension: str | None = None
    kind: str = "f"  # pg_proc.prokind: f function, p procedure, a aggregate, w window (only f is served)

    @property
    def input_arguments(self) -> tuple[Argument, ...]:
        return tuple(
            a for a in self.arguments if a.mode in (ArgumentMode.IN, ArgumentMode.INOUT, ArgumentMode.VARIADIC)
        )

    @property
    def output_columns(self) -> tuple[Argument, ...]:
        """OUT, INOUT and TABLE arguments: the columns of a `record` result."""
        return tuple(a for a in self.arguments if a.mode in (ArgumentMode.OUT, ArgumentMode.INOUT, ArgumentMode.TABLE))


# --- the whole catalog -------------------------------------------------------------------------------------------


@attrs.frozen
class Extension:
    name: str
    schema: str
    version: str


@attrs.frozen
class Catalog:
    server_version_num: int
    schemas: tuple[str, ...]  # the configured schemas that exist, in configured order
    relations: tuple[Relation, ...]  # partitions are left out (their parent stands for them)
    types: Mapping[int, PgType] = attrs.field(factory=dict)
    functions: tuple[Function, ...] = ()
    extensions: tuple[Extension, ...] = ()
    #: The roles privileges were read for: the connecting role first, then configured roles that exist.
    roles: tuple[str, ...] = ()
    current_user: str = ""
    #: pg_trgm's word-similarity threshold and the database's default text-search configuration.
    settings: Mapping[str, str] = attrs.field(factory=dict)
    schema_comments: Mapping[str, str] = attrs.field(factory=dict)
    #: What could not be read, for the startup log: a postgres_fdw server whose keys could not be had.
    warnings: tuple[str, ...] = ()

    def relation(self, schema: str, name: str) -> Relation | None:
        return next((r for r in self.relations if r.schema == schema and r.name == name), None)

    def type(self, oid: int) -> PgType:
        return self.types[oid]
