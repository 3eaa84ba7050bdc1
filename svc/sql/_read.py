"""A read plan as ONE statement whose columns are the JSON texts of the root fields (ARCHITECTURE.md, "The one idea").

Shapes of the SQL, per read:

    inner:  select t.*, <order values as __o1..> from <source> t
            where <link> and <filter> and <keyset> order by <order> limit <n> offset <m>
    row:    json_build_object('<key>', <value>, ...) over an inner row; relations as
            `left join lateral (...) tN on true` (the first eight of a row) or scalar subqueries (the rest)
    many:   select coalesce(json_agg(x.j), '[]') from (select <row> as j from (<inner>) r ... order by r.__o1..) x
    one:    select <row> from (<inner>) r ... limit 1
    page:   the rows numbered in reading order (one more than the page is read, for hasNextPage/hasPreviousPage),
            then json_build_object of nodes, edges (cursor and node), pageInfo and totalCount

The page is cut before relations are read, so relations are read for the rows of the page only. Functions of a row
take the real table row: inside the inner query that is its alias; outside, the inner query carries it as `__row`.
Aliases are handed out in walk order and values are named placeholders, so one shape always gives one text.
"""

from collections.abc import Callable, Sequence
from typing import LiteralString

import attrs
from psycopg import sql

from svc.db import CUSTOM_PLANS, PlanCacheMode
from svc.plan import (
    ArcOutput,
    ColumnOutput,
    ColumnRef,
    ComputedOutput,
    ComputedRef,
    ConstantOutput,
    CountMode,
    CursorOutput,
    EntityLookup,
    FunctionCall,
    GlobalIdOutput,
    Hierarchy,
    JsonPathOutput,
    JsonRows,
    JunctionLink,
    Link,
    NestedOutput,
    OrderItem,
    Output,
    Page,
    PageMember,
    PageOutput,
    Param,
    Read,
    ReadKind,
    ReadPlan,
    RootField,
    RowsFormat,
    RowVersionOutput,
    Shape,
    SubtypeColumnOutput,
    SubtypeJoin,
    Table,
    TypeNameOutput,
    ValueMap,
    Window,
    WindowFunction,
    WindowOutput,
)

from ._aggregates import StatsWriter, asks_for_stats, key_value
from ._filters import Expressions, RowSide, TypeName, Value, link_condition, param, qualified, where
from ._search import SearchWriter, searched_once
from ._values import carried_setting, global_id, json_object, mapped

#: Relations of a row read by lateral joins; the rest are scalar subqueries (SPEC "Operations": beyond eight).
LATERAL_LIMIT = 8
#: The window functions of rows (running sums are written with their column).
_WINDOW_FUNCTIONS: dict[WindowFunction, LiteralString] = {
    WindowFunction.ROW_NUMBER: "row_number()",
    WindowFunction.RANK: "rank()",
    WindowFunction.DENSE_RANK: "dense_rank()",
    WindowFunction.PERCENT_RANK: "percent_rank()",
}


@attrs.frozen
class CompiledRead:
    """The statement (named placeholders `p0`, `p1`, ...) and the JSON keys of its columns, in order."""

    statement: str
    keys: tuple[str, ...]
    #: Whether the statement calls the session's temporary functions (`pg_temp.svc_*`, svc/db/_pool.py), which a
    #: standby cannot create: it reads on the primary. Catalog names in the text are always quoted, so only the
    #: compiler's own calls appear unquoted. Found once, when the shape is compiled, not on every read.
    primary_only: bool = attrs.field(
        init=False, default=attrs.Factory(lambda self: "pg_temp.svc_" in self.statement, takes_self=True)
    )
    #: How the database plans the statement (`plan_cache_mode`, `plans_of`).
    plans: PlanCacheMode = CUSTOM_PLANS


def compile_read(plan: ReadPlan) -> CompiledRead:
    """The statement answering every root field of the plan, one text column each (NULL for a JSON null); a
    split root answers one column per member of its connection instead."""
    compiler = _Compiler()
    if len(plan.roots) == 1 and plan.roots[0].split:
        read = plan.roots[0].read
        assert read is not None and read.kind is ReadKind.PAGE
        statement = compiler.split_page(read)
        return CompiledRead(statement.as_string(None), tuple(output.key for output in read.page_outputs))
    return CompiledRead(
        _roots(compiler, plan).as_string(None), tuple(root.key for root in plan.roots), plans=plans_of(plan)
    )


def plans_of(plan: ReadPlan) -> PlanCacheMode:
    """How the database plans the statement of `plan`: a read for its values each time (page sizes and filters
    change the best plan a lot); a statement of searches only as PostgreSQL chooses (`auto`, as a write's), since a
    search's plan is its ranking's index whatever the values and planning it (the index's costs, the column's
    statistics) cost about as much as running it; and one of plain nearest-vector searches once (`searched_once`)."""
    searches = [root.search for root in plan.roots]
    if not all(search is not None for search in searches):
        return CUSTOM_PLANS
    if all(search is not None and searched_once(search) for search in searches):
        return "force_generic_plan"
    return "auto"


def compile_batch(plan: ReadPlan, params: int) -> CompiledRead:
    """The read of `plan` for many sets of its values in ONE statement (live queries sharing a shape, SPEC
    "Subscriptions"): parameter `bN` holds the N-th value of every set, in the values' text form, as a `text[]`; the
    sets are unnested side by side, numbered, and the read is joined laterally once per set, its placeholders now
    the set's columns (cast to their types as before, from text). One row per set, in order: the set's number, then
    the read's columns."""
    read = _roots(_Compiler(), plan)
    if params == 0:
        return CompiledRead(
            sql.SQL("select 1::bigint, svc_read.* from ({}) svc_read").format(read).as_string(None),
            tuple(root.key for root in plan.roots),
        )
    names = [sql.Identifier(f"p{index}") for index in range(params)]
    arrays = [sql.SQL("{}::text[]").format(sql.Placeholder(f"b{index}")) for index in range(params)]
    statement = sql.SQL(
        "select svc_set.svc_ordinal, svc_read.* from unnest({arrays}) with ordinality svc_set({names}, svc_ordinal)"
        " cross join lateral ({read}) svc_read order by svc_set.svc_ordinal"
    ).format(
        arrays=sql.SQL(", ").join(arrays),
        names=sql.SQL(", ").join(names),
        read=_replaced(read, lambda index: sql.Identifier("svc_set", f"p{index}")),
    )
    return CompiledRead(statement.as_string(None), tuple(root.key for root in plan.roots))


