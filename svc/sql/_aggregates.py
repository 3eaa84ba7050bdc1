"""A connection's aggregates, groups and exact total in ONE scan of the rows it selects (SPEC "Aggregates": "Several
`groupedAggregates` fields, `totalCount` and `aggregates` are computed in one scan").

Shape of the SQL, per connection that asks for any:

    stats:  with tN as materialized (
              select grouping(r.__k1, ...) as __g, r.__k1, ..., <aggregate> as __a1, ...
              from (select <aggregated columns>, <key> as __k1, ..., (<filter>) as __f1 from <source> where <link and
                    filter>) r
              group by grouping sets ((), (r.__k1, r.__k2), ...))
    member: (select <object> from tN s where s.__g = <its set>)                       -- aggregates, totalCount
            (case when (select count(*) from <groups>) > <limit> then <raise> else
             (select coalesce(json_agg(<object> order by <keys>), '[]') from <groups>) end)  -- groupedAggregates

Every aggregate asked for (a member, a `having` condition, a filtered set's count) is one column of the stats,
computed in every grouping set; a member with a filter of its own aggregates `filter (where __fN)`. A grouping's
groups are the stats rows of its set (with its filter, those with rows of it) where its `having` holds; with
`fillGaps`, a series of keys from its first to its last group is joined to them. Too many groups raise
TOO_MANY_GROUPS (`pg_temp.svc_too_many_groups`, svc/db/_pool.py) before any group's JSON is built.
"""

from collections.abc import Callable, Iterator
from typing import LiteralString

from psycopg import sql

from svc.plan import (
    Aggregate,
    AggregateFunction,
    AggregateOutput,
    AggregateRef,
    Aggregates,
    And,
    Compare,
    Filter,
    Grouping,
    GroupKey,
    IsNull,
    KeyForm,
    KeyType,
    Not,
    Or,
    PageMember,
    PageOutput,
    Read,
)

from ._filters import Expressions, param, where
from ._values import json_object, mapped

#: The function each aggregate is, over a column `{c}` (or the rows).
_FUNCTIONS: dict[AggregateFunction, LiteralString] = {
    AggregateFunction.SUM: "sum({c})",
    AggregateFunction.AVG: "avg({c})",
    AggregateFunction.MIN: "min({c})",
    AggregateFunction.MAX: "max({c})",
    AggregateFunction.DISTINCT_COUNT: "count(distinct {c})::int",
    AggregateFunction.STDDEV_SAMPLE: "stddev_samp({c})",
    AggregateFunction.STDDEV_POPULATION: "stddev_pop({c})",
    AggregateFunction.VARIANCE_SAMPLE: "var_samp({c})",
    AggregateFunction.VARIANCE_POPULATION: "var_pop({c})",
}
#: The step of a truncated key's series (`fillGaps`).
_STEPS: dict[str, LiteralString] = {
    "minute": "1 minute",
    "hour": "1 hour",
    "day": "1 day",
    "week": "1 week",
    "month": "1 month",
    "quarter": "3 months",
    "year": "1 year",
}


def asks_for_stats(read: Read) -> bool:
    return any(output.aggregates is not None for output in read.page_outputs)


