"""A GraphQL query operation into a read plan (SPEC "GraphQL behaviour"): every root field becomes a root of the one
statement; selections become row shapes; relations, computed fields and connections become nested reads. What a
selected field is, the planner reads from its definition (the meaning `_field_meanings` attached), never by its name.

Page sizes are checked while planning (`plan.Arguments`); the depth and cost of the plan are the pipeline's limits
stage (SPEC "Limits"), before any SQL.
"""

import contextlib
import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    GraphQLField,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    OperationDefinitionNode,
    OperationType,
    get_named_type,
)
from graphql.execution.values import VariableValues, get_argument_values

from svc.config import LimitsConfig, SearchConfig
from svc.errors import SvcError
from svc.model import (
    Cardinality,
    CompositeType,
    Entity,
    Field,
    Model,
    RangeType,
    ReturnKind,
    Returns,
    RootFunction,
    TemporalKey,
    ValueType,
)
from svc.plan import (
    NOW,
    Aggregate,
    AggregateFunction,
    AggregateMember,
    AggregateOutput,
    AggregatePlanner,
    Aggregates,
    And,
    ArcOutput,
    Arguments,
    ColumnOutput,
    ColumnRef,
    Compare,
    ComputedOutput,
    ConstantOutput,
    CountMode,
    EdgeShape,
    EntityIndex,
    FieldKind,
    FieldMeaning,
    Filter,
    FunctionCall,
    GlobalIdOutput,
    Grouping,
    GroupKey,
    JsonRows,
    JunctionLink,
    KeyForm,
    KeyOptions,
    Link,
    NestedOutput,
    Operator,
    Order,
    Output,
    Page,
    PageMember,
    PageOutput,
    Param,
    Params,
    Read,
    ReadKind,
    ReadPlan,
    RootField,
    Selection,
    Shape,
    ValueMap,
    ValueMapping,
    Window,
    WindowFunction,
    WindowOutput,
    bad_input,
    coerce,
    decode_global_id,
    group_values,
    history_link,
    history_order,
    instant,
    key_value,
    link_of,
    one_version,
    row_version,
    table,
    type_name_output,
    valid_at,
    value_map,
)

from ._federation import plan_entities, service_answer
from ._field_collector import Collected, Collector
from ._field_meanings import MEANING, ConnectionField, EdgeField, GroupField, RootKind, RootMeaning, meaning_of
from ._search_planner import plan_global_search, plan_search

#: Edge window values (SPEC "Connection objects").
_WINDOWS = {
    EdgeField.ROW_NUMBER: WindowFunction.ROW_NUMBER,
    EdgeField.RANK: WindowFunction.RANK,
    EdgeField.DENSE_RANK: WindowFunction.DENSE_RANK,
    EdgeField.PERCENT_RANK: WindowFunction.PERCENT_RANK,
}

#: Introspection root fields are answered by graphql-core, not by SQL.
INTROSPECTION_FIELDS = frozenset({"__schema", "__type"})


class FieldError(SvcError):
    """An error of one field, at its response path."""

    def __init__(self, error: SvcError, path: Sequence[str | int]) -> None:
        super().__init__(error.code, error.message, extensions=error.extensions, code_name=error.code_name)
        self.path = list(path)


@attrs.frozen
class Place:
    """Where a read sits: its response path (errors name it)."""

    path: tuple[str | int, ...]

    def at(self, *keys: str | int) -> "Place":
        return attrs.evolve(self, path=(*self.path, *keys))


@attrs.frozen
class PlannedQuery:
    plan: ReadPlan
    params: Params
    #: Root fields graphql-core answers (introspection), by response key, in the operation's order with the rest.
    introspection: tuple[str, ...]
    keys: tuple[str, ...]
    #: Root fields answered while planning, without SQL (federation's `_service`), by response key.
    answered: Mapping[str, bytes] = attrs.field(factory=dict)