def compile_rows(read: Read, format: RowsFormat) -> CompiledRead:
    """Every row a root list read selects, one statement row each, in the read's order: one text column, the row's
    JSON object (NDJSON) or CSV record (CSV), without its line end; for a cursor to fetch in batches (`/export`).
    `keys` are the row's keys (a CSV header)."""
    statement = _Compiler().rows(read, format)
    return CompiledRead(statement.as_string(None), tuple(output.key for output in read.shape.outputs))


def compile_carried(plan: ReadPlan, carried: Sequence[tuple[int, str]]) -> CompiledRead:
    """The read of `plan` where the values at some indexes are a write's outputs (`carried`: index and output)
    read from the settings of the transaction the write left them in (`compile_write(carried=...)`), not from
    parameters: the read can be sent with the write, before the write's answer is back."""
    settings = {
        index: sql.SQL("current_setting({}, true)").format(sql.Literal(carried_setting(output)))
        for index, output in carried
    }
    read = _replaced(_roots(_Compiler(), plan), settings.get)
    return CompiledRead(read.as_string(None), tuple(root.key for root in plan.roots))


def _roots(compiler: "_Compiler", plan: ReadPlan) -> sql.Composed:
    columns = [sql.SQL("({})::text").format(compiler.root(root)) for root in plan.roots]
    return sql.SQL("select {}").format(sql.SQL(", ").join(columns))


def _replaced(node: sql.Composable, by: Callable[[int], sql.Composable | None]) -> sql.Composable:
    """`node` with the placeholder `%(pN)s` of each value `by` gives a piece for replaced by that piece."""
    if isinstance(node, Value):
        replacement = by(node.index)
        return node if replacement is None else replacement
    if isinstance(node, sql.Composed):
        return sql.Composed([_replaced(part, by) for part in node])
    return node


def filter_expressions() -> Expressions:
    """Expressions as the read compiler writes them: a write by filter compares related rows and computed values
    as a read does."""
    return _Compiler().expressions


