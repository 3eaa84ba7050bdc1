"""The GraphQL SDL of a model (SPEC "Resources and their fields", "GraphQL behaviour").

Written as SDL text, then parsed and built by graphql-core (`svc/graphql/_schema_builder.py`), which validates it and
prints the exported file. Every generated name comes from the model (`Entity.names`, `Entity.roots`, fields,
relations); this module only arranges them. Filter operator inputs come from `svc.plan`, shared with the planners.

What each entity `T` (plural `Ts`) gets: the object type (with `id`, `databaseId` and `Node` for a single-column
key, `rowVersion` for a key), root fields per its operations, `TsConnection`/`TsEdge`, `TOrderBy`, `TCondition`,
`TFilter` (+ `TToManyFilter` when another type lists it), `TKeyInput`, `CreateTInput`, `UpdateTInput`, payloads,
nested-write inputs where a relation needs them, and `TErrorCode`.
"""

import enum
import json

import attrs
from graphql.language.block_string import print_block_string

from svc.catalog import Bounds
from svc.model import (
    Cardinality,
    ComputedField,
    Entity,
    Field,
    Hierarchy,
    Lookup,
    Model,
    Operation,
    Relation,
    ReturnKind,
    Returns,
    RootFunction,
    Scalar,
    SearchMethod,
    TypeNames,
    ValueKind,
    ValueType,
)
from svc.plan import (
    AGGREGATES,
    HAVING_MEMBERS,
    LIST,
    AggregateMember,
    FieldKind,
    FieldMeaning,
    FilterOperator,
    Operand,
    Special,
    entity_fields,
    enum_operators,
    filterable_computed,
    global_sources,
    group_values,
    member_fields,
    member_type,
    member_type_name,
    numeric_fields,
    offered_members,
    one_version,
    order_values,
    range_operators,
    scalar_operators,
    special_of,
    special_operators,
)

