"""The introspection query and the conversion of its result into `Catalog` facts.

ARCHITECTURE.md: the catalog never imports the database layer; it gives the query and takes its result (a JSON
document), so it can be tested from recorded JSON. The document's shape is introspect.sql's; this module is its only
reader.
"""

from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any, LiteralString

import attrs

from . import _checks, _names
from ._facts import (
    Argument,
    ArgumentMode,
    Attribute,
    Catalog,
    Check,
    Column,
    DomainCheck,
    Exclusion,
    Extension,
    ForeignKey,
    ForeignKeyAction,
    Function,
    Index,
    IndexColumn,
    Key,
    PgType,
    Policy,
    Relation,
    RelationKind,
    RemoteTable,
    TextSearchTrigger,
    TypeKind,
    Volatility,
)

#: Run with `{"schemas": [...], "roles": [...]}`; returns one row with one JSON value. A file of ours, run as its bytes:
#: psycopg takes a query as bytes too, and its LiteralString guard is for text built in code.
INTROSPECTION_QUERY = resources.files("svc.catalog").joinpath("introspect.sql").read_bytes()
#: timescaledb's hypertables of the configured schemas and their dimension columns (time first), read in the
#: introspection's transaction when its document says the view is there (`hypertables_readable`); the rows go into
#: the document as `hypertables`.
HYPERTABLES_QUERY: LiteralString = """
select hypertable_schema::text, hypertable_name::text, array_agg(column_name::text order by dimension_number)
from timescaledb_information.dimensions
where hypertable_schema = any(%(schemas)s)
group by hypertable_schema, hypertable_name
"""

#: The privileges a column can carry of its own (its table's SELECT, INSERT and UPDATE reach it too).
COLUMN_PRIVILEGES = frozenset({"SELECT", "INSERT", "UPDATE"})
#: pg_relation_is_updatable's bits: 1 << CMD_UPDATE, 1 << CMD_INSERT, 1 << CMD_DELETE.
_UPDATE, _INSERT, _DELETE = 4, 8, 16
_INPUT_MODES = ("i", "b", "v")

Item = Mapping[str, Any]
Privileges = Mapping[str, frozenset[str]]


def read_catalog(document: Item) -> Catalog:
    """Facts from the introspection query's JSON document."""
    owners = _ExtensionOwners(document["extensions"])
    doubled = not document["standard_conforming_strings"]
    types = {item["oid"]: _type(item, owners, doubled) for item in document["types"]}
    context = _Context(types, owners, backslashes_doubled=doubled)
    dimensions = {(schema, name): tuple(columns) for schema, name, columns in document.get("hypertables", ())}
    return Catalog(
        server_version_num=document["server_version_num"],
        schemas=tuple(document["schemas"]),
        relations=tuple(
            _relation(item, context, dimensions.get((item["schema"], item["name"]), ()))
            for item in document["relations"]
        ),
        types=types,
        functions=tuple(_function(item, owners) for item in document["functions"]),
        extensions=tuple(Extension(e["name"], e["schema"], e["version"]) for e in document["extensions"]),
        roles=tuple(document["roles"]),
        current_user=document["current_user"],
        settings=dict(document["settings"]),
        schema_comments=dict(document["schema_comments"]),
    )


class _ExtensionOwners:
    """Which extension owns a relation, type or function (pg_depend deptype 'e'), by oid."""

    def __init__(self, extensions: Iterable[Item]) -> None:
        self.relations: dict[int, str] = {}
        self.types: dict[int, str] = {}
        self.functions: dict[int, str] = {}
        for extension in extensions:
            members = extension["members"]
            self.relations.update(dict.fromkeys(members["relations"], extension["name"]))
            self.types.update(dict.fromkeys(members["types"], extension["name"]))
            self.functions.update(dict.fromkeys(members["functions"], extension["name"]))

    def of_type(self, oid: int, element_oid: int | None, relation_oid: int | None) -> str | None:
        """An array belongs to its element's extension, a row type to its relation's."""
        return self.types.get(oid) or self.types.get(element_oid or 0) or self.relations.get(relation_oid or 0)


@attrs.frozen
class _Context:
    """What reading a relation needs from the rest of the document."""

    types: Mapping[int, PgType]
    owners: _ExtensionOwners
    backslashes_doubled: bool  # standard_conforming_strings was off: constraint texts double their backslashes


# --- types -------------------------------------------------------------------------------------------------------