class StatsWriter:
    """The stats of one connection (a CTE) and its members over them. `alias` hands out the compiler's aliases;
    `selection(table)` gives the FROM items and conditions of the rows the read selects (before paging)."""

    def __init__(
        self,
        read: Read,
        expressions: Expressions,
        alias: Callable[[], str],
        selection: Callable[[sql.Identifier], tuple[sql.Composable, list[sql.Composable]]],
    ) -> None:
        self._expressions = expressions
        self._alias = alias
        self._selection = selection
        self.name = sql.Identifier(alias())
        self._keys: list[GroupKey] = []
        self._aggregates: list[Aggregate] = []
        self._filters: list[Filter] = []
        #: The grouping sets, by key positions; None is the whole set (the total, ungrouped aggregates), always read.
        self._sets: list[tuple[int, ...] | None] = [None]
        self.total = self._add(Aggregate(AggregateFunction.COUNT))
        for output in read.page_outputs:
            if output.aggregates is not None:
                self._collect(output.aggregates)

    # --- what is computed --------------------------------------------------------------------------------------

    def _collect(self, request: Aggregates) -> None:
        grouping = request.grouping
        if grouping is not None:
            self._set(tuple(self._key(key) for key in grouping.keys))
            self._add(Aggregate(AggregateFunction.COUNT, filter=request.filter))
            for aggregate in _aggregates_in(grouping.having):
                self._add(aggregate)
        for output in _flat(request.outputs):
            if output.aggregate is not None:
                self._add(output.aggregate)

    def _set(self, keys: tuple[int, ...] | None) -> None:
        if keys not in self._sets:
            self._sets.append(keys)

    def _key(self, key: GroupKey) -> int:
        if key not in self._keys:
            self._keys.append(key)
        return self._keys.index(key) + 1

    def _add(self, aggregate: Aggregate) -> int:
        if aggregate.filter is not None and aggregate.filter not in self._filters:
            self._filters.append(aggregate.filter)
        if aggregate not in self._aggregates:
            self._aggregates.append(aggregate)
        return self._aggregates.index(aggregate) + 1

    # --- the CTE -----------------------------------------------------------------------------------------------

    def cte(self) -> sql.Composable:
        """`tN as materialized (...)`: one row per group of each grouping set."""
        table = sql.Identifier(self._alias())
        source, conditions = self._selection(table)
        columns: list[sql.Composable] = []
        seen: list[str] = []
        for aggregate in self._aggregates:
            if aggregate.column is not None and aggregate.column not in seen:
                seen.append(aggregate.column)
                columns.append(sql.SQL("{}.{}").format(table, sql.Identifier(aggregate.column)))
        for position, key in enumerate(self._keys, start=1):
            columns.append(sql.SQL("{} as {}").format(key_value(key, table), _k(position)))
        for position, filter_ in enumerate(self._filters, start=1):
            columns.append(sql.SQL("{} as {}").format(self._expressions.filter(filter_, table), _f(position)))
        rows = sql.Identifier(self._alias())
        selected: list[sql.Composable] = []
        if self._keys:
            keys = [sql.SQL("{}.{}").format(rows, _k(p)) for p in range(1, len(self._keys) + 1)]
            selected.append(sql.SQL("grouping({}) as __g").format(sql.SQL(", ").join(keys)))
            selected += keys
        selected += [
            sql.SQL("{} as {}").format(self._aggregate(aggregate, rows), _a(position))
            for position, aggregate in enumerate(self._aggregates, start=1)
        ]
        group_by = sql.SQL("")
        if self._keys:
            sets = [
                sql.SQL("({})").format(sql.SQL(", ").join(sql.SQL("{}.{}").format(rows, _k(p)) for p in (keys_ or ())))
                for keys_ in self._sets
            ]
            group_by = sql.SQL(" group by grouping sets ({})").format(sql.SQL(", ").join(sets))
        return sql.SQL("{} as materialized (select {} from (select {} from {}{}) {}{})").format(
            self.name,
            sql.SQL(", ").join(selected),
            sql.SQL(", ").join(columns),
            source,
            where(conditions),
            rows,
            group_by,
        )

    def _aggregate(self, aggregate: Aggregate, rows: sql.Identifier) -> sql.Composable:
        column = sql.SQL("{}.{}").format(rows, sql.Identifier(aggregate.column)) if aggregate.column else None
        conditions: list[sql.Composable] = []
        if aggregate.filter is not None:
            conditions.append(sql.SQL("{}.{}").format(rows, _f(self._filters.index(aggregate.filter) + 1)))
        function = aggregate.function
        if function is AggregateFunction.COUNT:
            return sql.SQL("(count(*){})::int").format(_filtered(conditions))
        assert column is not None
        if function in (AggregateFunction.FIRST, AggregateFunction.LAST):
            direction = sql.SQL("asc" if function is AggregateFunction.FIRST else "desc")
            conditions.append(sql.SQL("{} is not null").format(column))
            return sql.SQL("(array_agg({c} order by {c} {d}){f})[1]").format(
                c=column, d=direction, f=_filtered(conditions)
            )
        if function in (AggregateFunction.MEDIAN, AggregateFunction.PERCENTILE):
            fraction = param(aggregate.fraction) if aggregate.fraction is not None else sql.SQL("0.5")
            return sql.SQL("percentile_cont({}) within group (order by {}::float8){}").format(
                fraction, column, _filtered(conditions)
            )
        return sql.SQL("{}{}").format(sql.SQL(_FUNCTIONS[function]).format(c=column), _filtered(conditions))

    # --- members -----------------------------------------------------------------------------------------------

    def total_count(self) -> sql.Composable:
        """The exact count of the rows the read selects, from the whole set's row."""
        stats = sql.Identifier(self._alias())
        return sql.SQL("(select {}.{} from {} {}{})").format(
            stats, _a(self.total), self.name, stats, self._in_set(None, stats)
        )

    def member(self, output: PageOutput) -> sql.Composable:
        assert output.member is PageMember.AGGREGATES and output.aggregates is not None
        request = output.aggregates
        stats = sql.Identifier(self._alias())
        if request.grouping is None:
            return sql.SQL("(select {} from {} {}{})").format(
                self._object(request.outputs, stats), self.name, stats, self._in_set(None, stats)
            )
        return self._groups(request, request.grouping)

    def _in_set(self, keys: tuple[int, ...] | None, stats: sql.Identifier) -> sql.Composable:
        """` where` the stats row is of the set (nothing when there is only one set)."""
        condition = self._of_set(keys, stats)
        return sql.SQL(" where {}").format(condition) if condition is not None else sql.SQL("")

    def _of_set(self, keys: tuple[int, ...] | None, stats: sql.Identifier) -> sql.Composable | None:
        """The condition that a stats row is of the set (None when there is only one set)."""
        if not self._keys:
            return None
        missing = set(range(1, len(self._keys) + 1)) - set(keys or ())
        bits = sum(1 << (len(self._keys) - p) for p in missing)
        return sql.SQL("{}.__g = {}").format(stats, sql.Literal(bits))

    def _groups(self, request: Aggregates, grouping: Grouping) -> sql.Composable:
        positions = tuple(self._key(key) for key in grouping.keys)
        count = self._aggregates.index(Aggregate(AggregateFunction.COUNT, filter=request.filter)) + 1
        stats = sql.Identifier(self._alias())
        if grouping.fill_gaps:
            source = self._filled(grouping, positions, count, stats)
        else:
            of_group = self._of_group(positions, count, stats)
            source = sql.SQL("(select * from {} {} where {}) {}").format(self.name, stats, of_group, stats)
        conditions: list[sql.Composable] = []
        if grouping.having is not None:
            having = Expressions(self._alias, _no_call, aggregate=self._aggregate_of)
            conditions.append(having.filter(grouping.having, stats))
        order = sql.SQL(", ").join(sql.SQL("{}.{} asc nulls last").format(stats, _k(p)) for p in positions)
        groups = sql.SQL("{}{}").format(source, where(conditions))
        members = self._object(request.outputs, stats, positions)
        listed = sql.SQL("(select coalesce(json_agg({} order by {}), '[]'::json) from {})").format(
            members, order, groups
        )
        if grouping.limit is None:
            return listed
        counted = sql.SQL("(select count(*) from {})").format(groups)
        limit = param(grouping.limit)
        return sql.SQL("(case when {c} > {l} then pg_temp.svc_too_many_groups({c}, {l}) else {g} end)").format(
            c=counted, l=limit, g=listed
        )

    def _of_group(self, positions: tuple[int, ...], count: int, stats: sql.Identifier) -> sql.Composable:
        """The condition that a stats row is a group of the grouping: of its set, and with rows (its filter's)."""
        of_set = self._of_set(positions, stats)
        assert of_set is not None
        return sql.SQL("{} and {}.{} > 0").format(of_set, stats, _a(count))

    def _filled(
        self, grouping: Grouping, positions: tuple[int, ...], count: int, alias: sql.Identifier
    ) -> sql.Composable:
        """The grouping's groups with a group for every step of its one truncated or binned key between its first
        and last group that has none (aggregates NULL, counts 0), as a FROM item named `alias`."""
        assert len(positions) == 1
        key, position = grouping.keys[0], positions[0]
        stats, bounds, gap = (sql.Identifier(self._alias()) for _ in range(3))
        of_group = self._of_group(positions, count, bounds)
        first, last = (
            sql.SQL("(select {f}({b}.{k}) from {s} {b} where {w})").format(
                f=sql.SQL(function), b=bounds, k=_k(position), s=self.name, w=of_group
            )
            for function in ("min", "max")
        )
        columns = [sql.SQL("{}.k as {}").format(gap, _k(position))]
        for index, aggregate in enumerate(self._aggregates, start=1):
            value = sql.SQL("{}.{}").format(stats, _a(index))
            if aggregate.function in (AggregateFunction.COUNT, AggregateFunction.DISTINCT_COUNT):
                value = sql.SQL("coalesce({}, 0)").format(value)
            columns.append(sql.SQL("{} as {}").format(value, _a(index)))
        return sql.SQL("(select {} from {} {}(k) left join {} {} on {} and {}.{} = {}.k) {}").format(
            sql.SQL(", ").join(columns),
            self._series(key, first, last),
            gap,
            self.name,
            stats,
            self._of_group(positions, count, stats),
            stats,
            _k(position),
            gap,
            alias,
        )

    def _series(self, key: GroupKey, first: sql.Composable, last: sql.Composable) -> sql.Composable:
        if key.form is KeyForm.BINNED:
            assert key.width is not None
            return sql.SQL("generate_series({}, {}, {})").format(first, last, param(key.width))
        assert key.unit is not None
        step = sql.SQL("interval {}").format(sql.Literal(_STEPS[key.unit]))
        if key.type is KeyType.DATE:
            return sql.SQL("(select s::date from generate_series({}::timestamp, {}::timestamp, {}) s)").format(
                first, last, step
            )
        if key.time_zone is not None and key.unit not in ("minute", "hour"):
            # Days and longer step in the zone's local time (a day across a DST change is 23 or 25 hours).
            zone = param(key.time_zone)
            return sql.SQL(
                "(select s at time zone {z} from generate_series({f} at time zone {z}, {l} at time zone {z}, {s}) s)"
            ).format(z=zone, f=first, l=last, s=step)
        return sql.SQL("generate_series({}, {}, {})").format(first, last, step)

    def _aggregate_of(self, aggregate: Aggregate, stats: sql.Composable) -> sql.Composable:
        return sql.SQL("{}.{}").format(stats, _a(self._aggregates.index(aggregate) + 1))

    def _object(
        self, outputs: tuple[AggregateOutput, ...], stats: sql.Identifier, positions: tuple[int, ...] = ()
    ) -> sql.Composable:
        pairs: list[tuple[str, sql.Composable]] = []
        for output in outputs:
            if output.constant is not None:
                pairs.append((output.key, sql.SQL("{}::text").format(sql.Literal(output.constant))))
            elif output.keys:
                keys = [self._key_json(self._keys[p - 1], sql.SQL("{}.{}").format(stats, _k(p))) for p in positions]
                if output.key_names:
                    value = json_object(list(zip(output.key_names, keys, strict=True)))
                else:
                    value = sql.SQL("json_build_array({})").format(sql.SQL(", ").join(keys))
                pairs.append((output.key, value))
            elif output.aggregate is not None:
                pairs.append((output.key, mapped(self._aggregate_of(output.aggregate, stats), output.map)))
            else:
                pairs.append((output.key, self._object(output.members, stats, positions)))
        return json_object(pairs)

    def _key_json(self, key: GroupKey, value: sql.Composable) -> sql.Composable:
        """A key as its JSON value: a timestamp truncated in a time zone of its own as ISO 8601 text with that
        zone's offset (the session's zone writes the others)."""
        if key.time_zone is None:
            return mapped(value, key.map)
        zone = param(key.time_zone)
        local = sql.SQL("({} at time zone {})").format(value, zone)
        offset = sql.SQL("({} - ({} at time zone 'UTC'))").format(local, value)
        return sql.SQL(
            "to_json(to_char({l}, 'YYYY-MM-DD\"T\"HH24:MI:SS')"
            " || case when {o} < interval '0' then to_char({o}, 'HH24:MI') else '+' || to_char({o}, 'HH24:MI') end)"
        ).format(l=local, o=offset)