class _Compiler:
    def __init__(self) -> None:
        self._aliases = 0
        self.expressions = Expressions(self._alias, self._call_in_table)

    def _alias(self) -> str:
        self._aliases += 1
        return f"t{self._aliases}"

    def root(self, root: RootField) -> sql.Composable:
        if root.read is not None:
            return sql.SQL("select {}").format(self.read(root.read, None))
        if root.entities:
            return self._entities(root.entities)
        if root.search is not None:
            writer = SearchWriter(
                self._alias,
                self.expressions,
                lambda read, table: self._selection(read, table, None),
                self.row,
                whole_row=_needs_whole_row,
                needed_columns=_needed_columns,
            )
            return writer.search(root.search)
        if root.call is not None:
            # Every root answers JSON: a scalar (text, numbers as text) becomes a JSON value.
            return sql.SQL("select to_json({})").format(self._computed(root.call, None))
        if root.constant is None:
            return sql.SQL("null::json")
        return sql.SQL("to_json({}::text)").format(sql.Literal(root.constant))

    def _entities(self, lookups: tuple[EntityLookup, ...]) -> sql.Composable:
        """Federation's `_entities`: each type's representations become rows of its table (only their key set),
        each finds its row by key, and every type's answers are aggregated in the representations' order."""
        parts: list[sql.Composable] = []
        for lookup in lookups:
            assert isinstance(lookup.read.source, Table)
            given, row = sql.Identifier(self._alias()), sql.Identifier(self._alias())
            parts.append(
                sql.SQL(
                    "select ({given}.value->>'__position')::integer as position, {read} as j"
                    " from json_array_elements({keys}) {given}"
                    " cross join lateral json_populate_record(null::{table}, {given}.value) {row}"
                ).format(
                    given=given,
                    read=self.read(lookup.read, row),
                    keys=param(lookup.keys),
                    table=qualified(lookup.read.source),
                    row=row,
                )
            )
        found = sql.Identifier(self._alias())
        return sql.SQL(
            "select coalesce(json_agg({found}.j order by {found}.position), '[]'::json) from ({parts}) {found}"
        ).format(found=found, parts=sql.SQL(" union all ").join(parts))

    # --- reads -------------------------------------------------------------------------------------------------

    def read(self, read: Read, parent: sql.Identifier | None) -> sql.Composable:
        """An expression giving the read's JSON, per row of `parent` (an outer row alias) when set."""
        if read.hierarchy is not None:
            assert parent is not None
            return self._hierarchy(read, parent)
        row = sql.Identifier(self._alias())
        inner = self.inner(read, parent)
        joins, obj = self.row(read.shape, row, read)
        if read.kind is ReadKind.ONE:
            return sql.SQL("(select {} from ({}) {}{} limit 1)").format(obj, inner, row, joins)
        if read.kind is ReadKind.MANY:
            rows = sql.Identifier(self._alias())
            order = self._order_values(read, row, reverse=False)
            return sql.SQL(
                "(select coalesce(json_agg({rows}.j), '[]'::json)"
                " from (select {obj} as j from ({inner}) {row}{joins}{order}) {rows})"
            ).format(rows=rows, obj=obj, inner=inner, row=row, joins=joins, order=order)
        return sql.SQL("({})").format(
            self._page(read, parent=parent, row=row, inner=inner, joins=joins, obj=obj, split=False)
        )

    def rows(self, read: Read, format: RowsFormat) -> sql.Composable:
        """A root list read's rows as lines (`compile_rows`)."""
        assert format is not RowsFormat.JSON and read.kind is ReadKind.MANY
        row, rows = sql.Identifier(self._alias()), sql.Identifier(self._alias())
        inner = self.inner(read, None)
        joins, pairs = self.row_pairs(read.shape, row, read)
        if format is RowsFormat.NDJSON:
            line, selected = sql.SQL("{}.j::text").format(rows), sql.SQL("{} as j").format(json_object(pairs))
        else:
            # Each cell's text computed once, below the record (`offset 0` keeps the planner from folding the
            # subquery into it, which would compute a cell once per mention in `_csv_field`).
            cells = [_csv_cell(output, value) for output, (_, value) in zip(read.shape.outputs, pairs, strict=True)]
            names = [sql.Identifier(f"c{position}") for position in range(len(pairs))]
            fields = [
                (_csv_field if quoted else _csv_plain)(sql.SQL("{}.{}").format(rows, name))
                for name, (_, quoted) in zip(names, cells, strict=True)
            ]
            line = sql.SQL("concat_ws(',', {})").format(sql.SQL(", ").join(fields))
            selected = sql.SQL(", ").join(
                sql.SQL("{} as {}").format(text, name) for (text, _), name in zip(cells, names, strict=True)
            )
        statement = "select {line} from (select {selected} from ({inner}) {row}{joins}{order} offset 0) {rows}"
        return sql.SQL(statement).format(
            line=line, selected=selected, inner=inner, row=row, joins=joins,
            order=self._order_values(read, row, reverse=False), rows=rows,
        )  # fmt: skip

    def inner(self, read: Read, parent: sql.Identifier | None) -> sql.Composable:
        """The rows read, with every column, the whole row where functions need it, and the order values."""
        table = sql.Identifier(self._alias())
        source, conditions = self._selection(read, table, parent)
        page = read.page
        needed = None if isinstance(read.source, FunctionCall) else _needed_columns(read)
        columns: list[sql.Composable]
        if needed is None:
            columns = [sql.SQL("{}.*").format(table)]
        else:
            columns = [sql.SQL("{}.{}").format(table, sql.Identifier(c)) for c in needed]
        if _needs_whole_row(read.shape):
            columns.append(sql.SQL("{} as __row").format(table))
        if any(isinstance(o, RowVersionOutput) and o.system for o in read.shape.outputs):
            # Rows a function or a JSON parameter gives carry no system version: their rowVersion is null.
            version = sql.SQL("{}.xmin").format(table) if isinstance(read.source, Table) else sql.SQL("null::xid")
            columns.append(sql.SQL("{} as __xmin").format(version))
        for position, item in enumerate(read.order, start=1):
            value = self.expressions.expression(item.expression, table)
            columns.append(sql.SQL("{} as {}").format(value, sql.Identifier(f"__o{position}")))
        windows = _windows_of(read)
        if windows:
            return self._windowed(
                read, table=table, columns=columns, source=source, conditions=conditions, windows=windows
            )
        if page.after is not None:
            conditions.append(self.expressions.keyset(read.order, page.after, table, after=True))
        if page.before is not None:
            conditions.append(self.expressions.keyset(read.order, page.before, table, after=False))
        order = self._order_by(
            [self.expressions.expression(i.expression, table) for i in read.order], read, page.backward
        )
        return sql.SQL("select {} from {}{}{}{}").format(
            sql.SQL(", ").join(columns) if columns else sql.SQL(""),
            source,
            where(conditions),
            order,
            self._limit(read),
        )

    def _windowed(
        self,
        read: Read,
        *,
        table: sql.Identifier,
        columns: list[sql.Composable],
        source: sql.Composable,
        conditions: list[sql.Composable],
        windows: list[Window],
    ) -> sql.Composable:
        """The inner rows of a read with window values (`__w1`...): computed over every row the read selects, in
        its order, before cursors, offset and limit take the page (SPEC: page 3 continues page 2's numbers)."""
        page = read.page
        values = [self.expressions.expression(i.expression, table) for i in read.order]
        for position, window in enumerate(windows, start=1):
            columns.append(sql.SQL("{} as {}").format(self._window_function(window, read, values, table), _w(position)))
        rows = sql.Identifier(self._alias())
        # Cursors compare the order values the rows carry (`__o1`...), as the order does.
        carried = tuple(
            attrs.evolve(item, expression=ColumnRef(f"__o{position}"))
            for position, item in enumerate(read.order, start=1)
        )
        bounds: list[sql.Composable] = []
        if page.after is not None:
            bounds.append(self.expressions.keyset(carried, page.after, rows, after=True))
        if page.before is not None:
            bounds.append(self.expressions.keyset(carried, page.before, rows, after=False))
        order = self._order_by(_values_of(read, rows), read, page.backward)
        return sql.SQL(
            "select {rows}.* from (select {columns} from {source}{where}) {rows}{bounds}{order}{limit}"
        ).format(
            rows=rows,
            columns=sql.SQL(", ").join(columns),
            source=source,
            where=where(conditions),
            bounds=where(bounds),
            order=order,
            limit=self._limit(read),
        )

    def _window_function(
        self, window: Window, read: Read, values: list[sql.Composable], table: sql.Identifier
    ) -> sql.Composable:
        """`<function> over (partition by <keys> order by <the read's order>)`: ranks by the orderBy's items only."""
        partition = sql.SQL("")
        if window.partition:
            keys = sql.SQL(", ").join(key_value(key, table) for key in window.partition)
            partition = sql.SQL("partition by {}").format(keys)
        ranked = window.function in (WindowFunction.RANK, WindowFunction.DENSE_RANK, WindowFunction.PERCENT_RANK)
        count = window.ranked if ranked else len(read.order)
        order = sql.SQL("")
        if count:
            order = sql.SQL(" order by {}").format(self._order_items(values[:count], read.order[:count], False))
        if window.function is WindowFunction.RUNNING_SUM:
            assert window.column is not None
            column = sql.SQL("{}.{}").format(table, sql.Identifier(window.column))
            return sql.SQL("sum({}) over ({}{} rows between unbounded preceding and current row)").format(
                column, partition, order
            )
        return sql.SQL("{} over ({}{})").format(sql.SQL(_WINDOW_FUNCTIONS[window.function]), partition, order)

    def _selection(
        self, read: Read, table: sql.Identifier, parent: RowSide | None
    ) -> tuple[sql.Composable, list[sql.Composable]]:
        """`FROM` items and the conditions (link and filter) of the rows a read selects, before paging."""
        conditions: list[sql.Composable]
        if isinstance(read.source, JsonRows):
            source: sql.Composable = sql.SQL("json_populate_recordset(null::{}, {}) {}").format(
                qualified(read.source.table), param(read.source.rows), table
            )
            conditions = []
        elif isinstance(read.source, FunctionCall):
            # Neither planner counts a function's rows below the root, so no estimate's text calls a function of the
            # parent row (which it could only name column by column).
            assert not callable(parent), "a function of the parent row in an estimated count"
            source = sql.SQL("{} {}").format(self._function(read.source, parent, outer=True), table)
            conditions = []
            if read.kind is ReadKind.ONE:
                # A function returning one row answers a row of NULLs when it has none: that is no row.
                conditions.append(sql.SQL("not ({} is null)").format(table))
            if read.link is not None and parent is not None:
                assert isinstance(read.link, Link), "a function's rows joined to their parent through a junction"
                conditions.append(link_condition(read.link, parent, table))
        elif read.link is None or parent is None:
            source, conditions = sql.SQL("{} {}").format(qualified(read.source), table), []
        else:
            source, condition = self.expressions.related_source(read.source, read.link, parent, table)
            conditions = [condition]
        if read.filter is not None:
            conditions.append(self.expressions.filter(read.filter, table))
        return source, conditions

    def _limit(self, read: Read) -> sql.Composable:
        page = read.page
        text = sql.SQL("")
        if page.limit is not None:
            extra = sql.SQL(" + 1") if read.kind is ReadKind.PAGE else sql.SQL("")
            text = sql.SQL(" limit {}{}").format(param(page.limit), extra)
        if page.offset is not None:
            text = sql.SQL("{} offset {}").format(text, param(page.offset))
        return text

    def _order_by(self, expressions: list[sql.Composable], read: Read, reverse: bool) -> sql.Composable:
        """` order by` the given expressions of the read's order items (reversed for reading backward), or nothing."""
        if not expressions:
            return sql.SQL("")
        return sql.SQL(" order by {}").format(self._order_items(expressions, read.order, reverse))

    def _order_items(
        self, expressions: list[sql.Composable], items: Sequence[OrderItem], reverse: bool
    ) -> sql.Composable:
        """`<expression> asc|desc nulls first|last` of each order item (reversed for reading backward)."""
        written = [
            sql.SQL("{} {} nulls {}").format(
                expression,
                sql.SQL("desc" if item.descending != reverse else "asc"),
                sql.SQL("first" if item.nulls_first != reverse else "last"),
            )
            for expression, item in zip(expressions, items, strict=True)
        ]
        return sql.SQL(", ").join(written)

    def _order_values(self, read: Read, row: sql.Identifier, *, reverse: bool) -> sql.Composable:
        """` order by` the read's order again, over the inner rows' order values (`__o1`...)."""
        return self._order_by(_values_of(read, row), read, reverse)

    # --- the JSON of a row -------------------------------------------------------------------------------------

    def row(self, shape: Shape, row: sql.Identifier, read: Read | None = None) -> tuple[sql.Composable, sql.Composable]:
        """(lateral joins, the JSON object) of an inner row of `read`."""
        joins, pairs = self.row_pairs(shape, row, read)
        return joins, json_object(pairs)

    def row_pairs(
        self, shape: Shape, row: sql.Identifier, read: Read | None = None
    ) -> tuple[sql.Composable, list[tuple[str, sql.Composable]]]:
        """(lateral joins, each output's key and value as the row's JSON object takes it) of an inner row."""
        joins: list[sql.Composable] = []
        pairs: list[tuple[str, sql.Composable]] = []
        subtypes: dict[SubtypeJoin, sql.Identifier] = {}

        def subtype(join: SubtypeJoin) -> sql.Identifier:
            """The subtype's row (null columns when there is none), left-joined once per row."""
            if join not in subtypes:
                subtypes[join] = alias = sql.Identifier(self._alias())
                joins.append(
                    sql.SQL(" left join {} {} on {}").format(
                        qualified(join.table), alias, link_condition(join.link, row, alias)
                    )
                )
            return subtypes[join]

        for output in shape.outputs:
            if isinstance(output, TypeNameOutput):
                cases = [
                    sql.SQL(" when {}.{} is not null then {}::text").format(
                        subtype(join), sql.Identifier(join.link.pairs[0][1]), sql.Literal(join.type_name)
                    )
                    for join in output.subtypes
                ]
                value = sql.SQL("case{} else {}::text end").format(
                    sql.SQL("").join(cases), sql.Literal(output.type_name)
                )
                pairs.append((output.key, value))
                continue
            if isinstance(output, SubtypeColumnOutput):
                column = sql.SQL("{}.{}").format(subtype(output.subtype), sql.Identifier(output.column))
                pairs.append((output.key, mapped(column, output.map)))
                continue
            if isinstance(output, CursorOutput):
                assert read is not None
                pairs.append((output.key, self._cursor(read, row)))
                continue
            if isinstance(output, WindowOutput):
                assert read is not None
                pairs.append((output.key, _window_value(output, read, row)))
                continue
            if isinstance(output, ArcOutput):
                # At most one of the arc's keys is set: the one read that finds a row gives the value.
                value: sql.Composable = sql.SQL("coalesce({})").format(
                    sql.SQL(", ").join(self.read(arm, row) for arm in output.reads)
                )
            elif isinstance(output, NestedOutput):
                value = self.read(output.read, row)
            else:
                pairs.append((output.key, self._output(output, row)))
                continue
            if len(joins) < LATERAL_LIMIT:
                lateral = sql.Identifier(self._alias())
                joins.append(sql.SQL(" left join lateral (select {} as j) {} on true").format(value, lateral))
                value = sql.SQL("{}.j").format(lateral)
            pairs.append((output.key, value))
        return sql.SQL("").join(joins), pairs

    def _output(self, output: Output, row: sql.Identifier) -> sql.Composable:
        if isinstance(output, ColumnOutput):
            return mapped(sql.SQL("{}.{}").format(row, sql.Identifier(output.column)), output.map)
        if isinstance(output, ComputedOutput):
            return self._computed(output, row)
        if isinstance(output, ConstantOutput):
            return sql.SQL("null") if output.value is None else sql.SQL("{}::text").format(sql.Literal(output.value))
        if isinstance(output, GlobalIdOutput):
            return global_id(output.type_name, sql.SQL("{}.{}").format(row, sql.Identifier(output.column)))
        if isinstance(output, JsonPathOutput):
            return sql.SQL("jsonb_path_query_first({}.{}::jsonb, {})").format(
                row, sql.Identifier(output.column), param(output.path)
            )
        assert isinstance(output, RowVersionOutput)
        if output.system:
            return sql.SQL("{}.__xmin::text").format(row)
        if output.column is not None:
            return sql.SQL("{}.{}::text").format(row, sql.Identifier(output.column))
        return sql.SQL("null")

    # --- functions ---------------------------------------------------------------------------------------------

    def _computed(self, output: ComputedOutput, row: sql.Identifier | None) -> sql.Composable:
        call = self._function(output.call, row, outer=True)
        if not output.returns_set:
            return mapped(call, output.map)
        item = sql.Identifier(self._alias())
        value = mapped(sql.SQL("{}.v").format(item), output.map)
        return sql.SQL("(select coalesce(json_agg({}), '[]'::json) from {} {}(v))").format(value, call, item)

    def _call_in_table(self, computed: ComputedRef, table: sql.Composable) -> sql.Composable:
        """A computed value in a filter or an order: inside the inner query, over the table's own alias."""
        return self._function(computed.call, table, outer=False)

    def _function(self, call: FunctionCall, row: sql.Composable | None, *, outer: bool) -> sql.Composable:
        """`schema.name(row, args...)`; `outer` rows carry the table row as `__row`, table aliases are it."""
        arguments: list[sql.Composable] = []
        if call.row_argument:
            assert row is not None
            arguments.append(sql.SQL("{}.__row").format(row) if outer else row)
        for argument in call.arguments:
            if isinstance(argument.value, ColumnRef):
                value = sql.SQL("{}.{}").format(row, sql.Identifier(argument.value.column))
            else:
                value = self.expressions.param(argument.value)
            if argument.name is None:
                arguments.append(value)
            else:
                arguments.append(sql.SQL("{} => {}").format(sql.Identifier(argument.name), value))
        return sql.SQL("{}({})").format(sql.Identifier(call.schema, call.name), sql.SQL(", ").join(arguments))

    # --- hierarchies ------------------------------------------------------------------------------------------

    def _hierarchy(self, read: Read, parent: sql.Identifier) -> sql.Composable:
        """Ancestors (nearest first) or descendants of the parent row: its walk's rows, filtered and ordered, nearest
        first where the order leaves a choice."""
        hierarchy = read.hierarchy
        assert hierarchy is not None and isinstance(read.source, Table)
        table = sql.Identifier(self._alias())
        extra = sql.SQL(", {} as __row").format(table) if _needs_whole_row(read.shape) else sql.SQL("")
        if any(isinstance(o, RowVersionOutput) and o.system for o in read.shape.outputs):
            extra = sql.SQL("{}, {}.xmin as __xmin").format(extra, table)
        if hierarchy.path is None:
            walk = self._recursive_walk(read.source, hierarchy, parent, table, extra)
        else:
            walk = self._path_walk(read.source, hierarchy, parent, table, extra)
        row = sql.Identifier(self._alias())
        joins, obj = self.row(read.shape, row)
        conditions = [self.expressions.filter(read.filter, row)] if read.filter is not None else []
        order = [
            sql.SQL("{} {}").format(
                self.expressions.expression(i.expression, row), sql.SQL("desc" if i.descending else "asc")
            )
            for i in read.order
        ]
        order.append(sql.SQL("{}.__depth").format(row))
        if hierarchy.path is not None:
            order.append(sql.SQL("{}.{}").format(row, sql.Identifier(hierarchy.path)))
        rows = sql.Identifier(self._alias())
        return sql.SQL(
            "(select coalesce(json_agg({rows}.j), '[]'::json) from (select {obj} as j from ({walk}) {row}{joins}{where}"
            " order by {order}) {rows})"
        ).format(rows=rows, obj=obj, walk=walk, row=row, joins=joins, where=where(conditions),
                 order=sql.SQL(", ").join(order))  # fmt: skip

    def _recursive_walk(
        self, source: Table, hierarchy: Hierarchy, parent: sql.Identifier, table: sql.Identifier, extra: sql.Composable
    ) -> sql.Composable:
        """Rows over a self-reference with their `__depth`, by a recursive walk that stops at `max_depth` and where
        a row would come round again (a cycle)."""
        walk, step = sql.Identifier(self._alias()), sql.Identifier(self._alias())
        near, far = (1, 0) if hierarchy.ancestors else (0, 1)  # pairs are (child's column, parent's column)

        def joined(other: sql.Composable) -> sql.Composable:
            return sql.SQL(" and ").join(
                sql.SQL("{}.{} = {}.{}").format(table, sql.Identifier(p[near]), other, sql.Identifier(p[far]))
                for p in hierarchy.pairs
            )

        key_columns = [sql.SQL("{}.{}").format(table, sql.Identifier(c)) for c in hierarchy.key]
        key = sql.SQL("({})::text").format(sql.SQL(", ").join(key_columns) if len(key_columns) > 1 else key_columns[0])
        depth_limit = (
            sql.SQL(" and {}.__depth < {}").format(step, param(hierarchy.max_depth))
            if hierarchy.max_depth
            else sql.SQL("")
        )
        return sql.SQL(
            "with recursive {walk} as ("
            "select {table}.*{extra}, 1 as __depth, array[{key}] as __seen from {source} {table} where {first}"
            " union all "
            "select {table}.*{extra}, {step}.__depth + 1, {step}.__seen || {key}"
            " from {source} {table} join {walk} {step} on {next} where not ({key} = any({step}.__seen)){limit}"
            ") select * from {walk}"
        ).format(
            walk=walk, table=table, extra=extra, key=key, source=qualified(source), first=joined(parent),
            step=step, next=joined(step), limit=depth_limit,
        )  # fmt: skip

    def _path_walk(
        self, source: Table, hierarchy: Hierarchy, parent: sql.Identifier, table: sql.Identifier, extra: sql.Composable
    ) -> sql.Composable:
        """Rows whose ltree path is above (`@>`) or below (`<@`) the parent row's, with their `__depth`: how many
        labels the two paths differ by."""
        assert hierarchy.path is not None
        mine, theirs = (sql.SQL("{}.{}").format(t, sql.Identifier(hierarchy.path)) for t in (table, parent))
        if hierarchy.ancestors:
            relation, depth = sql.SQL("@>"), sql.SQL("nlevel({}) - nlevel({})").format(theirs, mine)
        else:
            relation, depth = sql.SQL("<@"), sql.SQL("nlevel({}) - nlevel({})").format(mine, theirs)
        depth_limit = (
            sql.SQL(" and {} <= {}").format(depth, param(hierarchy.max_depth)) if hierarchy.max_depth else sql.SQL("")
        )
        return sql.SQL(
            "select {table}.*{extra}, {depth} as __depth from {source} {table}"
            " where {mine} {relation} {theirs} and {mine} <> {theirs}{limit}"
        ).format(
            table=table, extra=extra, depth=depth, source=qualified(source), mine=mine, relation=relation,
            theirs=theirs, limit=depth_limit,
        )  # fmt: skip

    # --- pages (connections) -----------------------------------------------------------------------------------

    def split_page(self, read: Read) -> sql.Composable:
        """A root connection as a statement with one text column per member (in `page_outputs` order)."""
        row = sql.Identifier(self._alias())
        inner = self.inner(read, None)
        joins, obj = self.row(read.shape, row, read)
        return self._page(read, parent=None, row=row, inner=inner, joins=joins, obj=obj, split=True)

    def _page(
        self,
        read: Read,
        *,
        parent: sql.Identifier | None,
        row: sql.Identifier,
        inner: sql.Composable,
        joins: sql.Composable,
        obj: sql.Composable,
        split: bool,
    ) -> sql.Composable:
        """The connection's members over the page's rows, numbered in reading order (`__n`) and counted (`__c`):
        one JSON object, or (`split`) one text column per member. The rows are read only when a member needs them;
        aggregates and the total come from the connection's stats (one scan, `StatsWriter`)."""
        stats = None
        if asks_for_stats(read):
            stats = StatsWriter(read, self.expressions, self._alias, lambda table: self._selection(read, table, parent))
        rows = sql.Identifier(self._alias())
        page_ = _PageWriter(self, read, parent, rows, stats)
        members = [(output.key, page_.member(output)) for output in read.page_outputs]
        if split:
            selected = sql.SQL(", ").join(sql.SQL("({})::text").format(value) for _, value in members)
        else:
            selected = json_object(members)
        if any(_needs_rows(output) for output in read.page_outputs):
            window = self._window(read, row)
            carried = sql.SQL("").join(
                sql.SQL(", {}.{}").format(row, _w(position)) for position in range(1, len(_windows_of(read)) + 1)
            )
            numbered = sql.SQL(
                "(select {obj} as j, {cursor} as c, row_number() over ({window}) as __n, count(*) over () as __c"
                "{carried} from ({inner}) {row}{joins}) {rows}"
            ).format(
                obj=obj,
                cursor=self._cursor(read, row),
                window=window,
                carried=carried,
                inner=inner,
                row=row,
                joins=joins,
                rows=rows,
            )
            # One row whatever is selected: `group by ()` makes it one group even when no member aggregates.
            statement = sql.SQL("select {} from {} group by ()").format(selected, numbered)
        else:
            statement = sql.SQL("select {}").format(selected)
        if stats is not None:
            statement = sql.SQL("with {} {}").format(stats.cte(), statement)
        return statement

    def _window(self, read: Read, row: sql.Identifier) -> sql.Composable:
        """The window the page's rows are numbered over (`__n`): the read's order, or none."""
        if not read.order:
            return sql.SQL("")
        return sql.SQL("order by {}").format(self._order_items(_values_of(read, row), read.order, read.page.backward))

    def _cursor(self, read: Read, row: sql.Identifier) -> sql.Composable:
        """An opaque cursor: base64 of the JSON array [signature, order values...] (SPEC "Pagination rules" 5).

        In an order that is not total (`Page.positions`) a row carries its position instead: the offset the page
        was read from plus the row's number, counted over the same window as `__n` (so the same number)."""
        values = _values_of(read, row)
        if read.page.positions:
            skipped = param(read.page.offset) if read.page.offset is not None else sql.SQL("0")
            values = [sql.SQL("{} + row_number() over ({})").format(skipped, self._window(read, row))]
        array = sql.SQL("json_build_array({})").format(
            sql.SQL(", ").join([sql.Literal(read.cursor_signature), *values])
        )
        return sql.SQL("translate(encode(convert_to({}::text, 'UTF8'), 'base64'), E'\\n', '')").format(array)

    def count(self, read: Read, parent: sql.Identifier | None) -> sql.Composable:
        """How many rows the read's link and filter select, over every page."""
        table = sql.Identifier(self._alias())
        source, conditions = self._selection(read, table, parent)
        return sql.SQL("(select count(*) from {}{})::int").format(source, where(conditions))

    def estimate(self, read: Read, parent: sql.Identifier | None) -> sql.Composable:
        """The planner's estimate of that count: EXPLAIN of the count query, run by the connection's
        `pg_temp.svc_count_estimate` (svc/db/_pool.py). The query text is built by format() with the values, and
        the parent row's key when nested, as quoted literals (`%1$L`...), since EXPLAIN of a text cannot take
        parameters."""
        literals: list[sql.Composable] = []

        def as_literal(value: Param) -> sql.Composable:
            literals.append(param(value))
            return sql.SQL("%%{}$L::{}").format(sql.Literal(len(literals)), TypeName(value.sql_type))

        def parent_column(name: str) -> sql.Composable:
            assert parent is not None
            literals.append(sql.SQL("{}.{}").format(parent, sql.Identifier(name)))
            return sql.SQL("%%{}$L").format(sql.Literal(len(literals)))

        writer = _Compiler()
        writer._aliases = self._aliases
        writer.expressions = Expressions(writer._alias, writer._call_in_table, param=as_literal)
        table = sql.Identifier(writer._alias())
        source, conditions = writer._selection(read, table, parent_column if parent is not None else None)
        self._aliases = writer._aliases
        template = sql.SQL("select from {}{}").format(source, where(conditions))
        text = sql.SQL("format({}{})").format(
            sql.Literal(template.as_string(None)),  # its `%%L` reach format() as `%L` (psycopg's % escaping)
            sql.SQL("").join(sql.SQL(", {}").format(value) for value in literals),
        )
        return sql.SQL("pg_temp.svc_count_estimate({})").format(text)


