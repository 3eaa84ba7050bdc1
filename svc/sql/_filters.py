"""Filters, related-row conditions and keyset bounds as SQL over a row alias (SPEC "Filter and condition inputs",
"Pagination rules").

Values are placeholders cast to their SQL type (`%(p3)s::integer`); list operands are one array parameter, so the
SQL text does not depend on a list's length. `every` treats a NULL condition as not matching: no related row may
have a condition that is not true.
"""

import re
from collections.abc import Callable, Mapping
from typing import LiteralString

from psycopg import sql
from psycopg.abc import AdaptContext

from svc.plan import (
    Aggregate,
    AggregateRef,
    And,
    Cast,
    ColumnRef,
    Compare,
    ComputedRef,
    Constant,
    Expression,
    Filter,
    IsNull,
    JunctionLink,
    KeyIn,
    KeyPosition,
    Link,
    Not,
    Operator,
    Or,
    OrderItem,
    Param,
    Quantifier,
    Related,
    RelatedAggregate,
    RelatedColumn,
    RelatedCount,
    Table,
)

#: A client's web-search text as a tsquery, made once per statement: a scalar subquery of the parameter, which the
#: database runs once (an InitPlan) and an index condition takes as it takes a constant. Written plainly, a constant
#: tsquery is estimated against the column's statistics at each planning (a read is planned for its values), and
#: `websearch_to_tsquery(text)`, being stable, is parsed and stemmed again for every row.
TS_QUERY_ONCE: LiteralString = "(select websearch_to_tsquery({}))"

#: `{e}` the expression, `{v}` the cast parameter.
_TEMPLATES: Mapping[Operator, LiteralString] = {
    Operator.EQ: "{e} = {v}",
    Operator.NEQ: "{e} <> {v}",
    Operator.DISTINCT: "{e} is distinct from {v}",
    Operator.NOT_DISTINCT: "{e} is not distinct from {v}",
    Operator.IN: "{e} = any({v})",
    Operator.NOT_IN: "not ({e} = any({v}))",
    Operator.LT: "{e} < {v}",
    Operator.LTE: "{e} <= {v}",
    Operator.GT: "{e} > {v}",
    Operator.GTE: "{e} >= {v}",
    Operator.LT_ANY: "{e} < any({v})",
    Operator.LT_ALL: "{e} < all({v})",
    Operator.LTE_ANY: "{e} <= any({v})",
    Operator.LTE_ALL: "{e} <= all({v})",
    Operator.GT_ANY: "{e} > any({v})",
    Operator.GT_ALL: "{e} > all({v})",
    Operator.GTE_ANY: "{e} >= any({v})",
    Operator.GTE_ALL: "{e} >= all({v})",
    Operator.LIKE: "{e} like {v}",
    Operator.NOT_LIKE: "{e} not like {v}",
    Operator.ILIKE: "{e} ilike {v}",
    Operator.NOT_ILIKE: "{e} not ilike {v}",
    Operator.LIKE_ANY: "{e} like any({v})",
    Operator.LIKE_ALL: "{e} like all({v})",
    Operator.ILIKE_ANY: "{e} ilike any({v})",
    Operator.ILIKE_ALL: "{e} ilike all({v})",
    Operator.REGEX: "{e} ~ {v}",
    Operator.NOT_REGEX: "{e} !~ {v}",
    Operator.IREGEX: "{e} ~* {v}",
    Operator.NOT_IREGEX: "{e} !~* {v}",
    Operator.EQ_INSENSITIVE: "lower({e}) = lower({v})",
    Operator.NEQ_INSENSITIVE: "lower({e}) <> lower({v})",
    Operator.IN_INSENSITIVE: "lower({e}) = any(select lower(x) from unnest({v}) x)",
    Operator.NOT_IN_INSENSITIVE: "not (lower({e}) = any(select lower(x) from unnest({v}) x))",
    Operator.CONTAINS: "{e} @> {v}",
    Operator.CONTAINED_BY: "{e} <@ {v}",
    Operator.OVERLAPS: "{e} && {v}",
    Operator.CONTAINS_ELEMENT: "{e} @> {v}",
    Operator.STRICTLY_LEFT: "{e} << {v}",
    Operator.STRICTLY_RIGHT: "{e} >> {v}",
    Operator.NOT_EXTENDS_LEFT: "{e} &> {v}",
    Operator.NOT_EXTENDS_RIGHT: "{e} &< {v}",
    Operator.ADJACENT: "{e} -|- {v}",
    Operator.HAS_KEY: "{e} ? {v}",
    Operator.HAS_ANY_KEYS: "{e} ?| {v}",
    Operator.HAS_ALL_KEYS: "{e} ?& {v}",
    Operator.MATCHES_PATH: "{e} @@ {v}",
    Operator.EXISTS_PATH: "{e} @? {v}",
    Operator.ANY_EQ: "{v} = any({e})",
    Operator.ANY_NEQ: "{v} <> any({e})",
    Operator.ANY_LT: "{v} > any({e})",
    Operator.ANY_LTE: "{v} >= any({e})",
    Operator.ANY_GT: "{v} < any({e})",
    Operator.ANY_GTE: "{v} <= any({e})",
    Operator.LQUERY: "{e} ~ ({v})::lquery",
    Operator.LTXTQUERY: "{e} @ ({v})::ltxtquery",
    Operator.TEXT_SEARCH: "{e} @@ " + TS_QUERY_ONCE.format("{v}"),
    # A GeoJSON operand takes the column's SRID (GeoJSON's own is 4326, which a column of another would refuse).
    Operator.INTERSECTS: "ST_Intersects({e}, ST_SetSRID(ST_GeomFromGeoJSON({v}), ST_SRID({e})))",
    Operator.SPATIAL_CONTAINS: "ST_Contains({e}, ST_SetSRID(ST_GeomFromGeoJSON({v}), ST_SRID({e})))",
    Operator.WITHIN: "ST_Within({e}, ST_SetSRID(ST_GeomFromGeoJSON({v}), ST_SRID({e})))",
    Operator.DISTANCE_WITHIN: (
        "ST_DWithin({e}, ST_SetSRID(ST_GeomFromGeoJSON(({v})::jsonb -> 'near'), ST_SRID({e})),"
        " (({v})::jsonb ->> 'distance')::float8)"
    ),
    Operator.GEOGRAPHY_INTERSECTS: "ST_Intersects({e}, (ST_GeomFromGeoJSON({v}))::geography)",
    Operator.GEOGRAPHY_COVERS: "ST_Covers({e}, (ST_GeomFromGeoJSON({v}))::geography)",
    Operator.GEOGRAPHY_COVERED_BY: "ST_CoveredBy({e}, (ST_GeomFromGeoJSON({v}))::geography)",
    Operator.GEOGRAPHY_DISTANCE_WITHIN: (
        "ST_DWithin({e}, (ST_GeomFromGeoJSON(({v})::jsonb -> 'near'))::geography,"
        " (({v})::jsonb ->> 'distance')::float8)"
    ),
}