class QueryPlanner:
    """Plans query operations against one snapshot's schema and model."""

    def __init__(
        self,
        schema: GraphQLSchema,
        model: Model,
        limits: LimitsConfig,
        subgraph_sdl: str | None = None,
        search: SearchConfig | None = None,
    ) -> None:
        self.schema = schema
        self.model = model
        self.limits = limits
        self.search = search or SearchConfig()
        #: What `_service { sdl }` answers (federation on).
        self.subgraph_sdl = subgraph_sdl
        self.index = EntityIndex(model)
        # The abstract types an object type is one of: the interfaces it implements and the unions it is a member of
        # (a type condition on either matches it).
        unions: dict[str, set[str]] = {}
        for name, type_ in schema.type_map.items():
            if isinstance(type_, GraphQLUnionType):
                for member in type_.types:
                    unions.setdefault(member.name, set()).add(name)
        self._implements = {
            name: frozenset(i.name for i in type_.interfaces) | unions.get(name, set())
            for name, type_ in schema.type_map.items()
            if isinstance(type_, GraphQLObjectType)
        }

    def run(self, fragments: Mapping[str, FragmentDefinitionNode], variables: VariableValues) -> "PlanRun":
        """A fresh planning of (part of) one operation, with its own parameters."""
        return PlanRun(self, Collector(fragments, variables, self._implements), variables)

    def object_type(self, name: str) -> GraphQLObjectType:
        """An object type of the schema (an entity's, its connection's) by the name the model gives it."""
        found = self.schema.get_type(name)
        assert isinstance(found, GraphQLObjectType), name
        return found

    def plan(
        self,
        operation: OperationDefinitionNode,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues,
    ) -> PlannedQuery:
        run = self.run(fragments, variables)
        # A subscription is planned as a query is: its root fields are the Query fields, live.
        live = operation.operation is OperationType.SUBSCRIPTION
        query_type = self.schema.subscription_type if live else self.schema.query_type
        assert query_type is not None
        collected = run.collector.fields(query_type.name, [operation.selection_set])
        roots: list[RootField] = []
        introspection: list[str] = []
        answered: dict[str, bytes] = {}
        for key, nodes in collected.items():
            name = nodes[0].name.value
            if name in INTROSPECTION_FIELDS:
                introspection.append(key)
            elif name == "__typename":
                roots.append(RootField(key, constant=query_type.name))
            elif meaning_of(query_type.fields[name], RootMeaning).kind is RootKind.SERVICE:
                assert self.subgraph_sdl is not None  # the field exists only in a subgraph's schema
                answered[key] = service_answer(run.collector, nodes, self.subgraph_sdl)
            else:
                try:
                    roots.append(run.root(key, nodes, query_type.fields[name]))
                except FieldError:
                    raise
                except SvcError as error:
                    raise FieldError(error, [key]) from error
        return PlannedQuery(ReadPlan(tuple(roots)), run.params, tuple(introspection), tuple(collected), answered)