def _type(item: Item, owners: _ExtensionOwners, backslashes_doubled: bool) -> PgType:
    return PgType(
        oid=item["oid"],
        schema=item["schema"],
        name=item["name"],
        sql_name=item["sql_name"],
        kind=TypeKind(item["kind"]),
        category=item["category"],
        element_oid=item["element_oid"],
        base_oid=item["base_oid"],
        base_typmod=item["base_typmod"],
        domain_not_null=item["domain_not_null"],
        domain_checks=tuple(
            DomainCheck(
                c["name"],
                c["expression"],
                _checks.json_schema(c["expression"], "VALUE", backslashes_doubled=backslashes_doubled),
            )
            for c in item["domain_checks"] or ()
        ),
        enum_labels=tuple(item["enum_labels"] or ()),
        attributes=tuple(Attribute(**a) for a in item["attributes"] or ()),
        range_subtype_oid=item["range_subtype_oid"],
        multirange_range_oid=item["multirange_range_oid"],
        relation_oid=item["relation_oid"],
        comment=item["comment"],
        extension=owners.of_type(item["oid"], item["element_oid"], item["relation_oid"]),
    )


# --- relations ---------------------------------------------------------------------------------------------------


def _relation(item: Item, context: _Context, dimensions: tuple[str, ...]) -> Relation:
    privileges = _privileges(item["privileges"])
    columns = tuple(_column(c, privileges) for c in item["columns"])
    indexes = [_index(i) for i in item["indexes"]]
    keys = [_key(i) for i in item["indexes"] if i["unique"]]
    updatable = item["updatable"]
    return Relation(
        oid=item["oid"],
        schema=item["schema"],
        name=item["name"],
        kind=RelationKind(item["kind"]),
        comment=item["comment"],
        columns=columns,
        type_oid=item["type_oid"],
        primary_key=next((k for k in keys if k.is_primary), None),
        unique_keys=tuple(sorted((k for k in keys if not k.is_primary), key=lambda k: k.name)),
        foreign_keys=_foreign_keys(item["foreign_keys"], item["partition_foreign_keys"]),
        checks=tuple(_check(c, item["name"], columns, context) for c in item["constraints"] if c["type"] == "c"),
        exclusions=tuple(
            _exclusion(c, item["name"], next(i for i in item["indexes"] if i["name"] == c["name"]))
            for c in item["constraints"]
            if c["type"] == "x"
        ),
        indexes=tuple(indexes),
        rls_enabled=item["rls_enabled"],
        rls_forced=item["rls_forced"],
        has_rules=item.get("has_rules", False),
        dimensions=dimensions,
        policies=tuple(_policy(p) for p in item["policies"]),
        privileges=privileges,
        insertable=bool(updatable & _INSERT),
        updatable=bool(updatable & _UPDATE),
        deletable=bool(updatable & _DELETE),
        extension=context.owners.relations.get(item["oid"]),
        foreign_server=item["foreign_server"],
        text_search_triggers=tuple(_text_search_trigger(t) for t in item["text_search_triggers"]),
        foreign_data_wrapper=item["foreign_data_wrapper"],
        remote=_remote(item["remote"]),
    )


def _remote(item: Item | None) -> RemoteTable | None:
    return RemoteTable(item["schema"], item["name"], item["columns"] or {}) if item else None


def _privileges(item: Mapping[str, list[str]]) -> Privileges:
    return {role: frozenset(privileges) for role, privileges in item.items()}


def _column(item: Item, table_privileges: Privileges) -> Column:
    """A column without grants of its own (`privileges` null) has its table's column privileges."""
    own = item["privileges"]
    privileges = (
        _privileges(own)
        if own is not None
        else {role: held & COLUMN_PRIVILEGES for role, held in table_privileges.items()}
    )
    return Column(
        name=item["name"],
        position=item["position"],
        type=item["type"],
        type_oid=item["type_oid"],
        not_null=item["not_null"],
        has_default=item["has_default"],
        identity=item["identity"],
        generated=item["generated"],
        comment=item["comment"],
        default=item["default"],
        max_length=item["max_length"],
        numeric_precision=item["numeric_precision"],
        numeric_scale=item["numeric_scale"],
        privileges=privileges,
    )


def _index(item: Item) -> Index:
    columns = tuple(IndexColumn(c["column"], c["expression"], c["opclass"], c["descending"]) for c in item["columns"])
    return Index(
        name=item["name"],
        method=item["method"],
        columns=columns,
        unique=item["unique"],
        primary=item["primary"],
        predicate=item["predicate"],
        referenced_columns=_distinct(
            [c.column for c in columns if c.column], item["expression_columns"], item["predicate_columns"]
        ),
    )


def _text_search_trigger(item: Item) -> TextSearchTrigger:
    column, config, *sources = item["arguments"]
    own_config = item["function"] == "tsvector_update_trigger"
    return TextSearchTrigger(column, config if own_config else None, tuple(sources))


def _key(item: Item) -> Key:
    """A unique index as a key."""
    return Key(
        name=item["constraint"] or item["name"],
        columns=_key_columns(item),
        is_primary=item["primary"],
        is_constraint=item["constraint_type"] in ("p", "u"),
        predicate=item["predicate"],
        expressions=tuple(c["expression"] for c in item["columns"] if c["expression"] is not None),
        nulls_not_distinct=item["nulls_not_distinct"],
        without_overlaps=item.get("without_overlaps", False),
    )