#: Aggregates of related rows a filter may compare (their names in SQL).
_AGGREGATES: Mapping[str, LiteralString] = {"sum": "sum", "avg": "avg", "min": "min", "max": "max"}

_WORD = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_MODIFIERS = r"(?:\(-?\d+(?:, ?-?\d+)*\))?"
#: A type as format_type writes it: a name, schema-qualified or not, with its modifiers; one of SQL's names of more
#: than one word; or an interval with its fields. Then the brackets of an array.
_TYPE_NAME = re.compile(
    rf"(?:(?:bit|character) varying{_MODIFIERS}|double precision|(?:time|timestamp){_MODIFIERS} with(?:out)? time zone"
    rf"|interval(?: (?:year|month|day|hour|minute|second)(?: to (?:month|hour|minute|second))?)?{_MODIFIERS}"
    rf"|{_WORD}(?:\.{_WORD})?{_MODIFIERS})(?:\[\])*"
)


class TypeName(sql.Composable):
    """A type for a cast, named as the catalog names it (`integer`, `text[]`, `app_public.genre`,
    `character varying(40)`) and written as it is: psycopg has no piece for it (sql.Identifier would quote `integer`
    into a name no type has, sql.SQL takes literal strings only). Text that is not a type name is refused, so
    nothing else can enter a statement this way."""

    def __init__(self, name: str) -> None:
        if not _TYPE_NAME.fullmatch(name):
            raise ValueError(f"not a type name: {name!r}")
        super().__init__(name)
        self._name = name

    def as_bytes(self, context: AdaptContext | None = None) -> bytes:
        connection = context.connection if context is not None else None
        return self._name.encode(connection.info.encoding if connection is not None else "utf-8")


