"""Field arguments into plan parts: `filter`, `condition`, `orderBy`, and the page (`first`, `last`, `offset`,
`after`, `before`) (SPEC "Filter and condition inputs", "orderBy", "Pagination rules", "Limits").

Bad input is refused here, before any SQL: LIKE patterns ending in the escape character, cursors the connection did
not issue, negative page sizes (BAD_USER_INPUT), and pages over `limits.page_size.max` (PAGE_SIZE_EXCEEDED with
`limit` and `actual`). An error's path is built from the names in the value walked, as the front end's `Naming` says
(GraphQL's by default: `filter.title.like`; REST's: `filter[title][like]`).
"""

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import attrs

from svc.config import LimitsConfig
from svc.errors import Code, SvcError
from svc.model import Argument as FunctionArgument
from svc.model import Cardinality, Entity, Field, Model, Relation, Scalar, ValueKind, ValueType

from ._cursors import decode_cursor
from ._fields import AGGREGATES, EntityIndex, FieldKind, OrderKind, OrderValue
from ._ir import (
    And,
    Argument,
    Cast,
    ColumnRef,
    Compare,
    ComputedRef,
    Constant,
    Expression,
    Filter,
    FunctionCall,
    IsNull,
    JunctionLink,
    Link,
    Not,
    Or,
    OrderItem,
    Page,
    Param,
    Quantifier,
    Related,
    RelatedAggregate,
    RelatedColumn,
    RelatedCount,
)
from ._ir import Operator as Op
from ._naming import GRAPHQL_NAMING, Naming, rendered
from ._operators import (
    FilterOperator,
    Operand,
    Special,
    enum_operators,
    list_operators,
    range_operators,
    scalar_operators,
    special_of,
    special_operators,
)
from ._search import check_geojson
from ._values import Params, bad_input, coerce, text
from ._write_inputs import table

Path = Sequence[str | int]


@attrs.frozen
class Order:
    """A total order (the key appended), the SQL types of its values (for cursors), and its signature."""

    items: tuple[OrderItem, ...]
    types: tuple[str, ...]
    signature: str
    #: Whether the order is total (it ends with the key): keyset cursors need it; otherwise they hold positions.
    total: bool = True
    #: How many of the items the orderBy gave (the rest is the key appended): ranks compare these.
    given: int = 0


def link_of(relation: Relation, model: Model) -> Link | JunctionLink:
    """How the relation's rows hang from this entity's row."""
    if relation.kind is Cardinality.MANY_TO_MANY:
        assert relation.junction is not None
        junction = model.entity(relation.junction)
        return JunctionLink(table(junction), relation.pairs, relation.junction_pairs)
    return Link(relation.pairs)


