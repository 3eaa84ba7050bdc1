"""REST reads into read plans (SPEC "REST API"): a list is one connection read whose members become the body (the
rows) and headers (counts, cursors for `Link`); a row is a one-row read by key, with its version for `ETag`; a
function's value, record or rows are read from its call.

Rows are shaped as SPEC "Naming" says for REST: columns under their REST names, then `rowVersion` for entities with
a key; included relations under their field names. The filter, order and page arguments are planned by `svc/plan`'s
`Arguments`, as for GraphQL (page sizes checked there), its errors naming the URL parameter (`_plan_names.py`);
depth (include levels count) and cost are the pipeline's limits stage (SPEC "Limits").
"""

from collections.abc import Mapping, Sequence
from typing import Any

from svc.config import LimitsConfig, SearchConfig
from svc.errors import Code, SvcError
from svc.model import (
    REST_TYPENAME,
    Cardinality,
    ComputedField,
    Entity,
    Model,
    Relation,
    ReturnKind,
    RootFunction,
    SearchMethod,
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
    CursorOutput,
    EntityIndex,
    FieldKind,
    Filter,
    FunctionCall,
    Grouping,
    HitMember,
    HitOutput,
    JsonPathOutput,
    JunctionLink,
    KeyForm,
    KeyLookup,
    KeyOptions,
    Link,
    NestedOutput,
    Not,
    Operator,
    Output,
    Page,
    PageMember,
    PageOutput,
    Param,
    Params,
    Quantifier,
    Ranked,
    Read,
    ReadKind,
    Related,
    ResultsMember,
    ResultsOutput,
    RootField,
    RowsFormat,
    Search,
    SearchPlanner,
    SearchSource,
    Shape,
    SubtypeColumnOutput,
    Window,
    WindowFunction,
    WindowOutput,
    bad_input,
    bind_instant,
    history_link,
    history_order,
    link_of,
    one_version,
    row_version,
    search_key,
    subtype_join,
    table,
    type_name_output,
    valid_at,
    value_map,
)

from ._api_request import AggregateRequest, AggregateSet, Include, Listing, ListWindows, SearchBody, Selection
from ._plan_names import BODY, COMPUTED_ARGUMENTS, FILTERS, PARAMETERS
from ._planned import END, ESTIMATE, HAS_NEXT, HAS_PREVIOUS, ROW, ROW_COUNT, ROWS, START, TOTAL, VALUE, VERSION

#: `window=` values (SPEC "List query parameters").
_WINDOWS = {
    "rowNumber": WindowFunction.ROW_NUMBER,
    "rank": WindowFunction.RANK,
    "denseRank": WindowFunction.DENSE_RANK,
    "percentRank": WindowFunction.PERCENT_RANK,
}


_SEARCH_RESULTS = (ResultsOutput("hits", ResultsMember.HITS), ResultsOutput("hasMore", ResultsMember.HAS_MORE))