class _PageWriter:
    """The members of one connection object over its numbered rows."""

    def __init__(
        self,
        compiler: _Compiler,
        read: Read,
        parent: sql.Identifier | None,
        rows: sql.Identifier,
        stats: StatsWriter | None,
    ) -> None:
        self._compiler = compiler
        self._stats = stats
        self._read = read
        self._parent = parent
        self._rows = rows
        self._page: Page = read.page
        self._direction = sql.SQL(" desc") if self._page.backward else sql.SQL("")
        self._within = self._rows_of_the_page()

    def _rows_of_the_page(self) -> sql.Composable:
        """The rows of the page among those read (one more than the page was read)."""
        page, rows = self._page, self._rows
        if page.limit is None:
            return sql.SQL("true")
        within = sql.SQL("{}.__n <= {}").format(rows, param(page.limit))
        if page.tail is not None:
            within = sql.SQL("{} and {}.__n > least({}.__c, {}) - {}").format(
                within, rows, rows, param(page.limit), param(page.tail)
            )
        return within

    def member(self, output: PageOutput) -> sql.Composable:
        if output.constant is not None:
            return sql.SQL("{}::text").format(sql.Literal(output.constant))
        if output.members:
            return json_object([(m.key, self.member(m)) for m in output.members])
        member, rows = output.member, self._rows
        if member is PageMember.NODES:
            return self._nodes(output.format)
        if member is PageMember.NODE_COUNT:
            return sql.SQL("count(*) filter (where {})").format(self._within)
        if member is PageMember.EDGES:
            assert output.edge is not None
            edge = [(key, sql.SQL("{}.c").format(rows)) for key in output.edge.cursor_keys]
            edge += [(key, sql.SQL("{}.j").format(rows)) for key in output.edge.node_keys]
            edge += [(c.key, sql.SQL("{}::text").format(sql.Literal(c.value))) for c in output.edge.constants]
            edge += [(w.key, _window_value(w, self._read, rows)) for w in output.edge.windows]
            return self._aggregate(json_object(edge))
        if member in (PageMember.START_CURSOR, PageMember.END_CURSOR):
            last = (member is PageMember.END_CURSOR) != self._page.backward
            order = sql.SQL(" desc" if last else "")
            return sql.SQL("(array_agg({r}.c order by {r}.__n{o}) filter (where {w}))[1]").format(
                r=rows, o=order, w=self._within
            )
        if member in (PageMember.HAS_NEXT_PAGE, PageMember.HAS_PREVIOUS_PAGE):
            return self._has_more(ahead=(member is PageMember.HAS_NEXT_PAGE) != self._page.backward)
        if member is PageMember.AGGREGATES:
            assert self._stats is not None
            return self._stats.member(output)
        assert member is PageMember.TOTAL_COUNT
        return self._total(output)

    def _nodes(self, format: RowsFormat) -> sql.Composable:
        """The page's rows: a JSON array, or text (NDJSON lines, CSV records) with no header."""
        if format is RowsFormat.JSON:
            return self._aggregate(sql.SQL("{}.j").format(self._rows))
        line = sql.SQL("{}.j::text").format(self._rows) if format is RowsFormat.NDJSON else _csv_record(self._rows)
        end = sql.SQL("E'\\n'") if format is RowsFormat.NDJSON else sql.SQL("E'\\r\\n'")
        return sql.SQL("coalesce(string_agg({l} || {e}, '' order by {r}.__n{d}) filter (where {w}), '')").format(
            l=line, e=end, r=self._rows, d=self._direction, w=self._within
        )

    def _aggregate(self, value: sql.Composable) -> sql.Composable:
        return sql.SQL("coalesce(json_agg({v} order by {r}.__n{d}) filter (where {w}), '[]'::json)").format(
            v=value, r=self._rows, d=self._direction, w=self._within
        )

    def _has_more(self, *, ahead: bool) -> sql.Composable:
        """Ahead of the page (in the direction read) the extra row tells; behind it, a cursor or offset given does
        (and with `first` and `last` together, rows of the first page the tail leaves out)."""
        page = self._page
        if ahead:
            return sql.SQL("count(*) > {}").format(param(page.limit)) if page.limit is not None else sql.SQL("false")
        if page.tail is not None:
            assert page.limit is not None
            return sql.SQL("least(count(*), {}) > {}").format(param(page.limit), param(page.tail))
        started = sql.SQL("true" if (page.before if page.backward else page.after) is not None else "false")
        if page.offset is not None:
            return sql.SQL("({} or {} > 0)").format(started, param(page.offset))
        return started

    def _total(self, output: PageOutput) -> sql.Composable:
        if output.count is CountMode.EXACT:
            if self._stats is not None:  # counted in the same scan as the aggregates
                return self._stats.total_count()
            return self._compiler.count(self._read, self._parent)
        estimate = self._compiler.estimate(self._read, self._parent)
        if output.count is CountMode.ESTIMATE:
            return estimate
        assert output.exact_below is not None
        return sql.SQL("(case when {e} <= {b} then {c} else {e} end)").format(
            e=estimate, b=param(output.exact_below), c=self._compiler.count(self._read, self._parent)
        )