class PlanRun:
    """The planning of one operation: its parameters."""

    def __init__(self, planner: QueryPlanner, collector: Collector, variables: VariableValues) -> None:
        self.planner = planner
        self.model = planner.model
        self.index = planner.index
        self.limits = planner.limits
        self.collector = collector
        self.variables = variables
        self.params = Params()
        self.arguments = Arguments(planner.model, planner.index, planner.limits, self.params)
        self.aggregates = AggregatePlanner(self.arguments)
        #: The `asOf` in effect where fields are being planned (the nearest enclosing one given), and its path.
        self._as_of: tuple[Any, Sequence[str | int]] | None = None

    # --- roots -------------------------------------------------------------------------------------------------

    def root(self, key: str, nodes: list[FieldNode], definition: GraphQLField) -> RootField:
        """A Query root field, as its definition's meaning says (SPEC "Root fields per table")."""
        meaning = meaning_of(definition, RootMeaning)
        arguments = get_argument_values(definition, nodes[0], self.variables)
        place = Place((key,))
        if meaning.kind is RootKind.NODE:
            return self._node(key, nodes, arguments)
        if meaning.kind is RootKind.ENTITIES:
            return plan_entities(self, key, place, nodes, arguments["representations"])
        if meaning.kind is RootKind.FUNCTION:
            assert meaning.function is not None
            return self.root_function(key, nodes, meaning.function, arguments, place)
        if meaning.kind is RootKind.SEARCH:
            return plan_search(self, key, place, nodes, meaning, arguments=arguments)
        if meaning.kind is RootKind.GLOBAL_SEARCH:
            return plan_global_search(self, key, place, nodes, arguments)
        entity = meaning.entity
        assert entity is not None
        if meaning.kind is RootKind.LOOKUP:
            assert meaning.lookup is not None
            key_filter = self._key_filter(entity, meaning.lookup.columns, arguments, place.path)
            return RootField(key, self.read(entity, nodes, ReadKind.ONE, place, filter_=key_filter))
        if meaning.kind is RootKind.AS_OF:
            assert entity.temporal is not None
            key_filter = self._key_filter(entity, entity.temporal.columns, arguments, place.path)
            given = self._given_as_of(arguments, place)
            version = valid_at(entity.temporal, self._instant(entity.temporal, given))
            with self._reading_as_of(given):
                read = self.read(entity, nodes, ReadKind.ONE, place, filter_=And((*key_filter.items, version)))
            return RootField(key, read)
        kind = ReadKind.MANY if meaning.kind is RootKind.LIST else ReadKind.PAGE
        return RootField(key, self._list(entity, nodes, arguments, kind, place), nullable=False)

    def _key_filter(
        self, entity: Entity, columns: Sequence[str], arguments: Mapping[str, Any], path: Sequence[str | int]
    ) -> And:
        items = []
        for column in columns:
            field = entity.field_of_column(column)
            assert field is not None
            convert = functools.partial(key_value, self.model, entity, field, path=(*path, field.name))
            items.append(
                Compare(
                    ColumnRef(column),
                    Operator.EQ,
                    self.params.bind(arguments[field.name], convert, field.type.sql_type),
                )
            )
        return And(tuple(items))

    def _given_as_of(self, arguments: Mapping[str, Any], place: Place) -> tuple[Any, Sequence[str | int]] | None:
        """A field's own `asOf` (with its path), else the one in effect around it."""
        given = arguments.get("asOf")
        return (given, (*place.path, "asOf")) if given is not None else self._as_of

    def _instant(self, key: TemporalKey, given: tuple[Any, Sequence[str | int]] | None) -> Param:
        """The instant a temporal read is at: the `asOf` given (checked as an ISO 8601 timestamp), else now."""
        if given is None:
            return self.params.add(NOW, key.instant_type)
        value, path = given
        return self.params.bind(value, functools.partial(instant, path=path), key.instant_type)

    @contextlib.contextmanager
    def _reading_as_of(self, given: tuple[Any, Sequence[str | int]] | None) -> Iterator[None]:
        """Plan the fields inside with `given` as the `asOf` in effect: their temporal relations are read then."""
        outer, self._as_of = self._as_of, given
        try:
            yield
        finally:
            self._as_of = outer

    def _node(self, key: str, nodes: list[FieldNode], arguments: Mapping[str, Any]) -> RootField:
        """SPEC "Global object identification": decoded in memory; malformed, unknown or missing is null."""
        decoded = decode_global_id(arguments["id"])
        entity = self.model.entity_named(decoded[0]) if decoded else None
        if decoded is None or entity is None or not entity.node:
            return RootField(key, constant=None)
        assert entity.primary_key is not None
        field = entity.field_of_column(entity.primary_key[0])
        assert field is not None
        try:
            value = coerce(decoded[1], field.type, self.model)
        except SvcError:
            return RootField(key, constant=None)
        condition = Compare(ColumnRef(field.column), Operator.EQ, self.params.add(value, field.type.sql_type))
        return RootField(key, self.read(entity, nodes, ReadKind.ONE, Place((key,)), filter_=condition))

    def root_function(
        self, key: str, nodes: list[FieldNode], function: RootFunction, arguments: Mapping[str, Any], place: Place
    ) -> RootField:
        call = FunctionCall(
            function.schema, function.function, self.arguments.call(function.arguments, arguments, place.path)
        )
        returns = function.returns
        if returns.kind in (ReturnKind.SCALAR, ReturnKind.SCALARS, ReturnKind.VOID):
            return RootField(key, call=self._scalar_call(key, call, returns))
        read = self._function_read(returns, call, nodes, arguments, place, root=True)
        return RootField(key, read, nullable=returns.kind in (ReturnKind.ROW, ReturnKind.RECORD))

    # --- reads -------------------------------------------------------------------------------------------------

    def _list(
        self,
        entity: Entity,
        nodes: list[FieldNode],
        arguments: Mapping[str, Any],
        kind: ReadKind,
        place: Place,
        *,
        link: Link | JunctionLink | None = None,
        source: FunctionCall | None = None,
    ) -> Read:
        """A list (MANY) or a connection (PAGE) of an entity's rows, with the list arguments applied; a temporal
        entity's rows are the versions valid at the `asOf` given (or in effect around a nested list), if any."""
        path = place.path
        filter_ = self.conditions(entity, arguments, path)
        given = self._given_as_of(arguments, place)
        if entity.temporal is not None and given is not None:
            version = valid_at(entity.temporal, self._instant(entity.temporal, given))
            filter_ = And((filter_, version)) if filter_ is not None else version
        # Connections (cursors) and root lists order by the key without an orderBy; a nested list keeps the
        # database's order then (no sort per parent row), as a function's rows keep the function's.
        by_key = source is None and (kind is ReadKind.PAGE or link is None)
        order = self.arguments.order(entity, arguments.get("orderBy"), default_key=by_key)
        if kind is ReadKind.PAGE:
            page, _ = self.arguments.connection_page(arguments, order, path)
        else:
            page, _ = self.arguments.list_page(arguments, path)
        with self._reading_as_of(given):
            return self.read(
                entity, nodes, kind, place, filter_=filter_, order=order, page=page, link=link, source=source
            )

    def conditions(self, entity: Entity, arguments: Mapping[str, Any], path: Sequence[str | int]) -> Filter | None:
        """What `condition` and `filter` arguments select (both must hold; None: every row)."""
        filters = [
            f
            for f in (
                self.arguments.condition(entity, arguments.get("condition"), [*path, "condition"]),
                self.arguments.filter(entity, arguments.get("filter"), [*path, "filter"]),
            )
            if f is not None
        ]
        return filters[0] if len(filters) == 1 else (And(tuple(filters)) if filters else None)

    def read(
        self,
        entity: Entity,
        nodes: list[FieldNode],
        kind: ReadKind,
        place: Place,
        *,
        filter_: Filter | None = None,
        order: Order | None = None,
        page: Page | None = None,
        link: Link | JunctionLink | None = None,
        source: FunctionCall | JsonRows | None = None,
    ) -> Read:
        """Rows of an entity shaped by the selections."""
        if kind is ReadKind.PAGE:
            outputs, node_selections = self._page_outputs(entity, nodes, order, place)
            shape = self.shape(entity, node_selections, place.at("nodes"))
        else:
            outputs = ()
            shape = self.shape(entity, self.collector.subfields(entity.type_name, nodes), place)
        return Read(
            source=source or table(entity),
            shape=shape,
            kind=kind,
            link=link,
            filter=filter_,
            order=order.items if order else (),
            page=page or Page(),
            page_outputs=outputs,
            cursor_signature=order.signature if order else "",
        )

    # --- connections -------------------------------------------------------------------------------------------

    def _page_outputs(
        self, entity: Entity, nodes: list[FieldNode], order: Order | None, place: Place
    ) -> tuple[tuple[PageOutput, ...], Collected]:
        """The connection's members, and the node selections (from `nodes` and `edges.node`) merged."""
        connection = self.planner.object_type(entity.names.connection)
        outputs: list[PageOutput] = []
        node_selections: Collected = {}
        for key, fields in self.collector.subfields(connection.name, nodes).items():
            name = fields[0].name.value
            if name == "__typename":
                outputs.append(PageOutput(key, constant=connection.name))
                continue
            definition = connection.fields[name]
            member = meaning_of(definition, ConnectionField)
            if member is ConnectionField.NODES:
                outputs.append(PageOutput(key, PageMember.NODES))
                _merge(node_selections, self.collector.subfields(entity.type_name, fields))
            elif member is ConnectionField.EDGES:
                edges = self._edges(
                    key, entity, definition, fields, node_selections, order=order, place=place.at(key, "edges")
                )
                outputs.append(edges)
            elif member is ConnectionField.PAGE_INFO:
                outputs.append(self._page_info(key, definition, fields))
            elif member in (ConnectionField.AGGREGATES, ConnectionField.GROUPED_AGGREGATES):
                grouped = member is ConnectionField.GROUPED_AGGREGATES
                outputs.append(self._aggregates(key, entity, definition, fields, place.at(key), grouped=grouped))
            else:
                outputs.append(self._total_count(key, definition, fields))
        return tuple(outputs), node_selections

    def _edges(
        self,
        key: str,
        entity: Entity,
        definition: GraphQLField,
        fields: list[FieldNode],
        node_selections: Collected,
        *,
        order: Order | None,
        place: Place,
    ) -> PageOutput:
        edge = object_type_of(definition)
        cursor_keys, node_keys, constants, windows = [], [], [], []
        for edge_key, edge_fields in self.collector.subfields(edge.name, fields).items():
            name = edge_fields[0].name.value
            if name == "__typename":
                constants.append(ConstantOutput(edge_key, edge.name))
                continue
            meaning = meaning_of(edge.fields[name], EdgeField)
            if meaning is EdgeField.CURSOR:
                cursor_keys.append(edge_key)
            elif meaning is EdgeField.NODE:
                node_keys.append(edge_key)
                _merge(node_selections, self.collector.subfields(entity.type_name, edge_fields))
            else:
                definition_ = edge.fields[name]
                partition_by = get_argument_values(definition_, edge_fields[0], self.variables).get("partitionBy")
                where = place.at(edge_key)
                partition = self._partition(entity, partition_by, where.at("partitionBy"))
                windows.append(
                    self._window(edge_key, meaning, definition_, edge_fields, partition=partition, order=order)
                )
        shape = EdgeShape(tuple(cursor_keys), tuple(node_keys), tuple(constants), tuple(windows))
        return PageOutput(key, PageMember.EDGES, edge=shape)

    def _partition(self, entity: Entity, names: Sequence[str] | None, place: Place) -> tuple[GroupKey, ...]:
        """`partitionBy` keys: columns, or dates and timestamps truncated (bins take a width no edge gives)."""
        if not names:
            return ()
        values = group_values(entity)
        keys = self.aggregates.keys([values[name] for name in names], KeyOptions(), place.path)
        if any(key.form is KeyForm.BINNED for key in keys):
            raise bad_input("partitionBy takes columns and truncated dates, not binned keys", place.path)
        return keys

    def _window(
        self,
        key: str,
        meaning: EdgeField,
        definition: GraphQLField,
        fields: list[FieldNode],
        *,
        partition: tuple[GroupKey, ...],
        order: Order | None,
    ) -> WindowOutput:
        ranked = order.given if order is not None else 0
        if meaning is not EdgeField.RUNNING_SUM:
            return WindowOutput(key, Window(_WINDOWS[meaning], partition, ranked=ranked))
        sums = object_type_of(definition)
        members: list[WindowOutput] = []
        for member_key, member_fields in self.collector.subfields(sums.name, fields).items():
            name = member_fields[0].name.value
            if name == "__typename":
                continue  # an object of sums has no rows of its own to type
            field = meaning_of(sums.fields[name], Field)
            window = Window(WindowFunction.RUNNING_SUM, partition, field.column, ranked)
            members.append(WindowOutput(member_key, window, self.aggregates.member_map(AggregateMember.SUM, field)))
        return WindowOutput(key, members=tuple(members))

    def _page_info(self, key: str, definition: GraphQLField, fields: list[FieldNode]) -> PageOutput:
        page_info = object_type_of(definition)
        members = []
        for member_key, member_fields in self.collector.subfields(page_info.name, fields).items():
            name = member_fields[0].name.value
            if name == "__typename":
                members.append(PageOutput(member_key, constant=page_info.name))
            else:
                members.append(PageOutput(member_key, meaning_of(page_info.fields[name], PageMember)))
        return PageOutput(key, members=tuple(members))

    def _total_count(self, key: str, definition: GraphQLField, fields: list[FieldNode]) -> PageOutput:
        arguments = get_argument_values(definition, fields[0], self.variables)
        estimate = bool(arguments.get("estimate"))
        exact_below = arguments.get("exactBelow")
        if not estimate:
            return PageOutput(key, PageMember.TOTAL_COUNT)
        if exact_below is None:
            return PageOutput(key, PageMember.TOTAL_COUNT, count=CountMode.ESTIMATE)
        bound = self.params.add(int(exact_below), "bigint")
        return PageOutput(key, PageMember.TOTAL_COUNT, count=CountMode.EXACT_BELOW, exact_below=bound)

    # --- aggregates (SPEC "Aggregates") --------------------------------------------------------------------------

    def _aggregates(
        self,
        key: str,
        entity: Entity,
        definition: GraphQLField,
        fields: list[FieldNode],
        place: Place,
        *,
        grouped: bool,
    ) -> PageOutput:
        """`aggregates` or one `groupedAggregates`: over the connection's rows before paging (and its filter's)."""
        arguments = get_argument_values(definition, fields[0], self.variables)
        path = place.path
        filter_ = self.arguments.filter(entity, arguments.get("filter"), [*path, "filter"])
        outputs = self._aggregate_outputs(object_type_of(definition), fields, filter_, place)
        grouping = None
        if grouped:
            values = group_values(entity)
            options = KeyOptions(
                arguments.get("timeZone"),
                arguments.get("binWidth"),
                arguments.get("binOrigin"),
                (*path, "timeZone"),
                (*path, "binWidth"),
                (*path, "binOrigin"),
            )
            keys = self.aggregates.keys([values[name] for name in arguments["groupBy"]], options, [*path, "groupBy"])
            having = self.aggregates.having(entity, arguments.get("having"), filter_, [*path, "having"])
            fill_gaps = bool(arguments.get("fillGaps"))
            if fill_gaps and (len(keys) != 1 or keys[0].form is KeyForm.VALUE):
                raise bad_input("fillGaps needs groupBy to be one truncated or binned key", [*path, "fillGaps"])
            limit = self.params.add(self.limits.groups, "bigint") if self.limits.groups is not None else None
            grouping = Grouping(keys, having, fill_gaps, limit)
        return PageOutput(key, PageMember.AGGREGATES, aggregates=Aggregates(outputs, filter_, grouping))

    def _aggregate_outputs(
        self, object_type: GraphQLObjectType, nodes: list[FieldNode], filter_: Filter | None, place: Place
    ) -> tuple[AggregateOutput, ...]:
        outputs: list[AggregateOutput] = []
        for key, fields in self.collector.subfields(object_type.name, nodes).items():
            name = fields[0].name.value
            if name == "__typename":
                outputs.append(AggregateOutput(key, constant=object_type.name))
                continue
            definition = object_type.fields[name]
            meaning = definition.extensions[MEANING]
            if meaning is GroupField.COUNT:
                outputs.append(AggregateOutput(key, Aggregate(AggregateFunction.COUNT, filter=filter_)))
            elif meaning is GroupField.KEYS:
                outputs.append(AggregateOutput(key, keys=True))
            else:
                assert isinstance(meaning, AggregateMember)
                fraction = get_argument_values(definition, fields[0], self.variables).get("fraction")
                members = self._member_outputs(meaning, definition, fields, filter_, fraction, place.at(key))
                outputs.append(AggregateOutput(key, members=members))
        return tuple(outputs)

    def _member_outputs(  # noqa: PLR0917 (the member, its field, its selections, their filter and fraction)
        self,
        member: AggregateMember,
        definition: GraphQLField,
        nodes: list[FieldNode],
        filter_: Filter | None,
        fraction: Any,
        place: Place,
    ) -> tuple[AggregateOutput, ...]:
        """A member's object (`sum { amount }`): one aggregate per column selected."""
        object_type = object_type_of(definition)
        outputs: list[AggregateOutput] = []
        for key, fields in self.collector.subfields(object_type.name, nodes).items():
            name = fields[0].name.value
            if name == "__typename":
                outputs.append(AggregateOutput(key, constant=object_type.name))
                continue
            field = meaning_of(object_type.fields[name], Field)
            aggregate = self.aggregates.aggregate(
                member, field, filter_, fraction=fraction, fraction_path=(*place.path, "fraction")
            )
            mapping = self.aggregates.member_map(member, field, _Selected(self.collector, fields))
            outputs.append(AggregateOutput(key, aggregate, mapping))
        return tuple(outputs)

    # --- row shapes --------------------------------------------------------------------------------------------

    def shape(self, entity: Entity, collected: Collected, place: Place) -> Shape:
        """The JSON object of each row: one output per response key. `place` is where the rows' fields sit."""
        outputs: list[Output] = []
        object_type = self.planner.object_type(entity.type_name)
        for key, nodes in collected.items():
            name = nodes[0].name.value
            if name == "__typename":
                outputs.append(ConstantOutput(key, entity.type_name))
                continue
            definition = object_type.fields[name]
            meaning = meaning_of(definition, FieldMeaning)
            kind = meaning.kind
            if kind is FieldKind.GLOBAL_ID:
                assert entity.primary_key is not None
                outputs.append(GlobalIdOutput(key, entity.type_name, entity.primary_key[0]))
            elif kind is FieldKind.DATABASE_ID:
                assert entity.primary_key is not None
                field = entity.field_of_column(entity.primary_key[0])
                assert field is not None
                outputs.append(ColumnOutput(key, field.column, self._map(field.type, [])))
            elif kind is FieldKind.ROW_VERSION:
                outputs.append(row_version(key, entity))
            elif kind is FieldKind.SUBTYPE_NAME:
                outputs.append(type_name_output(entity, key))
            elif kind is FieldKind.COLUMN:
                assert meaning.field is not None
                outputs.append(ColumnOutput(key, meaning.field.column, self._map(meaning.field.type, nodes)))
            else:
                arguments = get_argument_values(definition, nodes[0], self.variables)
                nested = self._nested(key, entity, meaning, nodes=nodes, arguments=arguments, place=place.at(key))
                outputs.append(nested)
        return Shape(tuple(outputs))

    def _nested(
        self,
        key: str,
        entity: Entity,
        meaning: FieldMeaning,
        *,
        nodes: list[FieldNode],
        arguments: Mapping[str, Any],
        place: Place,
    ) -> Output:
        """A relation, hierarchy or computed field of a row: a read one level deeper, or a computed value."""
        kind = meaning.kind
        if kind in (FieldKind.ANCESTORS, FieldKind.DESCENDANTS):
            return NestedOutput(key, self._hierarchy(entity, meaning, nodes, arguments, place))
        if kind is FieldKind.HISTORY:
            assert entity.temporal is not None
            page, _ = self.arguments.list_page({}, place.path)  # at most `page_size.max` versions, as a list
            read = self.read(entity, nodes, ReadKind.MANY, place, link=history_link(entity.temporal), page=page)
            return NestedOutput(key, attrs.evolve(read, order=history_order(entity.temporal)))
        if meaning.arc is not None:
            # One read per type the arc may point at, each shaped by the selections on that type (`... on Post`).
            relations = entity.arc_relations(meaning.arc)
            return ArcOutput(
                key,
                tuple(
                    self.read(self.model.entity(r.target), nodes, ReadKind.ONE, place, link=link_of(r, self.model))
                    for r in relations
                ),
            )
        if meaning.relation is not None:
            relation = meaning.relation
            target = self.model.entity(relation.target)
            link = link_of(relation, self.model)
            if relation.kind is Cardinality.TO_ONE:
                if not one_version(relation, target):
                    return NestedOutput(key, self.read(target, nodes, ReadKind.ONE, place, link=link))
                # Across a period foreign key: the target's version valid at the `asOf` in effect, else now.
                assert target.temporal is not None
                given = self._given_as_of(arguments, place)
                version = valid_at(target.temporal, self._instant(target.temporal, given))
                with self._reading_as_of(given):
                    read = self.read(target, nodes, ReadKind.ONE, place, link=link, filter_=version)
                return NestedOutput(key, read)
            cardinality = ReadKind.PAGE if kind is FieldKind.RELATION_CONNECTION else ReadKind.MANY
            return NestedOutput(key, self._list(target, nodes, arguments, cardinality, place, link=link))
        computed = meaning.computed
        assert computed is not None
        call = FunctionCall(
            computed.schema,
            computed.function,
            self.arguments.call(computed.arguments, arguments, place.path, computed.from_columns),
            row_argument=not computed.from_columns,
        )
        if computed.returns.kind in (ReturnKind.SCALAR, ReturnKind.SCALARS, ReturnKind.VOID):
            return self._scalar_call(key, call, computed.returns)
        return NestedOutput(key, self._function_read(computed.returns, call, nodes, arguments, place, root=False))

    def _hierarchy(
        self, entity: Entity, meaning: FieldMeaning, nodes: list[FieldNode], arguments: Mapping[str, Any], place: Place
    ) -> Read:
        """Ancestors or descendants: rows of the same table, up to `maxDepth` levels away."""
        max_depth = arguments.get("maxDepth")
        if max_depth is not None and max_depth < 1:
            raise bad_input(f"maxDepth must be at least 1; got {max_depth}", [*place.path, "maxDepth"])
        filter_ = self.arguments.filter(entity, arguments.get("filter"), [*place.path, "filter"])
        order = self.arguments.order(entity, arguments.get("orderBy"), default_key=False)
        read = self.read(entity, nodes, ReadKind.MANY, place, filter_=filter_, order=order)
        depth = self.params.add(int(max_depth), "integer") if max_depth is not None else None
        return attrs.evolve(read, hierarchy=meaning.walk(entity, depth))

    # --- functions ---------------------------------------------------------------------------------------------

    def _scalar_call(self, key: str, call: FunctionCall, returns: Returns) -> ComputedOutput:
        if returns.kind is ReturnKind.VOID:
            return ComputedOutput(key, call, ValueMap.AS_IS)
        assert returns.type is not None
        return ComputedOutput(key, call, self._map(returns.type, []), returns_set=returns.kind is ReturnKind.SCALARS)

    def _function_read(
        self,
        returns: Returns,
        call: FunctionCall,
        nodes: list[FieldNode],
        arguments: Mapping[str, Any],
        place: Place,
        *,
        root: bool,
    ) -> Read:
        """Rows a function gives: a table's rows (one, a list, or a connection at the root), or records."""
        kind = returns.kind
        if kind in (ReturnKind.RECORD, ReturnKind.RECORDS):
            assert returns.record is not None
            outputs: list[Output] = []
            for key, fields in self.collector.subfields(returns.record.name, nodes).items():
                name = fields[0].name.value
                if name == "__typename":
                    outputs.append(ConstantOutput(key, returns.record.name))
                    continue
                field = next(f for f in returns.record.fields if f.name == name)
                outputs.append(ColumnOutput(key, field.column, self._map(field.type, fields)))
            many = kind is ReturnKind.RECORDS
            return Read(call, Shape(tuple(outputs)), ReadKind.MANY if many else ReadKind.ONE)
        assert returns.entity is not None
        entity = self.model.entity(returns.entity)
        if kind is ReturnKind.ROW:
            return self.read(entity, nodes, ReadKind.ONE, place, source=call)
        cardinality = ReadKind.PAGE if root else ReadKind.MANY
        return self._list(entity, nodes, arguments, cardinality, place, source=call)

    # --- values ------------------------------------------------------------------------------------------------

    def _map(self, type_: ValueType, nodes: list[FieldNode]) -> ValueMapping:
        """How a value of this type becomes its JSON (SPEC "Scalars and value mapping"), members as selected."""
        return value_map(type_, self.model, _Selected(self.collector, nodes))


