"""The GraphQL SDL of a model (SPEC "Resources and their fields", "GraphQL behaviour").

Written as SDL text, then parsed and built by graphql-core (`svc/graphql/_schema.py`), which validates it and prints
the exported file. Every generated name comes from the model (`Entity.names`, `Entity.roots`, fields, relations);
this module only arranges them. Filter operator inputs come from `_filters.py`, shared with the planner.

What each entity `T` (plural `Ts`) gets: the object type (with `id`, `databaseId` and `Node` for a single-column
key, `rowVersion` for a key), root fields per its operations, `TsConnection`/`TsEdge`, `TOrderBy`, `TCondition`,
`TFilter` (+ `TToManyFilter` when another type lists it), `TKeyInput`, `CreateTInput`, `UpdateTInput`, payloads,
nested-write inputs where a relation needs them, and `TErrorCode`.
"""

import json

import attrs
from graphql.language.block_string import print_block_string

from svc.catalog import Bounds
from svc.model import (
    Cardinality,
    ComputedField,
    Entity,
    Field,
    Model,
    Operation,
    Relation,
    ReturnKind,
    Returns,
    RootFunction,
    Scalar,
    ValueKind,
    ValueType,
)
from svc.plan import (
    AGGREGATES,
    LIST,
    FilterOperator,
    Operand,
    enum_operators,
    filterable_computed,
    numeric_fields,
    order_values,
    range_operators,
    scalar_operators,
)

_SCALAR_DESCRIPTIONS = {
    Scalar.BIG_INT: "A 64-bit integer, as a string (JSON numbers lose precision past 2^53).",
    Scalar.DECIMAL: "An arbitrary-precision decimal number, as a string.",
    Scalar.UUID: "A universally unique identifier (RFC 9562), as a string.",
    Scalar.DATETIME: "A point in time, as an ISO 8601 string (`2024-05-01T12:00:00+00:00`).",
    Scalar.DATE: "A calendar date, as an ISO 8601 string (`2024-05-01`).",
    Scalar.TIME: "A time of day, as an ISO 8601 string (`12:00:00`).",
    Scalar.INTERVAL: "A span of time, in PostgreSQL's interval syntax (`1 day 02:00:00`) or ISO 8601 (`P1DT2H`).",
    Scalar.JSON: "Any JSON value.",
}
_BUILT_IN_SCALARS = frozenset({Scalar.INT, Scalar.FLOAT, Scalar.BOOLEAN, Scalar.STRING})
_LIST_ARGS = "first: Int, offset: Int, orderBy: [{order_by}!], condition: {condition}, filter: {filter}"
_CONNECTION_ARGS = (
    "first: Int, after: Cursor, last: Int, before: Cursor, offset: Int, condition: {condition}, filter: {filter},"
    " orderBy: [{order_by}!]"
)


@attrs.define
class _Out:
    """The SDL being written, and the types it refers to that must be written too."""

    lines: list[str] = attrs.field(factory=list)
    filters: set[str] = attrs.field(factory=set)  # `IntFilter`, `MpaaRatingFilter`, `IntListFilter`...
    to_many_filters: set[str] = attrs.field(factory=set)  # entity type names
    nested: set[tuple[str, str]] = attrs.field(factory=set)  # (entity type name, nested input kind)

    def add(self, text: str = "") -> None:
        self.lines.append(text)

    def describe(self, text: str | None, indent: str = "") -> None:
        """A description for the definition added next (nothing when there is no text)."""
        if text:
            self.lines.append(_description(text, indent))


def write_sdl(model: Model) -> str:
    """The whole SDL of the model (types in a stable order: service types, database types, entities, roots)."""
    return _Writer(model).write()


