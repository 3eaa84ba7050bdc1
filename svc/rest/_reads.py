"""REST reads into read plans (SPEC "REST API"): a list is one connection read whose members become the body (the
rows) and headers (counts, cursors for `Link`); a row is a one-row read by key, with its version for `ETag`.

Rows are shaped as SPEC "Naming" says for REST: columns under their REST names, then `rowVersion` for entities with
a key; included relations under their field names. Limits are the shared ones (SPEC "Limits"): page sizes, depth
(include levels count), cost; the filter, order and page arguments are planned by `svc/plan`'s `Arguments`, as for
GraphQL.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc.config import LimitsConfig
from svc.errors import Code, SvcError
from svc.model import Cardinality as Kind
from svc.model import Entity, Model, ReturnKind
from svc.plan import (
    And,
    Arguments,
    Budget,
    Cardinality,
    ColumnOutput,
    ColumnRef,
    Compare,
    ComputedOutput,
    CountMode,
    CursorOutput,
    EntityIndex,
    FieldKind,
    Filter,
    FunctionCall,
    Hierarchy,
    JsonPathOutput,
    KeyLookup,
    NestedOutput,
    Not,
    Operator,
    Order,
    Output,
    Page,
    PageMember,
    PageOutput,
    Params,
    Quantifier,
    Read,
    ReadPlan,
    Related,
    RootField,
    RowsFormat,
    Shape,
    link_of,
    row_version,
    table,
    value_map,
)

from ._listing import Include, Listing, Selection, filter_parameter

#: Keys of the columns a list's statement answers (`page_outputs` order).
ROWS, ROW_COUNT, HAS_NEXT, HAS_PREVIOUS, START, END, TOTAL, ESTIMATE = (
    "rows", "rowCount", "hasNext", "hasPrevious", "start", "end", "total", "estimate",
)  # fmt: skip


@attrs.frozen
class Count:
    """`Prefer: count=...`: exact, planned (the planner's estimate) or estimated (exact below `threshold`)."""

    mode: str
    threshold: int | None = None


@attrs.frozen
class PlannedRead:
    plan: ReadPlan
    params: Params
    #: The order the page was read in (its signature makes `Link` cursors), and its size.
    order: Order | None = None
    size: int = 0


@attrs.frozen
class _Place:
    depth: int = 1
    parent_rows: int = 1

    def below(self, rows: int) -> "_Place":
        return _Place(self.depth + 1, self.parent_rows * rows)


class ReadRun:
    """The planning of one REST read: its parameters and budget."""

    def __init__(self, model: Model, index: EntityIndex, limits: LimitsConfig) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.params = Params()
        self.budget = Budget(limits)
        self.arguments = Arguments(model, index, limits, self.params)

    # --- lists -------------------------------------------------------------------------------------------------

    def rows(
        self,
        entity: Entity,
        listing: Listing,
        *,
        format: RowsFormat = RowsFormat.JSON,
        count: Count | None = None,
        source: FunctionCall | None = None,
    ) -> PlannedRead:
        """A list of an entity's rows (or of a function's rows, `source`), as one split connection."""
        order = self.arguments.order(entity, listing.order, default_key=source is None)
        page_arguments = {
            "first": listing.first,
            "last": listing.last,
            "offset": listing.offset,
            "after": listing.after,
            "before": listing.before,
        }
        page, size = self.arguments.connection_page(page_arguments, order, ())
        self.budget.read(1, size, 1)
        conditions = [self.filter(entity, listing.filter, "filter")]
        conditions += self._inner_and_anti(entity, listing.selection)
        outputs = [
            PageOutput(ROWS, PageMember.NODES, format=format),
            PageOutput(ROW_COUNT, PageMember.NODE_COUNT),
            PageOutput(HAS_NEXT, PageMember.HAS_NEXT_PAGE),
            PageOutput(HAS_PREVIOUS, PageMember.HAS_PREVIOUS_PAGE),
            PageOutput(START, PageMember.START_CURSOR),
            PageOutput(END, PageMember.END_CURSOR),
            *self._counts(count),
        ]
        read = Read(
            source=source or table(entity),
            shape=self.shape(entity, listing.selection, _Place().below(size), cursors=listing.cursors),
            cardinality=Cardinality.PAGE,
            filter=_all(conditions),
            order=order.items,
            page=page,
            page_outputs=tuple(outputs),
            cursor_signature=order.signature,
        )
        self.budget.check()
        return PlannedRead(ReadPlan((RootField("list", read, nullable=False, split=True),)), self.params, order, size)

    def _counts(self, count: Count | None) -> list[PageOutput]:
        if count is None:
            return []
        if count.mode == "exact":
            return [PageOutput(TOTAL, PageMember.TOTAL_COUNT)]
        estimate = PageOutput(ESTIMATE, PageMember.TOTAL_COUNT, count=CountMode.ESTIMATE)
        if count.mode == "planned" or count.threshold is None:
            return [estimate]
        bound = self.params.add(count.threshold, "bigint")
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
        """A coerced `<Type>Filter` planned; the planner's errors name the URL parameter (`filter[title][like]`),
        not the GraphQL path (`filter.title.like`)."""
        try:
            return self.arguments.filter(entity, value, [parameter])
        except SvcError as error:
            raise renamed(error, parameter, lambda p: filter_parameter(self.model, entity, parameter, p)) from error

    # --- one row -----------------------------------------------------------------------------------------------

    def row(self, entity: Entity, lookup: KeyLookup, selection: Selection) -> PlannedRead:
        """One row by a unique key, and its version (for `ETag`)."""
        self.budget.read(1, 1, 1)
        key = self.key_filter(entity, lookup)
        read = Read(table(entity), self.shape(entity, selection, _Place().below(1)), Cardinality.ONE, filter=key)
        roots = [RootField("row", read)]
        if entity.primary_key is not None:
            version = Read(table(entity), Shape((row_version("v", entity),)), Cardinality.ONE, filter=key)
            roots.append(RootField("version", version))
        self.budget.check()
        return PlannedRead(ReadPlan(tuple(roots)), self.params)

    def key_filter(self, entity: Entity, lookup: KeyLookup) -> Filter:
        items = []
        for column, value in lookup.values:
            field = entity.field_of_column(column)
            sql_type = field.type.sql_type if field is not None else "text"
            items.append(Compare(ColumnRef(column), Operator.EQ, self.params.add(value, sql_type)))
        return And(tuple(items)) if len(items) != 1 else items[0]

    # --- row shapes ----------------------------------------------------------------------------------------------

    def shape(
        self, entity: Entity, selection: Selection, place: _Place, *, cursors: bool = False, path: str = ""
    ) -> Shape:
        """The JSON object of each row (SPEC "Naming" -> REST rows); `place` is where the rows' members sit, `path`
        the include path of the rows (`author`, `books.author`; empty for the rows read)."""
        meanings = self.index.fields(entity)
        names: Sequence[str] = selection.fields or _default_fields(entity)
        outputs: list[Output] = []
        for name in names:
            meaning = meanings[name]
            if meaning.kind is FieldKind.ROW_VERSION:
                outputs.append(row_version("rowVersion", entity))
            elif meaning.kind is FieldKind.COLUMN:
                field = meaning.field
                assert field is not None
                if field.name in selection.paths:
                    path = self.params.add(selection.paths[field.name], "jsonpath")
                    outputs.append(JsonPathOutput(field.rest_name, field.column, path))
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
            outputs.append(NestedOutput(name, self._included(entity, name, include, place)))
        return Shape(tuple(outputs))

    def _call(self, computed: Any, given: Mapping[str, Any], name: str) -> FunctionCall:
        """A computed field's call; `name` is its include path and field name (`manager.doubleId`)."""
        missing = [a.name for a in computed.arguments if a.required and a.name not in given]
        missing = [a for a in missing if a not in computed.from_columns]
        if missing:
            raise SvcError(
                Code.BAD_USER_INPUT,
                f"{name} needs the argument(s) {', '.join(missing)}: args[{name}][{missing[0]}]=...",
                extensions={"field": f"args[{name}][{missing[0]}]"},
            )
        prefix = f"args[{name}]"
        try:
            arguments = self.arguments.call(computed.arguments, given, [prefix], computed.from_columns)
        except SvcError as error:
            raise renamed(error, prefix, lambda parts: prefix + f"[{parts[0]}]") from error
        return FunctionCall(computed.schema, computed.function, arguments, row_argument=not computed.from_columns)

    def _included(self, entity: Entity, name: str, include: Include, place: _Place) -> Read:
        """An included relation, hierarchy or computed set of rows, one level below `place`."""
        meaning = self.index.fields(entity)[name]
        where = f"filter[{include.path}]"
        if meaning.relation is not None:
            relation = meaning.relation
            target = self.model.entity(relation.target)
            link = link_of(relation, self.model)
            if relation.kind is Kind.TO_ONE:
                self.budget.read(place.depth, 1, place.parent_rows)
                shape = self.shape(target, include.selection, place.below(1), path=include.path)
                return Read(table(target), shape, Cardinality.ONE, link=link)
            return self._many(target, include, place, link=link)
        if meaning.hierarchy is not None:
            hierarchy = meaning.hierarchy
            rows = include.depth or self.limits.depth or 10
            self.budget.read(place.depth, rows, place.parent_rows)
            filter_ = self.filter(entity, include.filter, where)
            order = self.arguments.order(entity, include.order, default_key=False)
            walk = Hierarchy(
                pairs=hierarchy.pairs,
                key=tuple(entity.primary_key or (parent for _, parent in hierarchy.pairs)),
                ancestors=meaning.kind is FieldKind.ANCESTORS,
                max_depth=self.params.add(include.depth, "integer") if include.depth is not None else None,
            )
            shape = self.shape(entity, include.selection, place.below(rows), path=include.path)
            return Read(table(entity), shape, Cardinality.MANY, filter=filter_, order=order.items, hierarchy=walk)
        computed = meaning.computed
        assert computed is not None and computed.returns.entity is not None
        target = self.model.entity(computed.returns.entity)
        call = FunctionCall(computed.schema, computed.function, row_argument=True)
        if computed.returns.kind is ReturnKind.ROW:
            self.budget.read(place.depth, 1, place.parent_rows)
            return Read(call, self.shape(target, include.selection, place.below(1), path=include.path), Cardinality.ONE)
        return self._many(target, include, place, source=call)

    def _many(self, target: Entity, include: Include, place: _Place, *, link: Any = None, source: Any = None) -> Read:
        """Included to-many rows: filtered, ordered and paged by the embedding controls; without them, at most
        `page_size.max` rows; with any of them, `page_size.default` rows unless `first` says otherwise."""
        controlled = include.filter is not None or include.order or include.first is not None or include.offset
        first = include.first
        if first is None and controlled:
            first = self.limits.page_size.default
        page, rows = self.arguments.list_page({"first": first, "offset": include.offset}, [include.path])
        self.budget.read(place.depth, rows, place.parent_rows)
        filter_ = self.filter(target, include.filter, f"filter[{include.path}]")
        order = self.arguments.order(target, include.order, default_key=False)
        shape = self.shape(target, include.selection, place.below(rows), path=include.path)
        return Read(
            source or table(target),
            shape,
            Cardinality.MANY,
            link=link,
            filter=filter_,
            order=order.items,
            page=page if page.limit is not None or page.offset is not None else Page(),
        )


def renamed(error: SvcError, prefix: str, render: Any) -> SvcError:
    """The planner's error with its `field` (a dotted path below `prefix`) rendered as the URL parameter."""
    field = error.extensions.get("field")
    if not isinstance(field, str) or not field.startswith(prefix + "."):
        return error
    extensions = {**error.extensions, "field": render(field[len(prefix) + 1 :].split("."))}
    return SvcError(error.code, error.message, extensions=extensions, code_name=error.code_name, headers=error.headers)


def _default_fields(entity: Entity) -> list[str]:
    """Every column, then the row version for entities with a key."""
    names = [field.name for field in entity.fields]
    if entity.primary_key is not None:
        names.append("rowVersion")
    return names


def _all(conditions: Sequence[Filter | None]) -> Filter | None:
    present = [c for c in conditions if c is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else And(tuple(present))


__all__ = ["Count", "PlannedRead", "ReadRun", "renamed"]