def _csv_record(rows: sql.Identifier) -> sql.Composable:
    """One CSV record of a row's JSON object, its values in key order (`_json_text`, `_csv_field`); each value's
    text is computed once, in the subquery, for the several mentions of it in its field."""
    return sql.SQL(
        "(select string_agg({}, ',' order by f.n)"
        " from (select f.value #>> '{{}}' as t, f.n from json_each({}.j) with ordinality f(key, value, n) offset 0) f)"
    ).format(_csv_field(sql.SQL("f.t")), rows)


def _json_text(value: sql.Composable) -> sql.Composable:
    """A value, as the row's JSON object takes it, as CSV writes it: a string's text, other values' JSON text, SQL
    null for null (as `_csv_record` reads them from the object)."""
    if value == sql.SQL("null"):
        return sql.SQL("null::text")
    return sql.SQL("(to_json({}) #>> '{{}}')").format(value)


def _csv_cell(output: Output, value: sql.Composable) -> tuple[sql.Composable, bool]:
    """A value's text as a CSV cell takes it (`_json_text`), and whether that text may need quoting. Where the
    output's mapping says what the value is, its text comes without to_json's round trip (numbers, strings), and
    texts that never hold a comma, quote, line break or edge space are not searched for one."""
    mapping = output.map if isinstance(output, ColumnOutput | ComputedOutput) else None
    if isinstance(output, ComputedOutput) and output.returns_set:
        mapping = None  # a JSON array
    if mapping in (ValueMap.NUMBER, ValueMap.TEXT):
        return sql.SQL("({})::text").format(value), False
    if mapping is ValueMap.STRING:
        return sql.SQL("({})::text").format(value), True
    if mapping is ValueMap.PLAIN:
        # Its JSON text is a bare word or a string without escapes: the quotes cut off are the text, with no
        # reading of the JSON back (`#>>`, which cost a quarter of a 1M-row export's time in the database).
        return sql.SQL("btrim(to_json({})::text, '\"')").format(value), False
    return _json_text(value), True