from ._federation import SHAREABLE, key_directives
from ._field_meanings import (
    GLOBAL_SEARCH_HIT,
    GLOBAL_SEARCH_NODE,
    GLOBAL_SEARCH_RESULTS,
    MutationKind,
    PayloadNames,
    RootKind,
    mutation_roots,
    query_roots,
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
#: Lists and connections of a temporal type: only the versions valid at an instant (SPEC "List query parameters").
_AS_OF = ", asOf: Datetime"
_CONNECTION_ARGS = (
    "first: Int, after: Cursor, last: Int, before: Cursor, offset: Int, condition: {condition}, filter: {filter},"
    " orderBy: [{order_by}!]"
)


GEOMETRY_DISTANCE_INPUT = "GeometryDistanceInput"
_SCORE_DESCRIPTION = (
    "How well the row matches, higher is better: word similarity (fuzzy), ts_rank (full text), vector similarity"
    " (semantic: cosine similarity, inner product, or 1 / (1 + L2 distance)), the fused reciprocal ranks (hybrid),"
    " 1 / (1 + distance) (nearest)."
)
_SEARCH_DESCRIPTIONS = {
    SearchMethod.FUZZY: (
        "`{type}` rows whose text is most like `query` (trigram word similarity of at least `minSimilarity`, else"
        " the database's threshold), best first."
    ),
    SearchMethod.FULL_TEXT: "`{type}` rows whose document matches the web-search style `query`, by rank.",
    SearchMethod.SEMANTIC: "`{type}` rows whose vector is most similar to `vector` (at least `minScore`), best first.",
    SearchMethod.HYBRID: (
        "`{type}` rows by reciprocal rank fusion of a text search for `query` and a vector search for `vector`: each"
        " ranks its best 50 (or first + 1) rows, scored `weight / (rrfK + rank)` (defaults 1, 1 and 60)."
    ),
    SearchMethod.NEAREST: (
        "`{type}` rows nearest to the GeoJSON geometry `near` (within `maxDistance` when given), nearest first."
    ),
}


def _search_enums(names: TypeNames) -> tuple[tuple[SearchMethod, str], ...]:
    return (
        (SearchMethod.FUZZY, names.fuzzy_field),
        (SearchMethod.FULL_TEXT, names.full_text_field),
        (SearchMethod.SEMANTIC, names.vector_field),
        (SearchMethod.NEAREST, names.spatial_field),
    )


class NestedInput(enum.Enum):
    """An input type nested writes need for a related entity (SPEC "Nested writes"): a relation member's input, by
    the relation's cardinality in a create or an update, or the two those inputs refer to. The values order the
    inputs in the SDL."""

    CONNECT_OR_CREATE = "connect_or_create"
    MANY_TO_MANY = "many_to_many_input"
    MANY_TO_MANY_UPDATE = "many_to_many_update_input"
    TO_MANY = "to_many_input"
    TO_MANY_UPDATE = "to_many_update_input"
    TO_ONE = "to_one_input"
    TO_ONE_UPDATE = "to_one_update_input"
    UPDATE_BY_KEY = "update_by_key"

    @classmethod
    def of(cls, relation: Relation, *, update: bool) -> "NestedInput | None":
        """The input of a relation member (None: a to-one relation whose row does not hold the key has none)."""
        if relation.kind is Cardinality.TO_ONE:
            if not relation.holds_key:
                return None
            return cls.TO_ONE_UPDATE if update else cls.TO_ONE
        if relation.kind is Cardinality.MANY_TO_MANY:
            return cls.MANY_TO_MANY_UPDATE if update else cls.MANY_TO_MANY
        return cls.TO_MANY_UPDATE if update else cls.TO_MANY

    def type_name(self, names: TypeNames) -> str:
        """The input type's name for the entity of `names`."""
        return {
            NestedInput.CONNECT_OR_CREATE: names.connect_or_create,
            NestedInput.MANY_TO_MANY: names.many_to_many_input,
            NestedInput.MANY_TO_MANY_UPDATE: names.many_to_many_update_input,
            NestedInput.TO_MANY: names.to_many_input,
            NestedInput.TO_MANY_UPDATE: names.to_many_update_input,
            NestedInput.TO_ONE: names.to_one_input,
            NestedInput.TO_ONE_UPDATE: names.to_one_update_input,
            NestedInput.UPDATE_BY_KEY: names.update_by_key,
        }[self]


@attrs.frozen
class _Compared:
    """The values a `<Name>Filter` input compares: of a scalar, enum or range type, or lists of a scalar or enum."""

    kind: ValueKind  # SCALAR, ENUM or RANGE: the item's
    name: str  # the item type's GraphQL name
    list: bool = False
    #: Values with operators of their own (ltree, tsvector, PostGIS types, multiranges).
    special: Special | None = None


@attrs.define
class _Out:
    """The SDL being written, and the types it refers to that must be written too."""

    lines: list[str] = attrs.field(factory=list)
    #: Filter inputs by name: `IntFilter`, `MpaaRatingFilter`, `IntListFilter`...
    filters: dict[str, _Compared] = attrs.field(factory=dict)
    to_many_filters: set[str] = attrs.field(factory=set)  # entity type names
    nested: set[tuple[str, "NestedInput"]] = attrs.field(factory=set)  # (entity type name, its input)
    spatial: bool = False  # a spatial filter needs GeometryDistanceInput

    def add(self, text: str = "") -> None:
        self.lines.append(text)

    def describe(self, text: str | None, indent: str = "") -> None:
        """A description for the definition added next (nothing when there is no text)."""
        if text:
            self.lines.append(_description(text, indent))


def write_sdl(model: Model, *, subscriptions: bool = False, federation: bool = False) -> str:
    """The whole SDL of the model (types in a stable order: service types, database types, entities, roots); with
    `subscriptions`, a Subscription type whose fields are the Query fields; with `federation`, the entities' `@key`
    directives (SPEC "Federation and subscriptions"; `_federation.py` adds the rest)."""
    return _Writer(model, subscriptions=subscriptions, federation=federation).write()


class _Writer:
    def __init__(self, model: Model, *, subscriptions: bool = False, federation: bool = False) -> None:
        self.model = model
        self.subscriptions = subscriptions
        self.federation = federation
        self.out = _Out()
        self.entities = {entity.ref: entity for entity in model.entities}

    def write(self) -> str:
        body = _Out()
        self.out = body
        for entity in self.model.entities:
            self._entity(entity)
        self._global_search_types()
        self._query()
        self._mutation()
        if self.subscriptions:
            self._subscription()
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
        out.describe("Sends this fragment after the rest of the result (incremental delivery, multipart/mixed).")
        out.add("directive @defer(if: Boolean! = true, label: String) on FRAGMENT_SPREAD | INLINE_FRAGMENT\n")
        out.describe("Sends the first `initialCount` items with the result and the rest after it (multipart/mixed).")
        out.add("directive @stream(if: Boolean! = true, label: String, initialCount: Int = 0) on FIELD\n")
        out.describe("An object with a globally unique `id`.")
        out.add("interface Node {")
        out.describe("A globally unique identifier of the object.", "  ")
        out.add("  id: ID!\n}\n")
        out.describe("Where a page lies in its connection.")
        out.add(f"type PageInfo{SHAREABLE if self.federation else ''} {{")
        out.add("  hasNextPage: Boolean!\n  hasPreviousPage: Boolean!\n  startCursor: Cursor\n  endCursor: Cursor\n}\n")
        out.describe("What an upsert does with a row that conflicts with an existing one.")
        out.add("enum OnConflictAction {\n  UPDATE\n  NOTHING\n}\n")
        for enum_type in self.model.enums:
            out.describe(enum_type.description)
            out.add(f"enum {enum_type.name} {{")
            out.lines += [f"  {value}" for _, value in enum_type.values]
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
            self._filter_input(out, name, self.out.filters[name])
        if self.out.spatial:
            out.describe("Rows within `distance` of `near` (a geography's in metres, a geometry's in its units).")
            out.add(f"input {GEOMETRY_DISTANCE_INPUT} {{\n  near: JSON!\n  distance: Float!\n}}\n")
        return out.lines

    def _filter_input(self, out: _Out, name: str, compared: _Compared) -> None:
        item = compared.name
        if compared.special is Special.MULTIRANGE:
            range_type = next(r for r in self.model.ranges if r.name == item)
            operators, value, element = (
                special_operators(compared.special),
                range_type.input_name,
                _input(range_type.bound),
            )
        elif compared.special is not None:
            operators, value, element = special_operators(compared.special), "String", "String"
            if compared.special in (Special.GEOMETRY, Special.GEOGRAPHY):
                self.out.spatial = True
        elif compared.list:
            operators, value, element = LIST, f"[{item}]", item
        elif compared.kind is ValueKind.SCALAR:
            operators, value, element = scalar_operators(Scalar(item)), item, item
        elif compared.kind is ValueKind.ENUM:
            operators, value, element = enum_operators(), item, item
        else:
            range_type = next(r for r in self.model.ranges if r.name == item)
            operators, value, element = range_operators(), range_type.input_name, _input(range_type.bound)
        out.describe(f"Conditions on a {item}{' list' if compared.list else ''} value; all given must hold.")
        out.add(f"input {name} {{")
        for operator in operators:
            out.describe(operator.description, "  ")
            out.add(f"  {operator.name}: {_operand(operator, value, element)}")
        out.add("}\n")

    # --- entity types ------------------------------------------------------------------------------------------

    def _entity(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        out.describe(entity.description)
        keys = key_directives(entity) if self.federation else ""
        out.add(f"type {names.type}{' implements Node' if entity.node else ''}{keys} {{")
        for name, meaning in entity_fields(entity).items():
            self._entity_field(entity, name, meaning)
        out.add("}\n")
        self._arcs(entity)
        self._connection(entity)
        self._aggregate_filter(entity)
        self._order_by(entity)
        self._condition(entity)
        self._filter(entity)
        self._error_codes(entity)
        self._search_types(entity)
        if entity.primary_key is not None or entity.lookups:
            self._key_input(entity)
        self._write_inputs(entity)
        self._payloads(entity)

    def _arcs(self, entity: Entity) -> None:
        """Each exclusive arc's union of the types it may point at, and the inputs connecting it by type."""
        out = self.out
        for arc in entity.arcs:
            relations = entity.arc_relations(arc)
            targets = [self.entities[r.target] for r in relations]
            out.describe(f"A row `{entity.names.type}.{arc.name}` may point at.")
            out.add(f"union {arc.type_name} = {' | '.join(t.names.type for t in targets)}\n")
            connects = self.model.arc_input(entity, arc)
            if not connects:
                continue
            out.describe(f"Sets `{entity.names.type}.{arc.name}`: connects the row of the one type given.")
            out.add(f"input {arc.input_name} {{\n  connect: {arc.connect_name}!\n}}\n")
            out.describe(f"The row `{arc.name}` points at: give exactly one type's key.")
            out.add(f"input {arc.connect_name} {{")
            out.lines += [f"  {t.names.type}: {t.names.key_input}" for _, t in connects]
            out.add("}\n")

    def _arc_members(self, entity: Entity, *, update: bool) -> None:
        """The members of a create's (an update's) input setting an exclusive arc."""
        for arc in entity.arcs:
            if self.model.arc_connects(entity, arc, update=update):
                self.out.add(f"  {arc.name}: {arc.input_name}")

    def _search_types(self, entity: Entity) -> None:
        """The field enums of an entity's search methods, and its search results and hits (SPEC "Search fields")."""
        names, out, search = entity.names, self.out, entity.search
        if Operation.LIST not in entity.operations or not search.methods:
            return
        for method, enum_name in _search_enums(names):
            documents = search.of(method)
            if documents:
                out.describe(f"The documents `{entity.search_root(method)}` searches (the first by default).")
                out.add(f"enum {enum_name} {{")
                out.lines += [f"  {document.name}" for document in documents]
                out.add("}\n")
        out.describe(f"The best matches of a search of `{names.type}` rows, best first.")
        out.add(f"type {names.search_results} {{\n  hits: [{names.search_hit}!]!")
        out.describe("More rows matched than were returned.", "  ")
        out.add("  hasMore: Boolean!\n}\n")
        out.describe(f"A `{names.type}` row a search matched.")
        out.add(f"type {names.search_hit} {{")
        out.describe(_SCORE_DESCRIPTION, "  ")
        out.add(f"  score: Float!\n  node: {names.type}!")
        if any(d.source is not None for d in search.of(SearchMethod.FULL_TEXT)):
            out.describe(
                "Full-text search: the matched text with the query's words between `startSel` and `stopSel` (default"
                " `<b>`, `</b>`), HTML-escaped but for those; null from other searches.",
                "  ",
            )
            out.add(
                "  highlight(startSel: String, stopSel: String, maxWords: Int, minWords: Int, maxFragments: Int):"
                " String"
            )
        if search.of(SearchMethod.NEAREST):
            out.describe(
                "Nearest search: the distance from `near` (a geography's in metres, a geometry's in its units).", "  "
            )
            out.add("  distance: Float")
        out.add("}\n")

    def _global_search_types(self) -> None:
        sources = global_sources(self.model)
        if not sources:
            return
        out = self.out
        out.describe("A row of any type `globalSearch` searches.")
        out.add(f"union {GLOBAL_SEARCH_NODE} = {' | '.join(e.names.type for e in sources)}\n")
        out.describe("The best matches of every searchable type, best first.")
        out.add(f"type {GLOBAL_SEARCH_RESULTS} {{\n  hits: [{GLOBAL_SEARCH_HIT}!]!")
        out.describe("More rows matched than were returned.", "  ")
        out.add("  hasMore: Boolean!\n}\n")
        out.describe("A row `globalSearch` matched.")
        out.add(f"type {GLOBAL_SEARCH_HIT} {{")
        out.describe(_SCORE_DESCRIPTION, "  ")
        out.add(f"  score: Float!\n  node: {GLOBAL_SEARCH_NODE}!\n}}\n")

    def _entity_field(self, entity: Entity, name: str, meaning: FieldMeaning) -> None:
        """One field of the entity's object type, as `svc.plan.entity_fields` names it (and the planner reads it).

        Nothing for `__typename` (every type has it) nor for `databaseId` when the key's column is not exposed.
        """
        names, out, kind = entity.names, self.out, meaning.kind
        if kind is FieldKind.GLOBAL_ID:
            out.describe("The globally unique identifier of this row.", "  ")
            out.add(f"  {name}: ID!")
        elif kind is FieldKind.DATABASE_ID:
            key = entity.field_of_column(entity.primary_key[0]) if entity.primary_key else None
            if key is not None:
                out.describe("The primary key.", "  ")
                out.add(f"  {name}: {_output(key.type, nullable=False)}")
        elif kind is FieldKind.ROW_VERSION:
            out.describe("The row's version, for optimistic concurrency (`expectedVersion`).", "  ")
            out.add(f"  {name}: String")
        elif kind is FieldKind.SUBTYPE_NAME:
            subtypes = ", ".join(f"`{s.type_name}` when it has a `{s.relation}`" for s in entity.subtypes)
            out.describe(f"The row's concrete type: {subtypes}, else `{entity.type_name}`.", "  ")
            out.add(f"  {name}: String!")
        elif kind is FieldKind.COLUMN:
            field = meaning.field
            assert field is not None
            out.describe(field.description, "  ")
            out.add(f"  {name}: {_output(field.type, field.nullable)}{_constraint(field)}{_deprecated(field)}")
        elif kind in (FieldKind.RELATION, FieldKind.RELATION_CONNECTION):
            assert meaning.relation is not None
            self._relation_field(name, meaning.relation, connection=kind is FieldKind.RELATION_CONNECTION)
        elif kind in (FieldKind.ANCESTORS, FieldKind.DESCENDANTS):
            args = f"(maxDepth: Int, filter: {names.filter}, orderBy: [{names.order_by}!])"
            assert meaning.hierarchy is not None
            out.describe(_walk_description(meaning.hierarchy, ancestors=kind is FieldKind.ANCESTORS), "  ")
            out.add(f"  {name}{args}: [{names.type}!]!")
        elif kind is FieldKind.COMPUTED:
            assert meaning.computed is not None
            self._computed_field(name, meaning.computed)
        elif kind is FieldKind.HISTORY:
            out.describe("Every version of this row (the rows sharing its key but the period), in time order.", "  ")
            out.add(f"  {name}: [{names.type}!]!")
        elif kind is FieldKind.ARC:
            assert meaning.arc is not None
            out.describe(
                f"The row the exclusive arc `{meaning.arc.check}` points at (one of its key columns is set).", "  "
            )
            out.add(f"  {name}: {meaning.arc.type_name}")

    def _relation_field(self, name: str, relation: Relation, *, connection: bool) -> None:
        """A to-one relation's row, a to-many or many-to-many relation's list, or that list as a connection."""
        target = self.entities[relation.target]
        names = target.names
        deprecated = _deprecated(relation)
        as_of = _AS_OF if target.temporal is not None else ""
        if connection:
            self.out.describe(f"`{relation.name}` as a cursor connection.", "  ")
            args = _CONNECTION_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
            self.out.add(f"  {name}({args}{as_of}): {names.connection}!{deprecated}")
            return
        self.out.describe(relation.description, "  ")
        if relation.kind is Cardinality.TO_ONE:
            nullable = relation.nullable or not relation.holds_key
            if one_version(relation, target):
                # The version valid at `asOf` (else the parent's, else now): there may be none then.
                self.out.add(f"  {name}(asOf: Datetime): {names.type}{deprecated}")
                return
            self.out.add(f"  {name}: {names.type}{'' if nullable else '!'}{deprecated}")
            return
        args = _LIST_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
        self.out.add(f"  {name}({args}{as_of}): [{names.type}!]!{deprecated}")

    def _computed_field(self, name: str, computed: ComputedField) -> None:
        args = ", ".join(f"{a.name}: {_input(a.type)}{'!' if a.required else ''}" for a in computed.arguments)
        self.out.describe(computed.description, "  ")
        result, list_args = self._returns(computed.returns, nested=True)
        all_args = ", ".join(part for part in (args, list_args) if part)
        self.out.add(f"  {name}{f'({all_args})' if all_args else ''}: {result}{_deprecated(computed)}")

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
        out.add("  totalCount(estimate: Boolean = false, exactBelow: Int): Int!")
        out.describe("Aggregates of the rows matching, across every page (`filter`: of those matching it too).", "  ")
        out.add(f"  aggregates(filter: {names.filter}): {names.aggregates}!")
        grouped = bool(group_values(entity))
        if grouped:
            out.describe(
                "The rows matching (`filter`: and it), grouped by `groupBy` in its order, groups ordered by their"
                " keys. Dates and timestamps truncate in the session's time zone, or `timeZone` (an IANA name);"
                " `_BINNED` keys fall into bins of `binWidth` (an ISO 8601 duration such as `PT15M` for dates and"
                " times, a number for numbers) counted from `binOrigin` (default 2001-01-01 or 0); `having` keeps"
                " the groups it holds for; `fillGaps` adds the empty groups between the first and last key of its"
                " one truncated or binned key.",
                "  ",
            )
            out.add(
                f"  groupedAggregates(groupBy: [{names.group_by}!]!, having: {names.having}, filter: {names.filter},"
                " timeZone: String, binWidth: String, binOrigin: String, fillGaps: Boolean = false):"
                f" [{names.aggregates_group}!]!"
            )
        out.add("}\n")
        out.add(f"type {names.edge} {{\n  cursor: Cursor!\n  node: {names.type}!")
        partition = f"(partitionBy: [{names.group_by}!])" if grouped else ""
        windows = [
            ("rowNumber", "Int!", "The row's number"),
            ("rank", "Int!", "The row's rank by the orderBy values (ties share it, gaps follow)"),
            ("denseRank", "Int!", "The row's rank by the orderBy values, without gaps"),
            ("percentRank", "Float!", "(rank - 1) / (rows - 1) of the row's partition"),
        ]
        if AggregateMember.SUM in offered_members(entity):
            sums = member_type_name(names, AggregateMember.SUM)
            windows.append(("runningSum", f"{sums}!", "Sums of the numeric columns up to this row"))
        for name, type_, text in windows:
            out.describe(
                f"{text}, over every row the connection selects in its order (earlier pages included); with"
                " `partitionBy`, within the row's partition.",
                "  ",
            )
            out.add(f"  {name}{partition}: {type_}")
        out.add("}\n")
        self._aggregates(entity, grouped)

    def _aggregates(self, entity: Entity, grouped: bool) -> None:
        """`<Type>Aggregates`, `<Type>AggregatesGroup` and their members' types, `<Type>GroupBy` and
        `<Type>HavingInput` (SPEC "Aggregates")."""
        names, out = entity.names, self.out
        members = offered_members(entity)
        objects = [(names.aggregates, "Aggregates of a set of rows.")]
        if grouped:
            objects.append((names.aggregates_group, "A group of rows: its keys (in groupBy order) and aggregates."))
        for type_name, description in objects:
            out.describe(description)
            out.add(f"type {type_name} {{")
            if type_name == names.aggregates_group:
                out.add("  keys: [JSON]!")
            out.add("  count: Int!")
            for member in members:
                arguments = "(fraction: Float!)" if member is AggregateMember.PERCENTILE else ""
                out.add(f"  {member.value}{arguments}: {member_type_name(names, member)}!")
            out.add("}\n")
        for member in members:
            out.add(f"type {member_type_name(names, member)} {{")
            for field in member_fields(entity, member):
                out.add(f"  {field.name}: {_output(member_type(member, field), True)}")
            out.add("}\n")
        if not grouped:
            return
        out.describe(f"Keys `{names.type}` rows are grouped by.")
        out.add(f"enum {names.group_by} {{")
        out.lines += [f"  {name}" for name in group_values(entity)]
        out.add("}\n")
        out.describe("Conditions on a group; all given must hold.")
        out.add(f"input {names.having} {{")
        out.add(f"  count: {self._compares(_Compared(ValueKind.SCALAR, Scalar.INT.value))}")
        if numeric_fields(entity):
            out.lines += [f"  {member.value}: {names.aggregate_filter}" for member in HAVING_MEMBERS]
        out.add("}\n")

    def _aggregate_filter(self, entity: Entity) -> None:
        """`<Type>AggregateFilter`: conditions on aggregates of numeric columns, for to-many relation filters and
        groups' `having`."""
        numeric = numeric_fields(entity)
        if not numeric:
            return
        float_filter = self._compares(_Compared(ValueKind.SCALAR, Scalar.FLOAT.value))
        self.out.describe(f"Conditions on an aggregate of `{entity.type_name}` columns (compared as Float).")
        self.out.add(f"input {entity.names.aggregate_filter} {{")
        self.out.lines += [f"  {field.name}: {float_filter}" for field in numeric]
        self.out.add("}\n")

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
        """The filter input comparing values of this type (to be written), or None: such values are not compared."""
        special = special_of(value)
        if special is Special.MULTIRANGE:
            assert value.item is not None
            return self._compares(_Compared(ValueKind.RANGE, value.item.name, list=True, special=special))
        if special is not None:
            return self._compares(_Compared(value.kind, special.value, special=special))
        if value.kind in (ValueKind.SCALAR, ValueKind.ENUM, ValueKind.RANGE):
            return self._compares(_Compared(value.kind, value.name))
        if value.kind is ValueKind.LIST and value.item and value.item.kind in (ValueKind.SCALAR, ValueKind.ENUM):
            return self._compares(_Compared(value.item.kind, value.item.name, list=True))
        return None

    def _compares(self, compared: _Compared) -> str:
        name = f"{compared.name}{'List' if compared.list else ''}Filter"
        self.out.filters[name] = compared
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
            self.out.add(f"  count: {self._compares(_Compared(ValueKind.SCALAR, Scalar.INT.value))}")
            if numeric:
                for aggregate in AGGREGATES:
                    self.out.describe(f"The {aggregate} of a numeric column over the related rows.", "  ")
                    self.out.add(f"  {aggregate}: {names.aggregate_filter}")
            self.out.add("}\n")

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
            if entity.supertype is not None:
                parent = entity.supertype
                for name, field in parent.columns:
                    out.describe(f"`{parent.type_name}.{field.name}`: creates the `{parent.type_name}` row too.", "  ")
                    out.add(f"  {name}: {_input(field.type)}{_constraint(field)}")
            self._relation_inputs(entity, update=False)
            self._arc_members(entity, update=False)
            out.add("}\n")
        if Operation.UPDATE in entity.operations:
            out.describe(f"Changes to a `{names.type}` row: the members given are set (null sets NULL).")
            out.add(f"input {names.update_input} {{")
            for field in entity.fields:
                if field.updatable:
                    out.add(f"  {field.name}: {_input(field.type)}{_constraint(field)}")
            self._relation_inputs(entity, update=True)
            self._arc_members(entity, update=True)
            out.add("}\n")

    def _relation_inputs(self, entity: Entity, *, update: bool) -> None:
        for relation in entity.relations:
            target = self.entities[relation.target]
            if not (relation.updatable if update else relation.insertable):
                continue
            if Operation.CREATE not in target.operations and not target.primary_key:
                continue
            kind = NestedInput.of(relation, update=update)
            if kind is not None:
                self.out.nested.add((target.type_name, kind))
                self.out.add(f"  {relation.name}: {kind.type_name(target.names)}")

    def _nested_inputs(self) -> None:
        written: set[tuple[str, NestedInput]] = set()
        while pending := sorted(self.out.nested - written, key=lambda item: (item[0], item[1].value)):
            for type_name, kind in pending:
                written.add((type_name, kind))
                entity = self.model.entity_named(type_name)
                assert entity is not None
                self._nested_input(entity, kind)

    def _nested_input(self, entity: Entity, kind: "NestedInput") -> None:
        names = entity.names
        if kind is NestedInput.CONNECT_OR_CREATE:
            members = [("where", f"{names.key_input}!"), ("create", f"{names.create_input}!")]
        elif kind is NestedInput.UPDATE_BY_KEY:
            members = [("where", f"{names.key_input}!"), ("data", f"{names.update_input}!")]
        else:
            members = self._relation_input_members(entity, kind)
        self.out.add(f"input {kind.type_name(names)} {{")
        self.out.lines += [f"  {name}: {type_}" for name, type_ in members]
        self.out.add("}\n")

    def _relation_input_members(self, entity: Entity, kind: "NestedInput") -> list[tuple[str, str]]:
        """What a relation member of a create or update input may do with the related rows (SPEC "Nested writes")."""
        names = entity.names
        keyed = entity.primary_key is not None or bool(entity.lookups)
        creates = Operation.CREATE in entity.operations
        many = kind not in (NestedInput.TO_ONE, NestedInput.TO_ONE_UPDATE)
        members: list[tuple[str, str]] = []
        if keyed:
            members.append(("connect", _many(names.key_input, many)))
        if creates:
            members.append(("create", _many(names.create_input, many)))
        if keyed and creates:
            members.append(("connectOrCreate", _many(names.connect_or_create, many)))
            self.out.nested.add((entity.type_name, NestedInput.CONNECT_OR_CREATE))
        if kind is NestedInput.TO_ONE_UPDATE:
            members.append(("disconnect", "Boolean"))
            if Operation.UPDATE in entity.operations:
                members.append(("update", names.update_input))
        if kind in (NestedInput.TO_MANY_UPDATE, NestedInput.MANY_TO_MANY_UPDATE) and keyed:
            members += [("disconnect", f"[{names.key_input}!]"), ("set", f"[{names.key_input}!]")]
        if kind is NestedInput.TO_MANY_UPDATE and keyed:
            if Operation.UPDATE in entity.operations:
                members.append(("update", f"[{names.update_by_key}!]"))
                self.out.nested.add((entity.type_name, NestedInput.UPDATE_BY_KEY))
            if Operation.DELETE in entity.operations:
                members.append(("delete", f"[{names.key_input}!]"))
            if creates:
                members.append(("sync", f"[{names.create_input}!]"))
        return members

    def _payloads(self, entity: Entity) -> None:
        names, out = entity.names, self.out
        members = PayloadNames.of(names)
        one, many = members.row, members.rows
        if Operation.CREATE in entity.operations:
            out.add(f"type {names.create_payload} {{\n  {one}: {names.type}")
            if entity.upsertable and entity.lookups:
                out.describe("With onConflict: the row as it was before (null when the row was inserted).", "  ")
                out.add(f"  {members.previous_row}: {names.type}")
            out.add("}\n")
            out.add(f"type {names.create_many_payload} {{\n  {many}: [{names.type}!]!\n}}\n")
        if Operation.UPDATE in entity.operations:
            out.add(f"type {names.update_payload} {{\n  {one}: {names.type}")
            out.describe("The row as it was before the write (null for a row an upsert inserted).", "  ")
            out.add(f"  {members.previous_row}: {names.type}\n}}\n")
            out.add(f"type {names.update_many_payload} {{\n  {many}: [{names.type}!]!")
            out.add(f"  {members.previous_rows}: [{names.type}!]!\n  affectedCount: Int!\n}}\n")
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
        for name, root in query_roots(self.model).items():
            if root.kind is RootKind.NODE:
                out.describe("Any row with a global ID (null when the ID is malformed or the row is missing).", "  ")
                out.add(f"  {name}(id: ID!): Node")
            elif root.kind is RootKind.FUNCTION:
                assert root.function is not None
                self._function_field(name, root.function)
            elif root.kind is RootKind.GLOBAL_SEARCH:
                out.describe("The best matches of a text query among every searchable type, by score.", "  ")
                out.add(f"  {name}(query: String!, first: Int): {GLOBAL_SEARCH_RESULTS}!")
            elif root.kind is RootKind.SEARCH:
                assert root.entity is not None and root.method is not None
                self._search_root(name, root.entity, root.method)
            else:
                assert root.entity is not None
                self._entity_root(name, root.kind, root.entity, root.lookup)
        out.add("}\n")

    def _subscription(self) -> None:
        """Live queries: the Query fields again, each re-read every `subscriptions.interval` and sent when its
        result changes."""
        query = self.out.lines.index("type Query {")
        end = self.out.lines.index("}\n", query)
        self.out.add('"""Live queries: each field is a Query field whose result is sent again whenever it changes."""')
        self.out.add("type Subscription {")
        self.out.lines += self.out.lines[query + 1 : end]
        self.out.add("}\n")

    def _entity_root(self, name: str, kind: RootKind, entity: Entity, lookup: Lookup | None) -> None:
        names, deprecated = entity.names, _deprecated(entity)
        if kind is RootKind.LOOKUP:
            assert lookup is not None
            args = ", ".join(self._key_argument(entity, column) for column in lookup.columns)
            self.out.add(f"  {name}({args}): {names.type}{deprecated}")
        elif kind is RootKind.AS_OF:
            assert entity.temporal is not None
            args = ", ".join(self._key_argument(entity, column) for column in entity.temporal.columns)
            self.out.describe(f"The version of a `{names.type}` valid at `asOf` (default: now).", "  ")
            self.out.add(f"  {name}({args}, asOf: Datetime): {names.type}{deprecated}")
        elif kind is RootKind.LIST:
            args = _LIST_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
            as_of = _AS_OF if entity.temporal is not None else ""
            self.out.describe(f"`{names.type}` rows (at most `limits.page_size.max`).", "  ")
            self.out.add(f"  {name}({args}{as_of}): [{names.type}!]!{deprecated}")
        else:
            args = _CONNECTION_ARGS.format(order_by=names.order_by, condition=names.condition, filter=names.filter)
            as_of = _AS_OF if entity.temporal is not None else ""
            self.out.add(f"  {name}({args}{as_of}): {names.connection}!{deprecated}")

    def _search_root(self, name: str, entity: Entity, method: SearchMethod) -> None:
        names = entity.names
        fields = dict(_search_enums(names))
        arguments = {
            SearchMethod.FUZZY: f"query: String!, field: {fields.get(method)}, minSimilarity: Float",
            SearchMethod.FULL_TEXT: f"query: String!, field: {fields.get(method)}",
            SearchMethod.SEMANTIC: f"vector: [Float!]!, field: {fields.get(method)}, minScore: Float",
            SearchMethod.HYBRID: (
                "query: String!, vector: [Float!]!, lexicalWeight: Float, vectorWeight: Float, rrfK: Int"
            ),
            SearchMethod.NEAREST: f"near: JSON!, maxDistance: Float, field: {fields.get(method)}",
        }[method]
        self.out.describe(_SEARCH_DESCRIPTIONS[method].format(type=names.type), "  ")
        self.out.add(
            f"  {name}({arguments}, first: Int, condition: {names.condition}, filter: {names.filter}):"
            f" {names.search_results}!{_deprecated(entity)}"
        )

    def _key_argument(self, entity: Entity, column: str) -> str:
        field = entity.field_of_column(column)
        assert field is not None
        return f"{field.name}: {_input(field.type)}!"

    def _function_field(self, name: str, function: RootFunction) -> None:
        args = ", ".join(
            f"{a.name}: {_input(a.type)}{'!' if a.required and function.strict else ''}" for a in function.arguments
        )
        result, list_args = self._returns(function.returns, nested=False)
        all_args = ", ".join(part for part in (args, list_args) if part)
        self.out.describe(function.description, "  ")
        self.out.add(f"  {name}{f'({all_args})' if all_args else ''}: {result}{_deprecated(function)}")

    def _mutation(self) -> None:
        out = self.out
        fields: list[str] = []
        for name, root in mutation_roots(self.model).items():
            if root.kind is MutationKind.FUNCTION:
                # Written as a Query field is, then moved: the input types a field needs go before `type Mutation`.
                assert root.function is not None
                before = len(out.lines)
                self._function_field(name, root.function)
                fields += out.lines[before:]
                del out.lines[before:]
            else:
                assert root.entity is not None
                fields.append(self._entity_mutation(name, root.kind, root.entity))
        if fields:
            out.add("type Mutation {")
            out.lines += fields
            out.add("}\n")

    def _entity_mutation(self, name: str, kind: MutationKind, entity: Entity) -> str:
        """The line of one of an entity's Mutation fields (its `<Type>OnConflictInput` written with `create`)."""
        names, deprecated = entity.names, _deprecated(entity)
        key_args = ", ".join(self._key_argument(entity, column) for column in entity.primary_key or ())
        on_conflict = f", onConflict: {names.on_conflict}" if entity.upsertable and entity.lookups else ""
        version, changes = "expectedVersion: String", f"set: {names.update_input}!"
        arguments, payload = {
            MutationKind.CREATE: (f"input: {names.create_input}!{on_conflict}", names.create_payload),
            MutationKind.CREATE_MANY: (f"inputs: [{names.create_input}!]!{on_conflict}", names.create_many_payload),
            MutationKind.UPDATE: (f"{key_args}, {changes}, {version}", names.update_payload),
            MutationKind.UPDATE_BY_NODE_ID: (f"nodeId: ID!, {changes}, {version}", names.update_payload),
            MutationKind.UPDATE_MANY: (
                f"where: {names.filter}, {changes}, unfiltered: Boolean",
                names.update_many_payload,
            ),
            MutationKind.DELETE: (f"{key_args}, {version}", names.delete_payload),
            MutationKind.DELETE_BY_NODE_ID: (f"nodeId: ID!, {version}", names.delete_payload),
            MutationKind.DELETE_MANY: (f"where: {names.filter}, unfiltered: Boolean", names.delete_many_payload),
        }[kind]
        if kind is MutationKind.CREATE and on_conflict:
            self._on_conflict_input(entity)
        return f"  {name}({arguments}): {payload}{deprecated}"

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
        Operand.GEOMETRY: Scalar.JSON.value,
        Operand.DISTANCE: GEOMETRY_DISTANCE_INPUT,
    }[operator.operand]


def _many(type_name: str, many: bool) -> str:
    return f"[{type_name}!]" if many else type_name


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


def _walk_description(hierarchy: Hierarchy, *, ancestors: bool) -> str:
    if hierarchy.path is not None:
        above_or_below = "an ancestor" if ancestors else "a descendant"
        return f"Rows whose `{hierarchy.path}` is {above_or_below} of this row's, nearest first."
    if ancestors:
        return "Rows above this one, nearest first, ending at a cycle."
    return "Rows below this one, ending at a cycle."