def _key_columns(index: Item) -> tuple[str, ...]:
    """An index's plain key columns in key order, then the columns its expressions read."""
    plain = [c["column"] for c in index["columns"] if c["column"] is not None]
    return _distinct(plain, index["expression_columns"])


def _distinct(*names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for group in names for name in group))


def _foreign_keys(own: list[Item], on_partitions: list[Item]) -> tuple[ForeignKey, ...]:
    """The relation's foreign keys, and those its partitions declare (pagila's `payment`) lifted to it: one per
    distinct (columns, target, target columns), named after the first partition's, with every partition's name."""
    keys = [_foreign_key(item) for item in own]
    declared = {_signature(key) for key in keys}
    lifted: dict[tuple[Any, ...], list[ForeignKey]] = {}
    for key in (_foreign_key(item) for item in on_partitions):
        if _signature(key) not in declared:
            lifted.setdefault(_signature(key), []).append(key)
    keys.extend(
        attrs.evolve(group[0], partition_constraints=tuple(key.name for key in group)) for group in lifted.values()
    )
    return tuple(sorted(keys, key=lambda key: key.name))


def _signature(key: ForeignKey) -> tuple[Any, ...]:
    return (key.columns, key.target_schema, key.target_name, key.target_columns)


def _foreign_key(item: Item) -> ForeignKey:
    return ForeignKey(
        name=item["name"],
        columns=tuple(item["columns"]),
        target_schema=item["target_schema"],
        target_name=item["target_name"],
        target_columns=tuple(item["target_columns"]),
        on_delete=ForeignKeyAction(item["on_delete"]),
        on_update=ForeignKeyAction(item["on_update"]),
        comment=item["comment"],
        period=item.get("period", False),
    )


def _check(item: Item, table: str, columns: tuple[Column, ...], context: _Context) -> Check:
    """A CHECK, with the simple forms read from its text when it reads one column (IN-lists on text columns only)."""
    names = tuple(item["columns"])
    expression = item["expression"]
    doubled = context.backslashes_doubled
    allowed_values = bounds = json_schema = None
    if len(names) == 1:
        column = next(c for c in columns if c.name == names[0])
        column_type = context.types.get(column.type_oid)
        if column_type is not None and column_type.category == "S":
            allowed_values = _checks.allowed_values(expression, column.name, backslashes_doubled=doubled)
        if column_type is not None and column_type.schema == "pg_catalog" and column_type.name in ("json", "jsonb"):
            json_schema = _checks.json_schema(expression, column.name, backslashes_doubled=doubled)
        if allowed_values is None and json_schema is None:
            bounds = _checks.bounds(expression, column.name, backslashes_doubled=doubled)
    return Check(
        name=item["name"],
        columns=names,
        expression=expression,
        name_chosen=not _names.is_generated_check_name(item["name"], table, names),
        allowed_values=allowed_values,
        bounds=bounds,
        json_schema=json_schema,
        exactly_one=_checks.exactly_one(expression, backslashes_doubled=doubled) if len(names) > 1 else None,
    )


def _exclusion(item: Item, table: str, index: Item) -> Exclusion:
    """An exclusion constraint; its columns are its index's (`_key_columns`), as it is built on one of that name."""
    return Exclusion(
        name=item["name"],
        columns=_key_columns(index),
        name_chosen=not _names.is_generated_exclusion_name(item["name"], table, tuple(item["index_columns"])),
        expression=item["expression"],
    )


def _policy(item: Item) -> Policy:
    return Policy(
        name=item["name"],
        command=item["command"],
        roles=tuple(item["roles"]),
        permissive=item["permissive"],
        using=item["using"],
        with_check=item["with_check"],
    )


# --- functions ---------------------------------------------------------------------------------------------------


def _function(item: Item, owners: _ExtensionOwners) -> Function:
    return Function(
        oid=item["oid"],
        schema=item["schema"],
        name=item["name"],
        comment=item["comment"],
        volatility=Volatility(item["volatility"]),
        strict=item["strict"],
        security_definer=item["security_definer"],
        returns_set=item["returns_set"],
        return_type_oid=item["return_type_oid"],
        arguments=_arguments(item["arguments"], item["defaults"]),
        language=item["language"],
        executable=dict(item["executable"]),
        extension=owners.functions.get(item["oid"]),
        kind=item["kind"],
    )


def _arguments(items: list[Item], defaults: int) -> tuple[Argument, ...]:
    """Arguments in declaration order; the last `defaults` input arguments (pronargdefaults) have a default."""
    inputs = [position for position, item in enumerate(items) if item["mode"] in _INPUT_MODES]
    with_default = set(inputs[len(inputs) - defaults :]) if defaults else set()
    return tuple(
        Argument(
            name=item["name"],
            type_oid=item["type_oid"],
            mode=ArgumentMode(item["mode"]),
            has_default=position in with_default,
            default=item["default"],
        )
        for position, item in enumerate(items)
    )