def _csv_plain(text: sql.Composable) -> sql.Composable:
    """One CSV field of a cell's text that needs no quoting: null is an empty field."""
    return sql.SQL("coalesce({}, '')").format(text)


def _csv_field(text: sql.Composable) -> sql.Composable:
    """One CSV field of a cell's text: null is an empty field; a text holding a quote, comma, line break, edge spaces
    or nothing is quoted (so an empty string differs from null)."""
    return sql.SQL(
        "(case when {t} is null then ''"
        " when {t} = '' or {t} ~ '[\",\\r\\n]|^\\s|\\s$' then '\"' || replace({t}, '\"', '\"\"') || '\"'"
        " else {t} end)"
    ).format(t=text)


#: Connection members read from the page's rows (the others: counts, aggregates, constants, need none).
_ROW_MEMBERS = frozenset(
    {
        PageMember.NODES,
        PageMember.NODE_COUNT,
        PageMember.EDGES,
        PageMember.HAS_NEXT_PAGE,
        PageMember.HAS_PREVIOUS_PAGE,
        PageMember.START_CURSOR,
        PageMember.END_CURSOR,
    }
)


def _needs_rows(output: PageOutput) -> bool:
    return output.member in _ROW_MEMBERS or any(_needs_rows(member) for member in output.members)