class _Writer:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.out = _Out()
        self.entities = {entity.ref: entity for entity in model.entities}

    def write(self) -> str:
        body = _Out()
        self.out = body
        for entity in self.model.entities:
            self._entity(entity)
        self._query()
        self._mutation()
        self._nested_inputs()
        self._to_many_filters()
        prelude = self._prelude()
        return "\n".join([*prelude, *body.lines]).strip() + "\n"

    # --- service types -----------------------------------------------------------------------------------------

    def _prelude(self) -> list[str]:
        out = _Out()
        out.describe("A JSON-serialized opaque cursor for keyset pagination.")
        out.add("scalar Cursor\n")
        for scalar in Scalar:
            if scalar not in _BUILT_IN_SCALARS:
                out.describe(_SCALAR_DESCRIPTIONS[scalar])
                out.add(f"scalar {scalar.value}\n")
        out.describe(
            "Documents a simple CHECK constraint or a length limit of the column. Advisory: the database checks"
            " every write."
        )
        out.add(
            "directive @constraint(minimum: Float, maximum: Float, exclusiveMinimum: Float, exclusiveMaximum: Float,"
            " multipleOf: Float, minLength: Int, maxLength: Int, pattern: String, minItems: Int, maxItems: Int)"
            " on FIELD_DEFINITION | INPUT_FIELD_DEFINITION\n"
        )
        out.describe("An object with a globally unique `id`.")
        out.add("interface Node {")
        out.describe("A globally unique identifier of the object.", "  ")
        out.add("  id: ID!\n}\n")
        out.describe("Where a page lies in its connection.")
        out.add("type PageInfo {")
        out.add("  hasNextPage: Boolean!\n  hasPreviousPage: Boolean!\n  startCursor: Cursor\n  endCursor: Cursor\n}\n")
        out.describe("What an upsert does with a row that conflicts with an existing one.")
        out.add("enum OnConflictAction {\n  UPDATE\n  NOTHING\n}\n")
        for enum in self.model.enums:
            out.describe(enum.description)
            out.add(f"enum {enum.name} {{")
            out.lines += [f"  {value}" for _, value in enum.values]
            out.add("}\n")
        for composite in self.model.composites:
            out.describe(composite.description)
            out.add(f"type {composite.name} {{")
            out.lines += [f"  {f.name}: {_output(f.type, f.nullable)}" for f in composite.fields]
            out.add("}\n")
            out.add(f"input {composite.input_name} {{")
            out.lines += [f"  {f.name}: {_input(f.type)}" for f in composite.fields]
            out.add("}\n")
        for range_type in self.model.ranges:
            bound = _output(range_type.bound, nullable=False)
            out.add(f"type {range_type.name} {{\n  start: {range_type.name}Bound\n  end: {range_type.name}Bound\n}}\n")
            out.add(f"type {range_type.name}Bound {{\n  value: {bound}\n  inclusive: Boolean!\n}}\n")
            out.add(f"input {range_type.input_name} {{\n  start: {range_type.name}BoundInput")
            out.add(f"  end: {range_type.name}BoundInput\n}}\n")
            value = _input(range_type.bound)
            out.add(f"input {range_type.name}BoundInput {{\n  value: {value}!\n  inclusive: Boolean!\n}}\n")
        for record in self.model.records:
            out.add(f"type {record.name} {{")
            out.lines += [f"  {f.name}: {_output(f.type, True)}" for f in record.fields]
            out.add("}\n")
        for name in sorted(self.out.filters):
            self._filter_input(out, name)
        return out.lines

    def _filter_input(self, out: _Out, name: str) -> None:
        base = name.removesuffix("Filter")
        is_list = base.endswith("List") and base.removesuffix("List") in self._filterable_names()
        item = base.removesuffix("List") if is_list else base
        if is_list:
            operators, value, element = LIST, f"[{self._input_name(item)}]", self._input_name(item)
        elif item in {s.value for s in Scalar}:
            operators, value, element = scalar_operators(Scalar(item)), item, item
        elif any(e.name == item for e in self.model.enums):
            operators, value, element = enum_operators(), item, item
        else:
            range_type = next(r for r in self.model.ranges if r.name == item)
            operators, value, element = range_operators(), range_type.input_name, _input(range_type.bound)
        out.describe(f"Conditions on a {item}{' list' if is_list else ''} value; all given must hold.")
        out.add(f"input {name} {{")
        for operator in operators:
            out.describe(operator.description, "  ")
            out.add(f"  {operator.name}: {_operand(operator, value, element)}")
        out.add("}\n")

    def _filterable_names(self) -> set[str]:
        return {s.value for s in Scalar} | {e.name for e in self.model.enums} | {r.name for r in self.model.ranges}

    def _input_name(self, item: str) -> str:
        range_type = next((r for r in self.model.ranges if r.name == item), None)
        return range_type.input_name if range_type else item

    # --- entity types ------------------------------------------------------------------------------------------

    def _entity(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(entity.description)
        out.add(f"type {names.type}{' implements Node' if entity.node else ''} {{")
        if entity.node:
            out.describe("The globally unique identifier of this row.", "  ")
            out.add("  id: ID!")
            key = entity.field_of_column(entity.primary_key[0]) if entity.primary_key else None
            if key is not None:
                out.describe("The primary key.", "  ")
                out.add(f"  databaseId: {_output(key.type, nullable=False)}")
        if entity.primary_key is not None:
            out.describe("The row's version, for optimistic concurrency (`expectedVersion`).", "  ")
            out.add("  rowVersion: String")
        for field in entity.fields:
            out.describe(field.description, "  ")
            out.add(f"  {field.name}: {_output(field.type, field.nullable)}{_constraint(field)}{_deprecated(field)}")
        for relation in entity.relations:
            self._relation_field(relation)
        for hierarchy in entity.hierarchies:
            args = f"(maxDepth: Int, filter: {names.filter}, orderBy: [{names.order_by}!])"
            out.describe("Rows above this one, nearest first, ending at a cycle.", "  ")
            out.add(f"  {hierarchy.ancestors}{args}: [{names.type}!]!")
            out.describe("Rows below this one, ending at a cycle.", "  ")
            out.add(f"  {hierarchy.descendants}{args}: [{names.type}!]!")
        for computed in entity.computed:
            self._computed_field(computed)
        out.add("}\n")
        self._connection(entity)
        self._order_by(entity)
        self._condition(entity)
        self._filter(entity)
        self._error_codes(entity)
        if entity.primary_key is not None or entity.lookups:
            self._key_input(entity)
        self._write_inputs(entity)
        self._payloads(entity)

    def _relation_field(self, relation: Relation) -> None:
        target = self.entities[relation.target]
        names = target.names
        self.out.describe(relation.description, "  ")
        deprecated = _deprecated(relation)
        if relation.kind is Cardinality.TO_ONE:
            nullable = relation.nullable or not relation.holds_key
            self.out.add(f"  {relation.name}: {names.type}{'' if nullable else '!'}{deprecated}")
            return
        args = _LIST_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
        self.out.add(f"  {relation.name}({args}): [{names.type}!]!{deprecated}")
        self.out.describe(f"`{relation.name}` as a cursor connection.", "  ")
        connection_args = _CONNECTION_ARGS.format(
            order_by=names.order_by, condition=names.condition, filter=names.filter
        )
        self.out.add(f"  {relation.name}Connection({connection_args}): {names.connection}!{deprecated}")

    def _computed_field(self, computed: ComputedField) -> None:
        args = ", ".join(f"{a.name}: {_input(a.type)}{'!' if a.required else ''}" for a in computed.arguments)
        self.out.describe(computed.description, "  ")
        result, list_args = self._returns(computed.returns, nested=True)
        all_args = ", ".join(part for part in (args, list_args) if part)
        self.out.add(f"  {computed.name}{f'({all_args})' if all_args else ''}: {result}{_deprecated(computed)}")

    def _returns(self, returns: Returns, *, nested: bool) -> tuple[str, str]:
        """The GraphQL type of a function's result, and the list arguments that go with it."""
        kind = returns.kind
        if kind in (ReturnKind.ROWS, ReturnKind.ROW):
            assert returns.entity is not None
            names = self.entities[returns.entity].names
            if kind is ReturnKind.ROW:
                return names.type, ""
            if nested:
                return f"[{names.type}!]!", _LIST_ARGS.format(
                    order_by=names.order_by, condition=names.condition, filter=names.filter
                )
            return f"{names.connection}!", _CONNECTION_ARGS.format(
                order_by=names.order_by, condition=names.condition, filter=names.filter
            )
        if kind in (ReturnKind.RECORD, ReturnKind.RECORDS):
            assert returns.record is not None
            return (returns.record.name, "") if kind is ReturnKind.RECORD else (f"[{returns.record.name}!]!", "")
        if kind is ReturnKind.VOID:
            return "Boolean", ""
        assert returns.type is not None
        if kind is ReturnKind.SCALARS:
            return f"[{_output(returns.type, True)}]!", ""
        return _output(returns.type, True), ""

    def _connection(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(f"A page of `{names.type}` rows, with its position and the total count.")
        out.add(f"type {names.connection} {{")
        out.add(f"  nodes: [{names.type}!]!\n  edges: [{names.edge}!]!\n  pageInfo: PageInfo!")
        out.describe(
            "The number of rows matching, across every page (`estimate`: the planner's guess; with `exactBelow`,"
            " exact when the guess is at most that).",
            "  ",
        )
        out.add("  totalCount(estimate: Boolean = false, exactBelow: Int): Int!\n}\n")
        out.add(f"type {names.edge} {{\n  cursor: Cursor!\n  node: {names.type}!\n}}\n")

    def _order_by(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(f"Orderings of `{names.type}` rows; NULLs last ascending and first descending.")
        out.add(f"enum {names.order_by} {{")
        out.lines += [f"  {name}" for name in order_values(entity, self.model)]
        out.add("}\n")

    def _condition(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(f"Equality conditions on `{names.type}` columns; all given must hold (null: is null).")
        out.add(f"input {names.condition} {{")
        for field in entity.fields:
            if _comparable(field.type):
                out.add(f"  {field.name}: {_input(field.type)}")
        out.add("}\n")

    def _filter(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(f"Conditions on `{names.type}` rows; all given must hold.")
        out.add(f"input {names.filter} {{")
        for field in entity.fields:
            filter_name = self._filter_name(field.type)
            if filter_name:
                out.add(f"  {field.name}: {filter_name}")
        for relation in entity.relations:
            target = self.entities[relation.target]
            if relation.kind is Cardinality.TO_ONE:
                out.add(f"  {relation.name}: {target.names.filter}")
            else:
                out.to_many_filters.add(target.type_name)
                out.add(f"  {relation.name}: {target.names.to_many_filter}")
        for computed in entity.computed:
            if filterable_computed(computed) and computed.returns.type is not None:
                filter_name = self._filter_name(computed.returns.type)
                if filter_name:
                    out.add(f"  {computed.name}: {filter_name}")
        out.describe("All of the conditions hold.", "  ")
        out.add(f"  and: [{names.filter}!]")
        out.describe("At least one of the conditions holds.", "  ")
        out.add(f"  or: [{names.filter}!]")
        out.describe("The condition does not hold.", "  ")
        out.add(f"  not: {names.filter}\n}}\n")

    def _filter_name(self, value: ValueType) -> str | None:
        if value.kind in (ValueKind.SCALAR, ValueKind.ENUM, ValueKind.RANGE):
            name = f"{value.name}Filter"
        elif value.kind is ValueKind.LIST and value.item and value.item.kind in (ValueKind.SCALAR, ValueKind.ENUM):
            name = f"{value.item.name}ListFilter"
        else:
            return None
        self.out.filters.add(name)
        return name

    def _to_many_filters(self) -> None:
        for type_name in sorted(self.out.to_many_filters):
            entity = self.model.entity_named(type_name)
            assert entity is not None
            names = entity.names
            numeric = numeric_fields(entity)
            self.out.describe(f"Conditions on the `{type_name}` rows a relation lists.")
            self.out.add(f"input {names.to_many_filter} {{")
            self.out.describe("Some related row matches.", "  ")
            self.out.add(f"  some: {names.filter}")
            self.out.describe("Every related row matches (a NULL condition does not match).", "  ")
            self.out.add(f"  every: {names.filter}")
            self.out.describe("No related row matches.", "  ")
            self.out.add(f"  none: {names.filter}")
            self.out.describe("The number of related rows.", "  ")
            self.out.add("  count: IntFilter")
            if numeric:
                for aggregate in AGGREGATES:
                    self.out.describe(f"The {aggregate} of a numeric column over the related rows.", "  ")
                    self.out.add(f"  {aggregate}: {names.aggregate_filter}")
            self.out.add("}\n")
            self.out.filters.add("IntFilter")
            if numeric:
                self.out.describe(f"Conditions on an aggregate of `{type_name}` columns (compared as Float).")
                self.out.add(f"input {names.aggregate_filter} {{")
                self.out.lines += [f"  {field.name}: FloatFilter" for field in numeric]
                self.out.add("}\n")
                self.out.filters.add("FloatFilter")

    def _error_codes(self, entity: Entity) -> None:
        if not entity.error_codes or not entity.mutation_fields():
            return
        self.out.describe(f"Every code a write of `{entity.type_name}` rows can fail with (`extensions.code`).")
        self.out.add(f"enum {entity.names.error_code} {{")
        self.out.lines += [f"  {code.code}" for code in entity.error_codes]
        self.out.add("}\n")

    def _key_input(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(f"A `{names.type}` row by its global ID, its primary key or another unique key.")
        out.add(f"input {names.key_input} {{")
        if entity.node:
            out.add("  id: ID")
        columns = list(entity.primary_key or ())
        for lookup in entity.lookups:
            columns += [c for c in lookup.columns if c not in columns]
        for column in columns:
            field = entity.field_of_column(column)
            if field is not None:
                out.add(f"  {field.name}: {_input(field.type)}")
        out.add("}\n")

    def _write_inputs(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        if Operation.CREATE in entity.operations:
            covered = {column for r in entity.relations if r.holds_key and r.insertable for column, _ in r.pairs}
            out.describe(f"A new `{names.type}` row; nested relation members write related rows too.")
            out.add(f"input {names.create_input} {{")
            for field in entity.fields:
                if field.insertable:
                    required = not field.optional_on_create and field.column not in covered
                    out.add(f"  {field.name}: {_input(field.type)}{'!' if required else ''}{_constraint(field)}")
            self._relation_inputs(entity, update=False)
            out.add("}\n")
        if Operation.UPDATE in entity.operations:
            out.describe(f"Changes to a `{names.type}` row: the members given are set (null sets NULL).")
            out.add(f"input {names.update_input} {{")
            for field in entity.fields:
                if field.updatable:
                    out.add(f"  {field.name}: {_input(field.type)}{_constraint(field)}")
            self._relation_inputs(entity, update=True)
            out.add("}\n")

    def _relation_inputs(self, entity: Entity, *, update: bool) -> None:
        for relation in entity.relations:
            target = self.entities[relation.target]
            if not (relation.updatable if update else relation.insertable):
                continue
            if Operation.CREATE not in target.operations and not target.primary_key:
                continue
            if relation.kind is Cardinality.TO_ONE and relation.holds_key:
                kind = "to_one_update_input" if update else "to_one_input"
            elif relation.kind is Cardinality.MANY_TO_MANY:
                kind = "many_to_many_update_input" if update else "many_to_many_input"
            elif relation.kind is Cardinality.TO_MANY:
                kind = "to_many_update_input" if update else "to_many_input"
            else:
                continue
            self.out.nested.add((target.type_name, kind))
            self.out.add(f"  {relation.name}: {getattr(target.names, kind)}")

    def _nested_inputs(self) -> None:
        written: set[tuple[str, str]] = set()
        while pending := sorted(self.out.nested - written):
            for type_name, kind in pending:
                written.add((type_name, kind))
                entity = self.model.entity_named(type_name)
                assert entity is not None
                self._nested_input(entity, kind)

    def _nested_input(self, entity: Entity, kind: str) -> None:
        names, out = entity.names, self.out
        keyed = entity.primary_key is not None or bool(entity.lookups)
        creates = Operation.CREATE in entity.operations
        many = not kind.startswith("to_one")
        members: list[tuple[str, str]] = []
        if keyed:
            members.append(("connect", _many(names.key_input, many)))
        if creates:
            members.append(("create", _many(names.create_input, many)))
        if keyed and creates:
            members.append(("connectOrCreate", _many(names.connect_or_create, many)))
            self.out.nested.add((entity.type_name, "connect_or_create"))
        if kind == "to_one_update_input":
            members.append(("disconnect", "Boolean"))
            if Operation.UPDATE in entity.operations:
                members.append(("update", names.update_input))
        if kind in ("to_many_update_input", "many_to_many_update_input") and keyed:
            members += [("disconnect", f"[{names.key_input}!]"), ("set", f"[{names.key_input}!]")]
        if kind == "to_many_update_input" and keyed:
            if Operation.UPDATE in entity.operations:
                members.append(("update", f"[{names.update_by_key}!]"))
                self.out.nested.add((entity.type_name, "update_by_key"))
            if Operation.DELETE in entity.operations:
                members.append(("delete", f"[{names.key_input}!]"))
            if creates:
                members.append(("sync", f"[{names.create_input}!]"))
        if kind == "connect_or_create":
            members = [("where", f"{names.key_input}!"), ("create", f"{names.create_input}!")]
        if kind == "update_by_key":
            members = [("where", f"{names.key_input}!"), ("data", f"{names.update_input}!")]
        out.add(f"input {getattr(names, kind)} {{")
        out.lines += [f"  {name}: {type_}" for name, type_ in members]
        out.add("}\n")

    def _payloads(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        one, many = _lower(names.type), _lower(names.plural)
        if Operation.CREATE in entity.operations:
            out.add(f"type {names.create_payload} {{\n  {one}: {names.type}")
            if entity.upsertable and entity.lookups:
                out.describe("With onConflict: the row as it was before (null when the row was inserted).", "  ")
                out.add(f"  previous{names.type}: {names.type}")
            out.add("}\n")
            out.add(f"type {names.create_many_payload} {{\n  {many}: [{names.type}!]!\n}}\n")
        if Operation.UPDATE in entity.operations:
            out.add(f"type {names.update_payload} {{\n  {one}: {names.type}")
            out.describe("The row as it was before the write (null for a row an upsert inserted).", "  ")
            out.add(f"  previous{names.type}: {names.type}\n}}\n")
            out.add(f"type {names.update_many_payload} {{\n  {many}: [{names.type}!]!")
            out.add(f"  previous{names.plural}: [{names.type}!]!\n  affectedCount: Int!\n}}\n")
        if Operation.DELETE in entity.operations:
            out.add(f"type {names.delete_payload} {{\n  {one}: {names.type}")
            if entity.node:
                out.add("  deletedId: ID")
            out.add("}\n")
            out.add(f"type {names.delete_many_payload} {{\n  {many}: [{names.type}!]!\n  affectedCount: Int!\n}}\n")

    # --- roots -------------------------------------------------------------------------------------------------

    def _query(self) -> None:
        out = self.out
        out.add("type Query {")
        out.describe("Any row with a global ID (null when the ID is malformed or the row is missing).", "  ")
        out.add("  node(id: ID!): Node")
        for entity in self.model.entities:
            names, deprecated = entity.names, _deprecated(entity)
            if Operation.READ in entity.operations:
                for lookup in entity.lookups:
                    args = ", ".join(self._key_argument(entity, column) for column in lookup.columns)
                    out.add(f"  {lookup.name}({args}): {names.type}{deprecated}")
            if Operation.LIST in entity.operations:
                args = _LIST_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
                out.describe(f"`{names.type}` rows (at most `limits.page_size.max`).", "  ")
                out.add(f"  {entity.roots.list}({args}): [{names.type}!]!{deprecated}")
            if Operation.CONNECTION in entity.operations:
                args = _CONNECTION_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
                out.add(f"  {entity.roots.connection}({args}): {names.connection}!{deprecated}")
        for function in self.model.functions:
            if not function.mutation:
                self._function_field(function)
        out.add("}\n")

    def _key_argument(self, entity: Entity, column: str) -> str:
        field = entity.field_of_column(column)
        assert field is not None
        return f"{field.name}: {_input(field.type)}!"

    def _function_field(self, function: RootFunction) -> None:
        args = ", ".join(
            f"{a.name}: {_input(a.type)}{'!' if a.required and function.strict else ''}" for a in function.arguments
        )
        result, list_args = self._returns(function.returns, nested=False)
        all_args = ", ".join(part for part in (args, list_args) if part)
        self.out.describe(function.description, "  ")
        self.out.add(f"  {function.name}{f'({all_args})' if all_args else ''}: {result}{_deprecated(function)}")

    def _mutation(self) -> None:
        out = self.out
        fields: list[str] = []
        for entity in self.model.entities:
            fields += self._entity_mutations(entity)
        for function in self.model.functions:
            if function.mutation:
                before = len(out.lines)
                self._function_field(function)
                fields += out.lines[before:]
                del out.lines[before:]
        if fields:
            out.add("type Mutation {")
            out.lines += fields
            out.add("}\n")

    def _entity_mutations(self, entity: Entity) -> list[str]:
        names, roots, deprecated = entity.names, entity.roots, _deprecated(entity)
        key_args = (
            ", ".join(self._key_argument(entity, column) for column in entity.primary_key) if entity.primary_key else ""
        )
        on_conflict = f", onConflict: {names.on_conflict}" if entity.upsertable and entity.lookups else ""
        fields = []
        if Operation.CREATE in entity.operations:
            if on_conflict:
                self._on_conflict_input(entity)
            fields.append(
                f"  {roots.create}(input: {names.create_input}!{on_conflict}): {names.create_payload}{deprecated}"
            )
            fields.append(
                f"  {roots.create_many}(inputs: [{names.create_input}!]!{on_conflict}): {names.create_many_payload}"
                f"{deprecated}"
            )
        version = "expectedVersion: String"
        if Operation.UPDATE in entity.operations:
            fields.append(f"  {roots.update}({key_args}, set: {names.update_input}!, {version}): {names.update_payload}"
                          f"{deprecated}")  # fmt: skip
            if entity.node:
                fields.append(f"  {roots.update_by_node_id}(nodeId: ID!, set: {names.update_input}!, {version}):"
                              f" {names.update_payload}{deprecated}")  # fmt: skip
            fields.append(f"  {roots.update_many}(where: {names.filter}, set: {names.update_input}!,"
                          f" unfiltered: Boolean): {names.update_many_payload}{deprecated}")  # fmt: skip
        if Operation.DELETE in entity.operations:
            fields.append(f"  {roots.delete}({key_args}, {version}): {names.delete_payload}{deprecated}")
            if entity.node:
                fields.append(
                    f"  {roots.delete_by_node_id}(nodeId: ID!, {version}): {names.delete_payload}{deprecated}"
                )
            fields.append(f"  {roots.delete_many}(where: {names.filter}, unfiltered: Boolean):"
                          f" {names.delete_many_payload}{deprecated}")  # fmt: skip
        return fields

    def _on_conflict_input(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe("What to do when a created row conflicts with an existing one on a unique key.")
        out.add(f"input {names.on_conflict} {{")
        out.describe("The unique constraint or index that conflicts (by its database name).", "  ")
        out.add("  constraint: String")
        out.describe("Or the columns (field names) of the unique key that conflicts.", "  ")
        out.add("  columns: [String!]")
        out.add("  action: OnConflictAction! = UPDATE")
        out.describe("Fields to update (default: every field the input sets, but the key).", "  ")
        out.add("  update: [String!]\n}\n")


# --- small pieces --------------------------------------------------------------------------------------------


def _description(text: str, indent: str = "") -> str:
    """A description as the line(s) before a definition."""
    return "\n".join(indent + line for line in print_block_string(text).splitlines())


def _output(value: ValueType, nullable: bool) -> str:
    bang = "" if nullable else "!"
    if value.kind is ValueKind.LIST:
        assert value.item is not None
        return f"[{_output(value.item, value.item_nullable)}]{bang}"
    return f"{value.name}{bang}"


def _input(value: ValueType) -> str:
    if value.kind is ValueKind.LIST:
        assert value.item is not None
        return f"[{_input(value.item)}]"
    if value.kind in (ValueKind.COMPOSITE, ValueKind.RANGE):
        return f"{value.name}Input"
    return value.name


def _operand(operator: FilterOperator, value: str, element: str) -> str:
    return {
        Operand.BOOLEAN: "Boolean",
        Operand.VALUE: value,
        Operand.VALUES: f"[{value}!]",
        Operand.STRING: "String",
        Operand.STRINGS: "[String!]",
        Operand.ITEM: element,
        Operand.ITEMS: f"[{element}]",
    }[operator.operand]


def _many(type_name: str, many: bool) -> str:
    return f"[{type_name}!]" if many else type_name


def _lower(name: str) -> str:
    return name[:1].lower() + name[1:]


def _comparable(value: ValueType) -> bool:
    """Usable in `<Type>Condition` (equality): not json (no `=`) and not composite."""
    if value.kind is ValueKind.COMPOSITE:
        return False
    return not (value.kind is ValueKind.SCALAR and value.sql_type == "json")


def _constraint(field: Field) -> str:
    """`@constraint(...)` from the column's simple CHECK bounds and varchar length (SPEC "@constraint directive").

    Only scalars and lists carry it: an enum's values say all a length or pattern could.
    """
    if field.type.kind not in (ValueKind.SCALAR, ValueKind.LIST):
        return ""
    bounds = field.bounds or Bounds()
    arguments = {
        "minimum": bounds.minimum,
        "maximum": bounds.maximum,
        "exclusiveMinimum": bounds.exclusive_minimum,
        "exclusiveMaximum": bounds.exclusive_maximum,
        "minLength": bounds.min_length,
        "maxLength": bounds.max_length if bounds.max_length is not None else field.max_length,
        "pattern": bounds.pattern,
        "minItems": bounds.min_items,
        "maxItems": bounds.max_items,
    }
    given = [f"{name}: {_literal(value)}" for name, value in arguments.items() if value is not None]
    return f" @constraint({', '.join(given)})" if given else ""


def _literal(value: object) -> str:
    if isinstance(value, str):
        return print_block_string(value) if "\n" in value else _string(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _deprecated(item: object) -> str:
    deprecation = getattr(item, "deprecation", None)
    if deprecation is None:
        return ""
    return f" @deprecated(reason: {_string(deprecation.reason)})"