class Arguments:
    """Plans the arguments of one operation; values go into `params`; errors name paths as `naming` says."""

    def __init__(
        self, model: Model, index: EntityIndex, limits: LimitsConfig, params: Params, naming: Naming = GRAPHQL_NAMING
    ) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.params = params
        self.naming = naming

    def _at(self, path: Path) -> tuple[str, ...]:
        return rendered(self.naming, path)

    # --- filter ------------------------------------------------------------------------------------------------

    def filter(self, entity: Entity, value: Mapping[str, Any] | None, path: Path) -> Filter | None:
        """`<Type>Filter`: every member must hold; `and`, `or`, `not` combine; null members are ignored."""
        if value is None:
            return None
        items: list[Filter] = []
        fields = self.index.fields(entity)
        for name, member in value.items():
            if member is None:
                continue
            if name in ("and", "or"):
                members = (self.filter(entity, v, [*path, name, i]) for i, v in enumerate(member))
                combined = tuple(f for f in members if f is not None)
                items.append(And(combined) if name == "and" else Or(combined))
            elif name == "not":
                inner = self.filter(entity, member, [*path, name])
                if inner is not None:
                    items.append(Not(inner))
            else:
                where = [*path, self.naming.field(entity, name)]
                meaning = fields[name]
                if meaning.kind is FieldKind.COLUMN:
                    assert meaning.field is not None
                    items += self.operators(_column(meaning.field), meaning.field.type, member, where)
                elif meaning.kind is FieldKind.COMPUTED:
                    assert meaning.computed is not None and meaning.computed.returns.type is not None
                    call = FunctionCall(meaning.computed.schema, meaning.computed.function, row_argument=True)
                    items += self.operators(ComputedRef(call), meaning.computed.returns.type, member, where)
                else:
                    assert meaning.relation is not None
                    items.append(self._related(meaning.relation, member, where))
        return And(tuple(items)) if len(items) != 1 else items[0]

    def _related(self, relation: Relation, value: Mapping[str, Any], path: Path) -> Filter:
        target = self.model.entity(relation.target)
        link = link_of(relation, self.model)
        if relation.kind is Cardinality.TO_ONE:
            return Related(table(target), link, Quantifier.SOME, self.filter(target, value, path))
        items: list[Filter] = []
        for name, quantifier in (("some", Quantifier.SOME), ("every", Quantifier.EVERY), ("none", Quantifier.NONE)):
            if value.get(name) is not None:
                inner = self.filter(target, value[name], [*path, name])
                items.append(Related(table(target), link, quantifier, inner))
        if value.get("count") is not None:
            count = RelatedCount(table(target), link)
            integer = ValueType(ValueKind.SCALAR, Scalar.INT.value, "bigint")
            items += self.operators(count, integer, value["count"], [*path, "count"])
        fields = self.index.fields(target)
        number = ValueType(ValueKind.SCALAR, Scalar.FLOAT.value, "float8")
        for function in AGGREGATES:
            members: Mapping[str, Any] = value.get(function) or {}
            for name, member in members.items():
                if member is not None:
                    field = fields[name].field
                    assert field is not None
                    aggregate = RelatedAggregate(table(target), link, function, field.column)
                    where = [*path, function, self.naming.field(target, name)]
                    items += self.operators(aggregate, number, member, where)
        return And(tuple(items)) if len(items) != 1 else items[0]

    def operators(self, expression: Expression, type_: ValueType, value: Mapping[str, Any], path: Path) -> list[Filter]:
        operators = {op.name: op for op in _operators_of(type_)}
        if type_.kind is ValueKind.SCALAR and type_.sql_type == "json":
            expression = Cast(expression, "jsonb")  # json has no equality or containment: compare as jsonb
            type_ = attrs.evolve(type_, sql_type="jsonb")
        items: list[Filter] = []
        for name, operand in value.items():
            if operand is None:
                continue
            operator = operators[name]
            if operator.plan is None:  # isNull
                items.append(IsNull(expression, bool(operand)))
                continue
            where = [*path, self.naming.operator(name)]
            items.append(self._compare(expression, type_, operator, operand, where))
        return items

    def _compare(
        self,
        expression: Expression,
        type_: ValueType,
        operator: FilterOperator,
        operand: Any,
        path: Path,
    ) -> Filter:
        plan = operator.plan
        assert plan is not None
        if operator.operand in (Operand.VALUES, Operand.STRINGS, Operand.ITEMS) and not operand:
            if plan in (
                Op.IN,
                Op.IN_INSENSITIVE,
                Op.LIKE_ANY,
                Op.ILIKE_ANY,
                Op.LT_ANY,
                Op.LTE_ANY,
                Op.GT_ANY,
                Op.GTE_ANY,
            ):
                return Constant(False)  # nothing to be equal to
            if plan in (Op.NOT_IN, Op.NOT_IN_INSENSITIVE):
                return Constant(True)
        convert, sql_type = self._operand(type_, operator, path)
        return Compare(expression, plan, self.params.bind(operand, convert, sql_type))

    def _operand(self, type_: ValueType, operator: FilterOperator, path: Path) -> tuple[Callable[[Any], Any], str]:
        """How an operator's operand is converted for binding (a pure function of the operand), and its SQL type."""
        kind = operator.operand
        at = self._at(path)
        if operator.pattern is not None:
            pattern = operator.pattern
            return (lambda operand: pattern.format(escape_like(text(operand, at)))), "text"
        if operator.plan in (Op.LIKE, Op.NOT_LIKE, Op.ILIKE, Op.NOT_ILIKE):
            return (lambda operand: like_pattern(operand, at)), "text"
        if operator.plan in (Op.LIKE_ANY, Op.LIKE_ALL, Op.ILIKE_ANY, Op.ILIKE_ALL):
            return (lambda operand: [like_pattern(p, self._at([*path, i])) for i, p in enumerate(operand)]), "text[]"
        if kind is Operand.STRING:
            paths = operator.plan in (Op.MATCHES_PATH, Op.EXISTS_PATH)
            return (lambda operand: text(operand, at)), "jsonpath" if paths else "text"
        if kind is Operand.STRINGS:
            return (lambda operand: [text(v, self._at([*path, i])) for i, v in enumerate(operand)]), "text[]"
        if kind in (Operand.GEOMETRY, Operand.DISTANCE):
            return (lambda operand: self._geometry(type_, kind, operand, path)), "text"
        if special_of(type_) is Special.MULTIRANGE:  # compared with a range, or with a value of its ranges
            assert type_.item is not None
            range_type = type_.item
            if kind is Operand.ITEM:
                return self._converter(self._bound(range_type), path)
            return self._converter(range_type, path)
        if type_.kind is ValueKind.LIST:
            assert type_.item is not None
            return self._converter(type_.item if kind is Operand.ITEM else type_, path)
        if type_.kind is ValueKind.RANGE and kind is Operand.ITEM:
            return self._converter(self._bound(type_), path)
        if kind is Operand.VALUES:
            return (lambda operand: [self._value(v, type_, [*path, i]) for i, v in enumerate(operand)]), (
                f"{type_.sql_type}[]"
            )
        return self._converter(type_, path)

    def _converter(self, type_: ValueType, path: Path) -> tuple[Callable[[Any], Any], str]:
        """A client's value of `type_` at `path`, as bound (`_value`), and its SQL type."""
        return functools.partial(self._value, type_=type_, path=path), type_.sql_type

    def _geometry(self, type_: ValueType, kind: Operand, operand: Any, path: Path) -> str:
        """A spatial operand as GeoJSON text, checked as nearest search checks it: a geometry, or
        `{near: <geometry>, distance: <number of at least 0>}`."""
        geography = special_of(type_) is Special.GEOGRAPHY
        if kind is Operand.GEOMETRY:
            check_geojson(operand, geography, self._at(path))
            return json.dumps(operand)
        if not isinstance(operand, Mapping) or set(cast("Mapping[str, Any]", operand)) != {"near", "distance"}:
            raise bad_input("distanceWithin takes {near: <GeoJSON geometry>, distance: <number>}", self._at(path))
        given = cast("Mapping[str, Any]", operand)
        check_geojson(given["near"], geography, self._at([*path, "near"]))
        distance = given["distance"]
        if isinstance(distance, bool) or not isinstance(distance, (int, float)) or not 0 <= distance < math.inf:
            raise bad_input(f"distance must be a finite number of at least 0; got {distance!r}", self._at(path))
        return json.dumps({"near": given["near"], "distance": distance})

    def _value(self, value: Any, type_: ValueType, path: Path) -> Any:
        """A client's value of an API type, as bound (`coerce`). The items of a list and the bounds of a range are
        checked at their own paths first, so the front end names them (REST's paths end at the URL parameter)."""
        if value is None:
            return None
        if type_.kind is ValueKind.LIST:
            assert type_.item is not None
            items = cast("list[Any]", value) if isinstance(value, list) else [value]  # a single value where a list goes
            return [self._value(item, type_.item, [*path, i]) for i, item in enumerate(items)]
        if type_.kind is ValueKind.RANGE and isinstance(value, Mapping):
            for side, bound in cast("Mapping[str, Any]", value).items():
                if side in ("start", "end") and isinstance(bound, Mapping) and "value" in bound:
                    self._value(cast("Mapping[str, Any]", bound)["value"], self._bound(type_), [*path, side, "value"])
        return coerce(value, type_, self.model, self._at(path))

    def _bound(self, type_: ValueType) -> ValueType:
        return next(r.bound for r in self.model.ranges if r.name == type_.name)

    # --- condition ---------------------------------------------------------------------------------------------

    def condition(self, entity: Entity, value: Mapping[str, Any] | None, path: Path) -> Filter | None:
        """`<Type>Condition`: each member equal to its value (null: IS NULL); all must hold."""
        if not value:
            return None
        items: list[Filter] = []
        fields = self.index.fields(entity)
        for name, member in value.items():
            field = fields[name].field
            assert field is not None
            expression: Expression = _column(field)
            sql_type = field.type.sql_type
            if sql_type == "json":
                expression, sql_type = Cast(expression, "jsonb"), "jsonb"
            if member is None:
                items.append(IsNull(expression, True))
            else:
                convert, _ = self._converter(field.type, [*path, self.naming.field(entity, name)])
                items.append(Compare(expression, Op.EQ, self.params.bind(member, convert, sql_type)))
        return And(tuple(items)) if len(items) != 1 else items[0]

    # --- order -------------------------------------------------------------------------------------------------

    def order(self, entity: Entity, names: Sequence[str] | None, *, default_key: bool = True) -> Order:
        """The orderBy items, followed by the primary key columns they leave out, so the order is total.

        No orderBy orders by the key (when `default_key`: tables; function results keep their own order).
        """
        values = self.index.orders(entity)
        given = list(names or ())
        items: list[OrderItem] = []
        types: list[str] = []
        for name in given:
            for item, sql_type in self._order_items(entity, values[name]):
                if item.expression not in [i.expression for i in items]:
                    items.append(item)
                    types.append(sql_type)
        from_order_by = len(items)
        if given or default_key:
            for column in entity.primary_key or ():
                expression = ColumnRef(column)
                if expression not in [i.expression for i in items]:
                    items.append(OrderItem(expression, nullable=False))
                    types.append(_column_type(entity, column))
        signature = f"{entity.type_name}:{','.join(given) or 'PRIMARY_KEY_ASC'}"
        total = bool(entity.primary_key) and bool(given or default_key)
        if not total:
            # Ties or no order values at all (a view without a key, a function's own order): keyset cursors would
            # skip or repeat rows, so cursors hold the row's position instead (`connection_page`).
            signature = f"{entity.type_name}:{','.join(given) or 'SOURCE'}:POSITION"
        return Order(tuple(items), tuple(types), signature, total, from_order_by)

    def _order_items(self, entity: Entity, order: OrderValue) -> list[tuple[OrderItem, str]]:
        kind, descending, nulls_first = order.kind, order.descending, order.nulls_first
        if kind is OrderKind.NATURAL:
            return []
        if kind is OrderKind.PRIMARY_KEY:
            return [
                (OrderItem(ColumnRef(c), descending, descending, nullable=False), _column_type(entity, c))
                for c in entity.primary_key or ()
            ]
        if kind is OrderKind.FIELD:
            field = order.field
            assert field is not None
            return [(OrderItem(_column(field), descending, nulls_first, field.nullable), field.type.sql_type)]
        if kind is OrderKind.RELATED_FIELD:
            relation, field = order.relation, order.field
            assert relation is not None and field is not None
            link = link_of(relation, self.model)
            assert isinstance(link, Link)  # a to-one relation
            expression = RelatedColumn(table(self.model.entity(relation.target)), link, field.column)
            return [(OrderItem(expression, descending, nulls_first, True), field.type.sql_type)]
        if kind is OrderKind.RELATED_COUNT:
            relation = order.relation
            assert relation is not None
            count = RelatedCount(table(self.model.entity(relation.target)), link_of(relation, self.model))
            return [(OrderItem(count, descending, descending, False), "bigint")]
        computed = order.computed
        assert computed is not None and computed.returns.type is not None
        call = FunctionCall(computed.schema, computed.function, row_argument=True)
        return [(OrderItem(ComputedRef(call), descending, nulls_first, True), computed.returns.type.sql_type)]

    # --- function calls ------------------------------------------------------------------------------------

    def call(
        self,
        declared: Sequence[FunctionArgument],
        given: Mapping[str, Any],
        path: Path,
        from_columns: Mapping[str, str] | None = None,
    ) -> tuple[Argument, ...]:
        """Arguments by name; an omitted one takes its default, or NULL when it has none. Unnamed arguments go
        by position, up to the last one given."""
        arguments: list[Argument] = []
        for name, column in (from_columns or {}).items():
            sql_name = next((a.sql_name for a in declared if a.name == name), None)
            arguments.append(Argument(sql_name or name, ColumnRef(column)))
        positional = [a for a in declared if a.sql_name is None]
        last_given = max((i for i, a in enumerate(positional) if a.name in given), default=-1)
        for argument in declared:
            if argument.sql_name is None:
                if positional.index(argument) > last_given:
                    continue
            elif argument.name not in given and not argument.required:
                continue
            convert, sql_type = self._converter(argument.type, [*path, argument.name])
            arguments.append(Argument(argument.sql_name, self.params.bind(given.get(argument.name), convert, sql_type)))
        arguments.sort(key=lambda a: a.name is not None)  # positional first
        return tuple(arguments)

    # --- pages -------------------------------------------------------------------------------------------------

    def list_page(self, arguments: Mapping[str, Any], path: Path) -> tuple[Page, int]:
        """A plain list's rows: `first` (at most `page_size.max`; without it, cut there) and `offset`."""
        first = self._size(arguments.get("first"), "first", path)
        limit = first if first is not None else self.limits.page_size.max
        page = Page(
            limit=self.params.add(limit, "bigint") if limit is not None else None,
            offset=self._offset(arguments.get("offset"), path),
        )
        return page, limit if limit is not None else 1000

    def connection_page(self, arguments: Mapping[str, Any], order: Order, path: Path) -> tuple[Page, int]:
        """SPEC "Pagination rules": first/after forward, last/before backward, both (the last of the first),
        offset past the cursor, the default page size without either."""
        first = self._size(arguments.get("first"), "first", path)
        last = self._size(arguments.get("last"), "last", path)
        if not order.total:
            return self._positional_page(arguments, order, path, first, last)
        after = self._cursor(arguments.get("after"), order, [*path, "after"])
        before = self._cursor(arguments.get("before"), order, [*path, "before"])
        offset = self._offset(arguments.get("offset"), path)
        if first is None and last is None:
            default = self.limits.page_size.default
            first = default if default is not None else self.limits.page_size.max
        backward = last is not None and first is None
        size = last if backward else first
        page = Page(
            limit=self.params.add(size, "bigint") if size is not None else None,
            offset=offset,
            backward=backward,
            after=after,
            before=before,
            tail=self.params.add(last, "bigint") if (first is not None and last is not None) else None,
        )
        return page, size if size is not None else 1000

    def _positional_page(
        self, arguments: Mapping[str, Any], order: Order, path: Path, first: int | None, last: int | None
    ) -> tuple[Page, int]:
        """A page of rows in an order that is not total (no key to end it, or no order but the source's): cursors
        hold positions (1 for the first row), so `after`, `before` and `offset` become one window of positions,
        read as limit and offset. `last` needs `before` here: there is no end to read back from."""
        after = self._position(arguments.get("after"), order, [*path, "after"])
        before = self._position(arguments.get("before"), order, [*path, "before"])
        offset: int = arguments.get("offset") or 0
        if offset < 0:
            raise bad_input(f"offset must not be negative; got {offset}", self._at([*path, "offset"]))
        if last is not None and first is None and before is None:
            raise bad_input(
                "last needs before (or an order) on a list in its source's order", self._at([*path, "last"])
            )
        if first is None and last is None:
            default = self.limits.page_size.default
            first = default if default is not None else self.limits.page_size.max
        low = (after or 0) + 1  # the window of positions the cursors leave
        high = before - 1 if before is not None else None
        if first is not None:
            start = low + offset
            count = first if high is None else max(0, min(first, high - start + 1))
            if last is not None:
                start, count = start + max(0, count - last), min(count, last)
        else:
            assert last is not None and high is not None
            end = high - offset
            start = max(low, end - last + 1)
            count = max(0, end - start + 1)
        size = first if first is not None else last
        assert size is not None
        page = Page(
            limit=self.params.add(count, "bigint"),
            offset=self.params.add(start - 1, "bigint") if start > 1 else None,
            positions=True,
        )
        return page, size

    def _position(self, value: Any, order: Order, path: Path) -> int | None:
        if value is None:
            return None
        values = decode_cursor(value, order.signature, 1)
        position = values[0] if values is not None else None
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            raise bad_input("this cursor was not issued by this connection for this orderBy", self._at(path))
        return position

    def _size(self, value: Any, name: str, path: Path) -> int | None:
        if value is None:
            return None
        if value < 0:
            raise bad_input(f"{name} must not be negative; got {value}", self._at([*path, name]))
        maximum = self.limits.page_size.max
        if maximum is not None and value > maximum:
            raise SvcError(
                Code.PAGE_SIZE_EXCEEDED,
                f"{name} is {value}, more than the largest page ({maximum})",
                extensions={"limit": maximum, "actual": value},
            )
        return int(value)

    def _offset(self, value: Any, path: Path) -> Param | None:
        if value is None:
            return None
        if value < 0:
            raise bad_input(f"offset must not be negative; got {value}", self._at([*path, "offset"]))
        return self.params.add(int(value), "bigint")

    def _cursor(self, value: Any, order: Order, path: Path) -> tuple[Param, ...] | None:
        if value is None:
            return None
        values = decode_cursor(value, order.signature, len(order.items))
        if values is None:
            raise bad_input("this cursor was not issued by this connection for this orderBy", self._at(path))
        return tuple(self.params.add(_cursor_value(v), t) for v, t in zip(values, order.types, strict=True))


def escape_like(value: str) -> str:
    """A text matched literally inside a LIKE pattern (`\\`, `%` and `_` escaped with the default escape `\\`)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def like_pattern(value: Any, path: Path) -> str:
    """A client's LIKE pattern; one ending in an unpaired escape character is refused (SPEC "Errors")."""
    pattern = text(value, path)
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if trailing % 2 == 1:
        raise bad_input("a LIKE pattern may not end with the escape character \\", path)
    return pattern


def _operators_of(type_: ValueType) -> tuple[FilterOperator, ...]:
    special = special_of(type_)
    if special is not None:
        return special_operators(special)
    if type_.kind is ValueKind.LIST:
        return list_operators()
    if type_.kind is ValueKind.ENUM:
        return enum_operators()
    if type_.kind is ValueKind.RANGE:
        return range_operators()
    return scalar_operators(Scalar(type_.name))


def _column(field: Field) -> ColumnRef:
    return ColumnRef(field.column)


def _column_type(entity: Entity, column: str) -> str:
    field = entity.field_of_column(column)
    return field.type.sql_type if field is not None else "text"


def _cursor_value(value: Any) -> Any:
    """A cursor's JSON value as a parameter: JSON objects and arrays (JSON columns) go back as JSON text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value