def _windows_of(read: Read) -> list[Window]:
    """The window values a read's rows carry (`__w1`...), each once, from its row outputs and its edges."""
    outputs: list[WindowOutput] = [o for o in read.shape.outputs if isinstance(o, WindowOutput)]
    for page_output in read.page_outputs:
        if page_output.edge is not None:
            outputs += page_output.edge.windows
    found: list[Window] = []
    while outputs:
        output = outputs.pop(0)
        outputs += output.members
        if output.window is not None and output.window not in found:
            found.append(output.window)
    return found


def _window_value(output: WindowOutput, read: Read, row: sql.Identifier) -> sql.Composable:
    """A window output's JSON over a row carrying the read's window values."""
    if output.window is None:
        return json_object([(member.key, _window_value(member, read, row)) for member in output.members])
    position = _windows_of(read).index(output.window) + 1
    return mapped(sql.SQL("{}.{}").format(row, _w(position)), output.map)


def _w(position: int) -> sql.Identifier:
    return sql.Identifier(f"__w{position}")


def _values_of(read: Read, row: sql.Identifier) -> list[sql.Composable]:
    """The inner rows' order values, `row.__o1`..."""
    return [sql.SQL("{}.{}").format(row, sql.Identifier(f"__o{p}")) for p in range(1, len(read.order) + 1)]