def key_value(key: GroupKey, table: sql.Composable) -> sql.Composable:
    """A group key of a row of `table`: its column's value, truncated or binned."""
    column = sql.SQL("{}.{}").format(table, sql.Identifier(key.column))
    if key.form is KeyForm.VALUE:
        return column
    if key.form is KeyForm.TRUNCATED:
        assert key.unit is not None
        unit = sql.Literal(key.unit)
        if key.type is KeyType.DATE:
            return sql.SQL("date_trunc({}, {}::timestamp)::date").format(unit, column)
        if key.time_zone is not None:
            return sql.SQL("date_trunc({}, {}, {})").format(unit, column, param(key.time_zone))
        return sql.SQL("date_trunc({}, {})").format(unit, column)
    assert key.width is not None and key.origin is not None
    width, origin = param(key.width), param(key.origin)
    if key.type is KeyType.NUMBER:
        return sql.SQL("(floor(({c}::numeric - {o}) / {w}) * {w} + {o})").format(c=column, o=origin, w=width)
    if key.type is KeyType.DATE:
        return sql.SQL("date_bin({}, {}::timestamp, {})").format(width, column, origin)
    return sql.SQL("date_bin({}, {}, {})").format(width, column, origin)


def _filtered(conditions: list[sql.Composable]) -> sql.Composable:
    if not conditions:
        return sql.SQL("")
    return sql.SQL(" filter (where {})").format(sql.SQL(" and ").join(conditions))


def _flat(outputs: tuple[AggregateOutput, ...]) -> Iterator[AggregateOutput]:
    for output in outputs:
        yield output
        yield from _flat(output.members)


def _aggregates_in(filter_: Filter | None) -> Iterator[Aggregate]:
    """The aggregates a group's condition compares."""
    if isinstance(filter_, (Compare, IsNull)) and isinstance(filter_.expression, AggregateRef):
        yield filter_.expression.aggregate
    elif isinstance(filter_, (And, Or)):
        for item in filter_.items:
            yield from _aggregates_in(item)
    elif isinstance(filter_, Not):
        yield from _aggregates_in(filter_.item)


def _no_call(*_: object) -> sql.Composable:
    raise AssertionError("a group's condition calls no function")


def _k(position: int) -> sql.Identifier:
    return sql.Identifier(f"__k{position}")


def _a(position: int) -> sql.Identifier:
    return sql.Identifier(f"__a{position}")


def _f(position: int) -> sql.Identifier:
    return sql.Identifier(f"__f{position}")