class ReadRun:
    """The planning of one REST read, with its parameters."""

    def __init__(self, model: Model, index: EntityIndex, limits: LimitsConfig) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.params = Params()
        # One set of parameters; each kind of URL parameter named as the client wrote it.
        self._filters = Arguments(model, index, limits, self.params, FILTERS)
        self._computed = Arguments(model, index, limits, self.params, COMPUTED_ARGUMENTS)
        self._pages = Arguments(model, index, limits, self.params, PARAMETERS)

    # --- lists -------------------------------------------------------------------------------------------------

    def rows(
        self,
        entity: Entity,
        listing: Listing,
        *,
        format: RowsFormat = RowsFormat.JSON,
        count: str | None = None,
        source: FunctionCall | None = None,
    ) -> tuple[RootField, int]:
        """A list of an entity's rows (or of a function's rows, `source`), as one split connection; and its page
        size. `count` is `Prefer: count=` (exact, planned, or estimated: exact below `limits.count_threshold`)."""
        order = self._pages.order(entity, listing.order, default_key=source is None)
        page_arguments = {
            "first": listing.first,
            "last": listing.last,
            "offset": listing.offset,
            "after": listing.after,
            "before": listing.before,
        }
        page, size = self._pages.connection_page(page_arguments, order, ())
        conditions = [self.filter(entity, listing.filter, "filter")]
        conditions += self._inner_and_anti(entity, listing.selection)
        if listing.as_of is not None:
            conditions.append(self._valid_at(entity, listing.as_of))
        outputs = [
            PageOutput(ROWS, PageMember.NODES, format=format),
            PageOutput(ROW_COUNT, PageMember.NODE_COUNT),
            PageOutput(HAS_NEXT, PageMember.HAS_NEXT_PAGE),
            PageOutput(HAS_PREVIOUS, PageMember.HAS_PREVIOUS_PAGE),
            PageOutput(START, PageMember.START_CURSOR),
            PageOutput(END, PageMember.END_CURSOR),
            *self._counts(count),
        ]
        shape = self.shape(entity, listing.selection, cursors=listing.cursors, as_of=listing.as_of)
        if listing.windows is not None:
            shape = Shape((*shape.outputs, self._windows(listing.windows, order.given)))
        read = Read(
            source=source or table(entity),
            shape=shape,
            kind=ReadKind.PAGE,
            filter=_all(conditions),
            order=order.items,
            page=page,
            page_outputs=tuple(outputs),
            cursor_signature=order.signature,
        )
        return RootField("list", read, nullable=False, split=True), size

    def _counts(self, count: str | None) -> list[PageOutput]:
        if count is None:
            return []
        if count == "exact":
            return [PageOutput(TOTAL, PageMember.TOTAL_COUNT)]
        estimate = PageOutput(ESTIMATE, PageMember.TOTAL_COUNT, count=CountMode.ESTIMATE)
        threshold = self.limits.count_threshold
        if count == "planned" or threshold is None:
            return [estimate]
        bound = self.params.add(threshold, "bigint")
        return [PageOutput(TOTAL, PageMember.TOTAL_COUNT, count=CountMode.EXACT_BELOW, exact_below=bound), estimate]

    def _inner_and_anti(self, entity: Entity, selection: Selection) -> list[Filter | None]:
        """`inner=rel` keeps rows having an included row (matching its filter), `anti=rel` rows having none."""
        conditions: list[Filter | None] = []
        meanings = self.index.fields(entity)
        for name, include in selection.includes.items():
            if not (include.inner or include.anti):
                continue
            relation = meanings[name].relation
            if relation is None:
                where = "inner" if include.inner else "anti"
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"rows cannot be kept by {name}: only relations work with inner and anti",
                    extensions={"field": where},
                )
            target = self.model.entity(relation.target)
            inner = self.filter(target, include.filter, f"filter[{include.path}]")
            related = Related(table(target), link_of(relation, self.model), Quantifier.SOME, inner)
            conditions.append(related if include.inner else Not(related))
        return conditions

    def filter(self, entity: Entity, value: Mapping[str, Any] | None, parameter: str) -> Filter | None:
        """A coerced `<Type>Filter` planned; errors name the URL parameter (`filter[title][like]`)."""
        return self._filters.filter(entity, value, [parameter])

    def _windows(self, windows: ListWindows, ranked: int) -> WindowOutput:
        """Each row's `_window`: the functions asked for, and `runningSum` of the running columns, in `partition`."""
        planner = AggregatePlanner(self._pages)
        keys = planner.keys(windows.partition, KeyOptions(), ("partition",)) if windows.partition else ()
        members = [WindowOutput(name, Window(_WINDOWS[name], keys, ranked=ranked)) for name in windows.functions]
        if windows.running:
            sums = tuple(
                WindowOutput(
                    field.rest_name,
                    Window(WindowFunction.RUNNING_SUM, keys, field.column, ranked),
                    planner.member_map(AggregateMember.SUM, field),
                )
                for field in windows.running
            )
            members.append(WindowOutput("runningSum", members=sums))
        return WindowOutput("_window", members=tuple(members))

    # --- searches ----------------------------------------------------------------------------------------------

    def search(self, entity: Entity, body: SearchBody, listing: Listing, config: SearchConfig) -> RootField:
        """SPEC "Search methods": `{hits: [{score, row}], hasMore}`, a full-text hit with its `highlight` when
        asked, a nearest hit with its `distance`; the rows filtered and shaped as a list's search body says."""
        planner = SearchPlanner(self.params, config, BODY)
        first, size = planner.first(body.first, ["first"])
        ranked = planner.rank(entity, body.request, size, ())
        hits = [HitOutput("score", HitMember.SCORE), HitOutput("row", HitMember.NODE)]
        if body.highlight is not None:
            document = ranked.highlighted
            if document is None:
                raise bad_input(
                    f"{ranked.documents[0].name.lower()} has no text to highlight: its document is not made from"
                    " columns the API shows",
                    ["highlight"],
                )
            query = ranked.rankings[0].query
            hits.append(
                HitOutput(
                    "highlight",
                    HitMember.HIGHLIGHT,
                    highlight=planner.highlight(document, query, body.highlight, ["highlight"]),
                )
            )
        if body.request.method is SearchMethod.NEAREST:
            hits.append(HitOutput("distance", HitMember.DISTANCE))
        conditions = [self.filter(entity, listing.filter, "filter"), *self._inner_and_anti(entity, listing.selection)]
        source = self._search_source(entity, listing.selection, ranked, hits, first=first, filter_=_all(conditions))
        return RootField(VALUE, search=Search((source,), first, _SEARCH_RESULTS), nullable=False)

    def global_search(self, body: SearchBody, config: SearchConfig) -> RootField:
        """`GET|POST /rest/search`: `{hits: [{type, row, score}], hasMore}` over every searchable resource."""
        planner = SearchPlanner(self.params, config, BODY)
        first, size = planner.first(body.first, ["first"])
        sources = []
        for entity, name in body.sources:
            ranked = planner.rank_text(entity, body.request.query, size, ())
            hits = (
                HitOutput("type", HitMember.TYPE),
                HitOutput("row", HitMember.NODE),
                HitOutput("score", HitMember.SCORE),
            )
            sources.append(self._search_source(entity, Selection(), ranked, hits, first=first, type=name))
        return RootField(VALUE, search=Search(tuple(sources), first, _SEARCH_RESULTS), nullable=False)

    def _search_source(
        self,
        entity: Entity,
        selection: Selection,
        ranked: Ranked,
        hits: Sequence[HitOutput],
        *,
        first: Param,
        filter_: Filter | None = None,
        type: str | None = None,
    ) -> SearchSource:
        read = Read(table(entity), self.shape(entity, selection), ReadKind.MANY, filter=filter_, page=Page(limit=first))
        return SearchSource(read, ranked.rankings, search_key(entity), tuple(hits), ranked.fusion, type=type)

    # --- aggregates ------------------------------------------------------------------------------------------------

    def aggregate(self, entity: Entity, request: AggregateRequest) -> RootField:
        """SPEC "Aggregate request members": the sets as the members of one connection over the rows the request's
        filter selects (one scan); one set's object or list is the body, named sets an object of them."""
        aggregates = AggregatePlanner(self._filters)
        outputs = tuple(
            PageOutput(name or VALUE, PageMember.AGGREGATES, aggregates=self._aggregate_set(entity, spec, aggregates))
            for name, spec in request.sets
        )
        read = Read(
            source=table(entity),
            shape=Shape(()),
            kind=ReadKind.PAGE,
            filter=self.filter(
                entity, request.filter or (request.sets[0][1].filter if not request.named else None), "filter"
            ),  # fmt: skip
            page_outputs=outputs,
        )
        return RootField(VALUE, read, nullable=False, split=not request.named)

    def _aggregate_set(self, entity: Entity, spec: AggregateSet, aggregates: AggregatePlanner) -> Aggregates:
        prefix = spec.prefix
        filter_ = self.filter(entity, spec.filter, f"{prefix}filter")  # a named set's own, narrowing the request's
        outputs = [AggregateOutput("count", Aggregate(AggregateFunction.COUNT, filter=filter_))]
        for member, fields in spec.members:
            values = tuple(
                AggregateOutput(
                    field.rest_name,
                    aggregates.aggregate(
                        member, field, filter_, fraction=spec.fraction, fraction_path=(f"{prefix}fraction",)
                    ),
                    aggregates.member_map(member, field),
                )
                for field in fields
            )
            outputs.append(AggregateOutput(member.value, members=values))
        if not spec.group:
            return Aggregates(tuple(outputs), filter_)
        options = KeyOptions(
            spec.time_zone,
            spec.bin_width,
            spec.bin_origin,
            (f"{prefix}timeZone",),
            (f"{prefix}binWidth",),
            (f"{prefix}binOrigin",),
        )
        keys = aggregates.keys([value for _, value in spec.group], options, (f"{prefix}group",))
        if spec.fill_gaps and (len(keys) != 1 or keys[0].form is KeyForm.VALUE):
            raise bad_input("fillGaps needs group to be one truncated or binned key", (f"{prefix}fillGaps",))
        having = aggregates.having(entity, spec.having, filter_, [f"{prefix}having"])
        limit = self.params.add(self.limits.groups, "bigint") if self.limits.groups is not None else None
        names = tuple(name for name, _ in spec.group)
        outputs.insert(0, AggregateOutput("keys", keys=True, key_names=names))
        return Aggregates(tuple(outputs), filter_, Grouping(keys, having, spec.fill_gaps, limit))

    # --- one row -----------------------------------------------------------------------------------------------

    def row(
        self,
        entity: Entity,
        lookup: KeyLookup,
        selection: Selection,
        *,
        as_of: str | None = None,
        versions: bool = False,
    ) -> tuple[RootField, ...]:
        """One row by a unique key, and its version (for `ETag`). A temporal table's row is the version valid at
        `as_of` when given, or now when the key leaves out the period (`versions`)."""
        key = self.key_filter(entity, lookup)
        if as_of is not None or versions:
            key = And((key, self._valid_at(entity, as_of or NOW)))
        shape = self.shape(entity, selection, as_of=as_of)
        roots = [RootField(ROW, Read(table(entity), shape, ReadKind.ONE, filter=key))]
        if entity.primary_key is not None:
            version = Read(table(entity), Shape((row_version("v", entity),)), ReadKind.ONE, filter=key)
            roots.append(RootField(VERSION, version))
        return tuple(roots)

    def key_filter(self, entity: Entity, lookup: KeyLookup) -> Filter:
        items: list[Filter] = []
        for column, value in lookup.values:
            field = entity.field_of_column(column)
            sql_type = field.type.sql_type if field is not None else "text"
            items.append(Compare(ColumnRef(column), Operator.EQ, self.params.add(value, sql_type)))
        return And(tuple(items)) if len(items) != 1 else items[0]

    def _valid_at(self, entity: Entity, at: str) -> Filter:
        """The versions of a temporal table's rows valid at the instant `at` (the parse stage checked both)."""
        assert entity.temporal is not None
        return valid_at(entity.temporal, bind_instant(self.params, entity.temporal, at))

    # --- functions ---------------------------------------------------------------------------------------------

    def function_call(self, function: RootFunction, arguments: Mapping[str, Any], *, in_body: bool) -> FunctionCall:
        """A function's call from its coerced arguments; errors name an argument as the client gave it: a member of
        the body's `args` (`args.numbers[1]`) or a query parameter (`numbers`)."""
        naming, path = (BODY, ["args"]) if in_body else (PARAMETERS, [])
        given = Arguments(self.model, self.index, self.limits, self.params, naming)
        return FunctionCall(function.schema, function.function, given.call(function.arguments, arguments, path))

    def call(self, function: RootFunction, call: FunctionCall, entity: Entity | None, listing: Listing) -> RootField:
        """A function's JSON: a value, one row or record, or (VOLATILE functions) a list of rows or records."""
        returns = function.returns
        kind = returns.kind
        if kind in (ReturnKind.SCALAR, ReturnKind.SCALARS, ReturnKind.VOID):
            if returns.type is None:
                return RootField(VALUE, call=ComputedOutput(VALUE, call))
            mapping = value_map(returns.type, self.model)
            return RootField(VALUE, call=ComputedOutput(VALUE, call, mapping, returns_set=kind is ReturnKind.SCALARS))
        if kind in (ReturnKind.RECORD, ReturnKind.RECORDS):
            assert returns.record is not None
            outputs = tuple(
                ColumnOutput(f.name, f.column, value_map(f.type, self.model)) for f in returns.record.fields
            )
            many = kind is ReturnKind.RECORDS
            return RootField(VALUE, Read(call, Shape(outputs), ReadKind.MANY if many else ReadKind.ONE))
        assert entity is not None
        shape = self.shape(entity, listing.selection)
        if kind is ReturnKind.ROW:
            return RootField(VALUE, Read(call, shape, ReadKind.ONE))
        page, _ = self._pages.list_page({"first": listing.first, "offset": listing.offset}, ())
        order = self._pages.order(entity, listing.order, default_key=False)
        filter_ = self.filter(entity, listing.filter, "filter")
        return RootField(VALUE, Read(call, shape, ReadKind.MANY, filter=filter_, order=order.items, page=page))

    # --- row shapes ----------------------------------------------------------------------------------------------

    def shape(
        self, entity: Entity, selection: Selection, *, cursors: bool = False, path: str = "", as_of: str | None = None
    ) -> Shape:
        """The JSON object of each row (SPEC "Naming" -> REST rows); `path` is the include path of the rows
        (`author`, `books.author`; empty for the rows read); `as_of` the instant the rows were read at, which their
        included temporal relations are read at too unless they have their own (`asOf[<path>]`)."""
        meanings = self.index.fields(entity)
        names: Sequence[str] = selection.fields or _default_fields(entity)
        outputs: list[Output] = []
        for name in names:
            if name == REST_TYPENAME and entity.subtypes:
                outputs.append(type_name_output(entity, name))
                continue
            if (found := entity.subtype_column(name)) is not None:
                subtype, field = found
                join = subtype_join(subtype)
                outputs.append(SubtypeColumnOutput(name, join, field.column, value_map(field.type, self.model)))
                continue
            meaning = meanings[name]
            if meaning.kind is FieldKind.ROW_VERSION:
                outputs.append(row_version("rowVersion", entity))
            elif meaning.kind is FieldKind.COLUMN:
                field = meaning.field
                assert field is not None
                if field.name in selection.paths:
                    json_path = self.params.add(selection.paths[field.name], "jsonpath")
                    outputs.append(JsonPathOutput(field.rest_name, field.column, json_path))
                else:
                    outputs.append(ColumnOutput(field.rest_name, field.column, value_map(field.type, self.model)))
            else:
                computed = meaning.computed
                assert computed is not None and computed.returns.type is not None
                given = selection.arguments.get(name, {})
                call = self._call(computed, given, f"{path}.{name}" if path else name)
                returns_set = computed.returns.kind is ReturnKind.SCALARS
                outputs.append(ComputedOutput(name, call, value_map(computed.returns.type, self.model), returns_set))
        for name in selection.arguments:
            if name not in names:
                where = f"args[{path}.{name}]" if path else f"args[{name}]"
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"{where} is given, but {name} is not among the fields",
                    extensions={"field": where},
                )
        if cursors:
            outputs.append(CursorOutput("_cursor"))
        for name, include in selection.includes.items():
            arc = meanings[name].arc
            if arc is not None:
                outputs.append(ArcOutput(name, tuple(self._arc_read(entity, r) for r in entity.arc_relations(arc))))
            else:
                outputs.append(NestedOutput(name, self._included(entity, name, include, include.as_of or as_of)))
        return Shape(tuple(outputs))

    def _arc_read(self, entity: Entity, relation: Relation) -> Read:
        """The row an exclusive arc points at through one of its relations: every field, after `__typename`."""
        target = self.model.entity(relation.target)
        shape = self.shape(target, Selection())
        typename = ConstantOutput("__typename", target.type_name)
        return Read(table(target), Shape((typename, *shape.outputs)), ReadKind.ONE, link=link_of(relation, self.model))

    def _call(self, computed: ComputedField, given: Mapping[str, Any], name: str) -> FunctionCall:
        """A computed field's call; `name` is its include path and field name (`manager.doubleId`), and its
        arguments' parameters are `args[<name>][<argument>]`."""
        missing = [a.name for a in computed.arguments if a.required and a.name not in given]
        missing = [a for a in missing if a not in computed.from_columns]
        if missing:
            raise SvcError(
                Code.BAD_USER_INPUT,
                f"{name} needs the argument(s) {', '.join(missing)}: args[{name}][{missing[0]}]=...",
                extensions={"field": f"args[{name}][{missing[0]}]"},
            )
        arguments = self._computed.call(computed.arguments, given, [f"args[{name}]"], computed.from_columns)
        return FunctionCall(computed.schema, computed.function, arguments, row_argument=not computed.from_columns)

    def _included(self, entity: Entity, name: str, include: Include, as_of: str | None) -> Read:
        """An included relation, hierarchy, history or computed set of rows; `as_of` the instant in effect (the
        include's own `asOf[<path>]`, else its parent's): temporal rows are the versions valid then, and a to-one
        relation across a period foreign key reaches the version valid then, or now."""
        meaning = self.index.fields(entity)[name]
        if meaning.relation is not None:
            relation = meaning.relation
            target = self.model.entity(relation.target)
            link = link_of(relation, self.model)
            if relation.kind is Cardinality.TO_ONE:
                shape = self.shape(target, include.selection, path=include.path, as_of=as_of)
                version = self._valid_at(target, as_of or NOW) if one_version(relation, target) else None
                return Read(table(target), shape, ReadKind.ONE, link=link, filter=version)
            return self._many(target, include, link=link, as_of=as_of)
        if meaning.kind is FieldKind.HISTORY:
            assert entity.temporal is not None
            shape = self.shape(entity, include.selection, path=include.path, as_of=as_of)
            link = history_link(entity.temporal)
            page, _ = self._pages.list_page({}, ())  # at most `page_size.max` versions, as an included list
            order = history_order(entity.temporal)
            return Read(table(entity), shape, ReadKind.MANY, link=link, order=order, page=page)
        if meaning.hierarchy is not None:
            filter_ = self.filter(entity, include.filter, f"filter[{include.path}]")
            order = self._pages.order(entity, include.order, default_key=False)
            depth = self.params.add(include.depth, "integer") if include.depth is not None else None
            walk = meaning.walk(entity, depth)
            shape = self.shape(entity, include.selection, path=include.path, as_of=as_of)
            return Read(table(entity), shape, ReadKind.MANY, filter=filter_, order=order.items, hierarchy=walk)
        computed = meaning.computed
        assert computed is not None and computed.returns.entity is not None
        target = self.model.entity(computed.returns.entity)
        call = FunctionCall(computed.schema, computed.function, row_argument=True)
        if computed.returns.kind is ReturnKind.ROW:
            return Read(call, self.shape(target, include.selection, path=include.path, as_of=as_of), ReadKind.ONE)
        return self._many(target, include, source=call, as_of=as_of)

    def _many(
        self,
        target: Entity,
        include: Include,
        *,
        link: Link | JunctionLink | None = None,
        source: FunctionCall | None = None,
        as_of: str | None = None,
    ) -> Read:
        """Included to-many rows: filtered, ordered and paged by the embedding controls; without them, at most
        `page_size.max` rows; with any of them, `page_size.default` rows unless `first` says otherwise. Rows of a
        temporal table are the versions valid at `as_of` when there is one."""
        controlled = include.filter is not None or include.order or include.first is not None or include.offset
        first = include.first
        if first is None and controlled:
            first = self.limits.page_size.default
        # The controls are whole numbers already (the parse stage's): no error of the page names a parameter.
        page, _ = self._pages.list_page({"first": first, "offset": include.offset}, ())
        filter_ = self.filter(target, include.filter, f"filter[{include.path}]")
        if as_of is not None and target.temporal is not None:
            filter_ = _all([filter_, self._valid_at(target, as_of)])
        order = self._pages.order(target, include.order, default_key=False)
        shape = self.shape(target, include.selection, path=include.path, as_of=as_of)
        return Read(
            source or table(target),
            shape,
            ReadKind.MANY,
            link=link,
            filter=filter_,
            order=order.items,
            page=page if page.limit is not None or page.offset is not None else Page(),
        )


def _default_fields(entity: Entity) -> list[str]:
    """Every column, then the row version for entities with a key."""
    names = [field.name for field in entity.fields]
    if entity.subtypes:
        names += [REST_TYPENAME, *(name for subtype in entity.subtypes for name, _ in subtype.columns)]
    if entity.primary_key is not None:
        names.append("rowVersion")
    return names


def _all(conditions: Sequence[Filter | None]) -> Filter | None:
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else And(tuple(present))