def _needed_columns(read: Read) -> list[str]:
    """The table columns the read's rows are used for: outputs, links to nested reads, and hierarchies."""
    needed: dict[str, None] = {}
    for output in read.shape.outputs:
        column = (
            output.column
            if isinstance(output, (ColumnOutput, GlobalIdOutput, RowVersionOutput, JsonPathOutput))
            else None
        )
        if column is not None:
            needed[column] = None
        elif isinstance(output, TypeNameOutput):
            needed.update((parent, None) for join in output.subtypes for parent, _ in join.link.pairs)
        elif isinstance(output, SubtypeColumnOutput):
            needed.update((parent, None) for parent, _ in output.subtype.link.pairs)
        elif isinstance(output, ComputedOutput):
            needed.update((a.value.column, None) for a in output.call.arguments if isinstance(a.value, ColumnRef))
        elif isinstance(output, ArcOutput):
            for nested in output.reads:
                assert isinstance(nested.link, Link)
                needed.update((parent, None) for parent, _ in nested.link.pairs)
        elif isinstance(output, NestedOutput):
            nested = output.read
            if isinstance(nested.link, Link):
                needed.update((parent, None) for parent, _ in nested.link.pairs)
            elif isinstance(nested.link, JunctionLink):
                needed.update((parent, None) for parent, _ in nested.link.parent_pairs)
            if nested.hierarchy is not None:
                needed.update(dict.fromkeys(nested.hierarchy.columns))
            if isinstance(nested.source, FunctionCall):
                needed.update((a.value.column, None) for a in nested.source.arguments if isinstance(a.value, ColumnRef))
    return list(needed)


def _needs_whole_row(shape: Shape) -> bool:
    """Functions of the row (computed outputs, sets of rows from a function of the row) take the whole row."""
    for output in shape.outputs:
        call: FunctionCall | None = None
        if isinstance(output, ComputedOutput):
            call = output.call
        elif isinstance(output, NestedOutput) and isinstance(output.read.source, FunctionCall):
            call = output.read.source
        if call is not None and call.row_argument:
            return True
    return False