class Value(sql.Composable):
    """A plan value's placeholder, `%(p3)s`: named, so a value used twice (a filter and its count) binds once. A
    batch of reads (`compile_batch`) finds these pieces and reads each value from its set's column instead."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index
        self._placeholder = sql.Placeholder(f"p{index}")

    def as_bytes(self, context: AdaptContext | None = None) -> bytes:
        return self._placeholder.as_bytes(context)


def param(value: Param) -> sql.Composable:
    """`%(p3)s::integer`."""
    return sql.SQL("{}::{}").format(Value(value.index), TypeName(value.sql_type))


def qualified(table: Table) -> sql.Composable:
    return sql.Identifier(table.schema, table.name)


class Expressions:
    """Writes expressions, filters and keyset bounds over rows; `alias()` hands out fresh, deterministic aliases.

    `call` writes a function call over a table alias (the compiler knows how arguments are passed); `param` writes
    a value (a placeholder, or a `%L` for a text given to format()); `aggregate` writes an aggregate's value where a
    group's condition compares it (over groups already aggregated).
    """

    def __init__(
        self,
        alias: Callable[[], str],
        call: Callable[[ComputedRef, sql.Composable], sql.Composable],
        param: Callable[[Param], sql.Composable] = param,
        aggregate: Callable[[Aggregate, sql.Composable], sql.Composable] | None = None,
    ) -> None:
        self.alias = alias
        self._call = call
        self.param = param
        self._aggregate = aggregate

    def expression(self, expression: Expression, row: sql.Composable) -> sql.Composable:
        if isinstance(expression, ColumnRef):
            return sql.SQL("{}.{}").format(row, sql.Identifier(expression.column))
        if isinstance(expression, ComputedRef):
            return self._call(expression, row)
        if isinstance(expression, KeyPosition):
            same = sql.SQL(" and ").join(
                sql.SQL("k.{c} = {row}.{c}").format(c=sql.Identifier(c), row=row) for c in expression.columns
            )
            return sql.SQL(
                "(select e.n from json_array_elements({}) with ordinality e(v, n)"
                " cross join lateral json_populate_record(null::{}, e.v) k where {} limit 1)"
            ).format(self.param(expression.keys), qualified(expression.table), same)
        if isinstance(expression, AggregateRef):
            assert self._aggregate is not None, "an aggregate compared outside a group's condition"
            return self._aggregate(expression.aggregate, row)
        if isinstance(expression, Cast):
            return sql.SQL("({})::{}").format(
                self.expression(expression.expression, row), TypeName(expression.sql_type)
            )
        if isinstance(expression, RelatedColumn):
            other = sql.Identifier(self.alias())
            return sql.SQL("(select {}.{} from {} {} where {})").format(
                other,
                sql.Identifier(expression.column),
                qualified(expression.table),
                other,
                link_condition(expression.link, row, other),
            )
        other = sql.Identifier(self.alias())
        source, condition = self.related_source(expression.table, expression.link, row, other)
        if isinstance(expression, RelatedAggregate):
            function = sql.SQL(_AGGREGATES[expression.function])
            value = sql.SQL("{}.{}").format(other, sql.Identifier(expression.column))
            return sql.SQL("(select {}({})::float8 from {} where {})").format(function, value, source, condition)
        assert isinstance(expression, RelatedCount)
        return sql.SQL("(select count(*) from {} where {})").format(source, condition)

    def related_source(
        self, table: Table, link: Link | JunctionLink, row: "RowSide", other: sql.Composable
    ) -> tuple[sql.Composable, sql.Composable]:
        """`FROM` items and the condition joining related rows (alias `other`) to `row`."""
        if isinstance(link, Link):
            return sql.SQL("{} {}").format(qualified(table), other), link_condition(link, row, other)
        junction = sql.Identifier(self.alias())
        source = sql.SQL("{} {} join {} {} on {}").format(
            qualified(table),
            other,
            qualified(link.junction),
            junction,
            _pairs(link.target_pairs, junction, other),
        )
        return source, _pairs(link.parent_pairs, row, junction)

    def filter(self, filter_: Filter, row: sql.Composable) -> sql.Composable:
        if isinstance(filter_, Compare):
            template = _TEMPLATES[filter_.operator]
            return sql.SQL("(" + template + ")").format(
                e=self.expression(filter_.expression, row), v=self.param(filter_.value)
            )
        if isinstance(filter_, IsNull):
            check = "is null" if filter_.is_null else "is not null"
            return sql.SQL("({} {})").format(self.expression(filter_.expression, row), sql.SQL(check))
        if isinstance(filter_, And):
            if not filter_.items:
                return sql.SQL("true")
            return sql.SQL("({})").format(sql.SQL(" and ").join(self.filter(i, row) for i in filter_.items))
        if isinstance(filter_, Or):
            if not filter_.items:
                return sql.SQL("false")
            return sql.SQL("({})").format(sql.SQL(" or ").join(self.filter(i, row) for i in filter_.items))
        if isinstance(filter_, Not):
            return sql.SQL("(not {})").format(self.filter(filter_.item, row))
        if isinstance(filter_, Constant):
            return sql.SQL("true" if filter_.value else "false")
        if isinstance(filter_, KeyIn):
            columns = sql.SQL(", ").join(sql.SQL("{}.{}").format(row, sql.Identifier(c)) for c in filter_.columns)
            keys = sql.SQL(", ").join(sql.SQL("k.{}").format(sql.Identifier(c)) for c in filter_.columns)
            return sql.SQL("(({}) in (select {} from json_populate_recordset(null::{}, {}) k))").format(
                columns, keys, qualified(filter_.table), self.param(filter_.keys)
            )
        assert isinstance(filter_, Related)
        return self._related(filter_, row)

    def _related(self, related: Related, row: sql.Composable) -> sql.Composable:
        other = sql.Identifier(self.alias())
        source, condition = self.related_source(related.table, related.link, row, other)
        inner = self.filter(related.filter, other) if related.filter is not None else None
        if related.quantifier is Quantifier.EVERY:
            if inner is None:
                return sql.SQL("true")
            return sql.SQL("(not exists (select from {} where {} and {} is not true))").format(source, condition, inner)
        where = condition if inner is None else sql.SQL("{} and {}").format(condition, inner)
        found = sql.SQL("exists (select from {} where {})").format(source, where)
        return sql.SQL("(not {})").format(found) if related.quantifier is Quantifier.NONE else found

    def keyset(
        self, order: tuple[OrderItem, ...], values: tuple[Param, ...], row: sql.Composable, *, after: bool
    ) -> sql.Composable:
        """Rows strictly past (`after`) or before the cursor's values in the order, none skipped or repeated.

        The order is total (it ends with the key), so the rows past a cursor are those where some order item is
        past its value and every earlier item equals its value. NULLs sort last ascending and first descending
        unless the item says otherwise; an item that cannot be NULL takes the simple comparison.
        """
        terms: list[sql.Composable] = []
        for position, item in enumerate(order):
            equal = [
                _equal(self.expression(o.expression, row), self.param(v), o.nullable)
                for o, v in zip(order[:position], values[:position], strict=True)
            ]
            past = _past(self.expression(item.expression, row), self.param(values[position]), item, after=after)
            terms.append(sql.SQL(" and ").join([*equal, past]))
        return sql.SQL("({})").format(sql.SQL(" or ").join(sql.SQL("({})").format(t) for t in terms))


#: A row to compare with: its alias, or a function writing one of its columns (for texts given to format()).
RowSide = sql.Composable | Callable[[str], sql.Composable]


def where(conditions: list[sql.Composable]) -> sql.Composable:
    """` where` the conditions all hold; nothing when there are none."""
    return sql.SQL(" where {}").format(sql.SQL(" and ").join(conditions)) if conditions else sql.SQL("")


def link_condition(link: Link, parent: RowSide, child: sql.Composable) -> sql.Composable:
    """child.c = parent.p for each pair (p, c)."""
    return _pairs(link.pairs, parent, child)


def _pairs(pairs: tuple[tuple[str, str], ...], left: RowSide, right: sql.Composable) -> sql.Composable:
    def column(name: str) -> sql.Composable:
        return left(name) if callable(left) else sql.SQL("{}.{}").format(left, sql.Identifier(name))

    return sql.SQL(" and ").join(sql.SQL("{}.{} = {}").format(right, sql.Identifier(b), column(a)) for a, b in pairs)


def _equal(expression: sql.Composable, value: sql.Composable, nullable: bool) -> sql.Composable:
    if nullable:
        return sql.SQL("{} is not distinct from {}").format(expression, value)
    return sql.SQL("{} = {}").format(expression, value)


def _past(expression: sql.Composable, value: sql.Composable, item: OrderItem, *, after: bool) -> sql.Composable:
    """`expression` lies strictly past `value` in the item's order (before it when not `after`)."""
    greater = item.descending != after  # reading forward on an ascending item: greater values come after
    operator = sql.SQL(">" if greater else "<")
    if not item.nullable:
        return sql.SQL("{} {} {}").format(expression, operator, value)
    nulls_come_later = item.nulls_first != after  # forward with NULLs last: NULLs lie past every value
    if nulls_come_later:
        return sql.SQL("({v} is not null and ({e} {op} {v} or {e} is null))").format(e=expression, v=value, op=operator)
    return sql.SQL("(({v} is null and {e} is not null) or {e} {op} {v})").format(e=expression, v=value, op=operator)