@attrs.frozen
class _Selected:
    """The members of a composite or range value a field's selection set asks for."""

    collector: Collector
    nodes: list[FieldNode]

    def attributes(self, composite: CompositeType) -> list[tuple[str, Field, Selection]]:
        wanted: list[tuple[str, Field, Selection]] = []
        for key, fields in self.collector.subfields(composite.name, self.nodes).items():
            name = fields[0].name.value
            if name != "__typename":
                field = next(f for f in composite.fields if f.name == name)
                wanted.append((key, field, _Selected(self.collector, fields)))
        return wanted

    def range_keys(self, range_type: RangeType) -> tuple[str | None, str | None, str | None, str | None]:
        start = end = value_key = inclusive_key = None
        for key, fields in self.collector.subfields(range_type.name, self.nodes).items():
            side = fields[0].name.value
            for bound_key, bound_fields in self.collector.subfields(f"{range_type.name}Bound", fields).items():
                member = bound_fields[0].name.value
                if member == "value":
                    value_key = bound_key
                elif member == "inclusive":
                    inclusive_key = bound_key
            if side == "start":
                start = key
            elif side == "end":
                end = key
        return start, end, value_key, inclusive_key


def object_type_of(definition: GraphQLField) -> GraphQLObjectType:
    """The object type a field's values are (lists and non-null aside)."""
    found = get_named_type(definition.type)
    assert isinstance(found, GraphQLObjectType), definition
    return found


def _merge(into: Collected, more: Collected) -> None:
    for key, nodes in more.items():
        into.setdefault(key, []).extend(nodes)
