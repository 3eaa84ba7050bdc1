"""Aggregate requests into plan parts (SPEC "Aggregates", REST "Aggregate request members"): what each member
aggregates and what it answers, the group keys a table offers, and the checks both front ends share.

What a table offers is decided here once, so the GraphQL schema, the REST parser and the OpenAPI document cannot
disagree: `sum`, `avg`, the deviations, variances and percentiles of numeric columns; `min` and `max` of orderable
columns (their own type; booleans false below true, ranges in range order); `distinctCount` of every column with
equality. Group keys: every orderable column, dates and timestamps truncated to a unit, and dates, timestamps and
numbers binned.
"""

import datetime
import decimal
import enum
import functools
import re
import zoneinfo
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from svc.model import AGGREGATE_MEMBERS, Entity, Field, Scalar, TypeNames, ValueKind, ValueType, upper_snake

from ._arguments import Arguments
from ._fields import numeric_fields
from ._ir import (
    Aggregate,
    AggregateFunction,
    AggregateRef,
    And,
    Filter,
    GroupKey,
    KeyForm,
    KeyType,
    Param,
    ValueMapping,
)
from ._mapping import EVERYTHING, Selection, value_map
from ._values import Params, bad_input, scalar

Path = Sequence[str | int]


class AggregateMember(enum.Enum):
    """A member of an aggregates object, named as both APIs name it."""

    SUM = "sum"
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    DISTINCT_COUNT = "distinctCount"
    STDDEV_SAMPLE = "stddevSample"
    STDDEV_POPULATION = "stddevPopulation"
    VARIANCE_SAMPLE = "varianceSample"
    VARIANCE_POPULATION = "variancePopulation"
    MEDIAN = "median"
    PERCENTILE = "percentile"


_STATISTICS = {
    AggregateMember.AVG: AggregateFunction.AVG,
    AggregateMember.STDDEV_SAMPLE: AggregateFunction.STDDEV_SAMPLE,
    AggregateMember.STDDEV_POPULATION: AggregateFunction.STDDEV_POPULATION,
    AggregateMember.VARIANCE_SAMPLE: AggregateFunction.VARIANCE_SAMPLE,
    AggregateMember.VARIANCE_POPULATION: AggregateFunction.VARIANCE_POPULATION,
}
#: Text types with their own min() and max(); other orderable text-like types (uuid, citext, ltree, macaddr) are
#: ordered by their btree order instead.
_TEXT_WITH_MIN = re.compile(r"^(text|character varying|character|varchar|bpchar|name)\b")
_WITH_MIN = frozenset(
    {
        Scalar.INT,
        Scalar.BIG_INT,
        Scalar.FLOAT,
        Scalar.DECIMAL,
        Scalar.DATETIME,
        Scalar.DATE,
        Scalar.TIME,
        Scalar.INTERVAL,
    }
)

#: `<COL>_TRUNCATED_TO_<UNIT>` units (GraphQL) and REST's `column:<unit>` (which adds minute).
TRUNCATION_UNITS = ("minute", "hour", "day", "week", "month", "quarter", "year")
GRAPHQL_UNITS = ("hour", "day", "week", "month", "quarter", "year")

INT = ValueType(ValueKind.SCALAR, Scalar.INT.value, "integer")
FLOAT = ValueType(ValueKind.SCALAR, Scalar.FLOAT.value, "float8")
_BIG_INT = ValueType(ValueKind.SCALAR, Scalar.BIG_INT.value, "bigint")
_DECIMAL = ValueType(ValueKind.SCALAR, Scalar.DECIMAL.value, "numeric")

#: An ISO 8601 duration (`P1D`, `PT15M`, `P1W`); date_bin takes no months or years.
_DURATION = re.compile(
    r"^P(?!$)(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?=\d)(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def member_fields(entity: Entity, member: AggregateMember) -> list[Field]:
    """The columns a member aggregates (empty: the table does not offer it)."""
    if member in (AggregateMember.MIN, AggregateMember.MAX):
        return [f for f in entity.fields if f.orderable and f.type.kind is not ValueKind.COMPOSITE]
    if member is AggregateMember.DISTINCT_COUNT:
        return [f for f in entity.fields if _has_equality(f.type)]
    return numeric_fields(entity)


def member_type(member: AggregateMember, field: Field) -> ValueType:
    """The API type of a member's value for a column (SPEC: sums of integers are BigInt, of BigInt Decimal)."""
    name = field.type.name
    if member in (AggregateMember.MIN, AggregateMember.MAX):
        return field.type
    if member is AggregateMember.DISTINCT_COUNT:
        return INT
    if member is AggregateMember.SUM:
        return {Scalar.INT.value: _BIG_INT, Scalar.FLOAT.value: FLOAT}.get(name, _DECIMAL)
    if member in (AggregateMember.MEDIAN, AggregateMember.PERCENTILE):
        return FLOAT
    return FLOAT if name == Scalar.FLOAT.value else _DECIMAL


def member_function(member: AggregateMember, field: Field) -> AggregateFunction:
    if member in (AggregateMember.MIN, AggregateMember.MAX):
        native = _native_min(field.type)
        if member is AggregateMember.MIN:
            return AggregateFunction.MIN if native else AggregateFunction.FIRST
        return AggregateFunction.MAX if native else AggregateFunction.LAST
    if member is AggregateMember.SUM:
        return AggregateFunction.SUM
    if member is AggregateMember.DISTINCT_COUNT:
        return AggregateFunction.DISTINCT_COUNT
    if member is AggregateMember.MEDIAN:
        return AggregateFunction.MEDIAN
    if member is AggregateMember.PERCENTILE:
        return AggregateFunction.PERCENTILE
    return _STATISTICS[member]


def offered_members(entity: Entity) -> list[AggregateMember]:
    return [member for member in AggregateMember if member_fields(entity, member)]


def member_type_name(names: TypeNames, member: AggregateMember) -> str:
    return names.aggregate_member(member.value)


assert tuple(member.value for member in AggregateMember) == AGGREGATE_MEMBERS, "the model names each member's type"


#: Having compares these aggregates of numeric columns (as Float), and the count (SPEC "Aggregates").
HAVING_MEMBERS = (AggregateMember.SUM, AggregateMember.AVG, AggregateMember.MIN, AggregateMember.MAX)


@attrs.frozen
class GroupValue:
    """A value of `<Type>GroupBy`: a column, truncated to a unit or binned."""

    name: str
    field: Field
    form: KeyForm = KeyForm.VALUE
    unit: str | None = None


def group_values(entity: Entity) -> dict[str, GroupValue]:
    """Every value of `<Type>GroupBy` by name, in SDL order."""
    values: dict[str, GroupValue] = {}
    for field in groupable_fields(entity):
        name = upper_snake(field.name)
        values[name] = GroupValue(name, field)
        type_ = key_type(field)
        if type_ in (KeyType.DATE, KeyType.TIMESTAMP, KeyType.TIMESTAMPTZ):
            for unit in GRAPHQL_UNITS:
                if unit == "hour" and type_ is KeyType.DATE:
                    continue
                truncated = f"{name}_TRUNCATED_TO_{unit.upper()}"
                values[truncated] = GroupValue(truncated, field, KeyForm.TRUNCATED, unit)
        if type_ is not KeyType.OTHER:
            values[f"{name}_BINNED"] = GroupValue(f"{name}_BINNED", field, KeyForm.BINNED)
    return values


def groupable_fields(entity: Entity) -> list[Field]:
    return [f for f in entity.fields if f.orderable and f.type.kind is not ValueKind.COMPOSITE]


def key_type(field: Field) -> KeyType:
    """Whether a column's keys can be truncated (dates and times) or binned (those and numbers)."""
    if field.type.kind is not ValueKind.SCALAR:
        return KeyType.OTHER
    name = field.type.name
    if name == Scalar.DATE.value:
        return KeyType.DATE
    if name == Scalar.DATETIME.value:
        return (
            KeyType.TIMESTAMPTZ
            if "with time zone" in field.type.sql_type or field.type.sql_type == "timestamptz"
            else KeyType.TIMESTAMP
        )
    if name in (Scalar.INT.value, Scalar.BIG_INT.value, Scalar.FLOAT.value, Scalar.DECIMAL.value):
        return KeyType.NUMBER
    return KeyType.OTHER


@attrs.frozen
class KeyOptions:
    """The options of a grouping its truncated and binned keys take: `timeZone`, `binWidth`, `binOrigin` (raw, as
    the client gave them, with the paths errors name)."""

    time_zone: Any = None
    bin_width: Any = None
    bin_origin: Any = None
    time_zone_path: Path = ("timeZone",)
    bin_width_path: Path = ("binWidth",)
    bin_origin_path: Path = ("binOrigin",)


class AggregatePlanner:
    """Aggregates, group keys and group conditions of one request; values go into `params`."""

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.model = arguments.model
        self.params: Params = arguments.params

    def aggregate(
        self,
        member: AggregateMember,
        field: Field,
        filter_: Filter | None,
        *,
        fraction: Any = None,
        fraction_path: Path = ("fraction",),
    ) -> Aggregate:
        function = member_function(member, field)
        bound: Param | None = None
        if function is AggregateFunction.PERCENTILE:
            if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
                raise bad_input(f"fraction must be a number from 0 to 1; got {fraction!r}", fraction_path)
            bound = self.params.add(float(fraction), "float8")
        return Aggregate(function, field.column, bound, filter_)

    def member_map(self, member: AggregateMember, field: Field, selection: Selection = EVERYTHING) -> ValueMapping:
        """How a member's value of a column becomes JSON: as any value of its type (`member_type`)."""
        return value_map(member_type(member, field), self.model, selection)

    def keys(self, values: Sequence[GroupValue], options: KeyOptions, path: Path) -> tuple[GroupKey, ...]:
        """The group keys of `values` (each column once per form), their options checked against their columns."""
        if not values:
            raise bad_input("group by at least one key", path)
        keys: list[GroupKey] = []
        time_zone = None
        for value in values:
            type_ = key_type(value.field)
            key = GroupKey(value.field.column, value_map(value.field.type, self.model), value.form, type_, value.unit)
            if value.form is KeyForm.TRUNCATED and type_ is KeyType.TIMESTAMPTZ and options.time_zone is not None:
                time_zone = time_zone or self._time_zone(options)
                key = attrs.evolve(key, time_zone=time_zone)
            if value.form is KeyForm.BINNED:
                width, origin = self._bins(type_, options)
                key = attrs.evolve(key, width=width, origin=origin)
                if type_ is KeyType.NUMBER:  # bins of numbers are numeric whatever the column's type
                    key = attrs.evolve(key, map=value_map(_DECIMAL, self.model))
            if key not in keys:
                keys.append(key)
        if options.bin_width is not None and not any(k.form is KeyForm.BINNED for k in keys):
            raise bad_input("binWidth is for binned keys; none is grouped by", options.bin_width_path)
        if options.bin_origin is not None and not any(k.form is KeyForm.BINNED for k in keys):
            raise bad_input("binOrigin is for binned keys; none is grouped by", options.bin_origin_path)
        return tuple(keys)

    def _time_zone(self, options: KeyOptions) -> Param:
        zone = options.time_zone
        if not isinstance(zone, str) or not zone or "\x00" in zone or zone not in _time_zones():
            raise bad_input(f"timeZone must be an IANA time zone name (Europe/Paris, UTC); got {zone!r}",
                            options.time_zone_path)  # fmt: skip
        return self.params.add(zone, "text")

    def _bins(self, type_: KeyType, options: KeyOptions) -> tuple[Param, Param]:
        width, origin = options.bin_width, options.bin_origin
        if width is None:
            raise bad_input("a binned key needs binWidth", options.bin_width_path)
        if type_ is KeyType.NUMBER:
            number = scalar(width, Scalar.DECIMAL, options.bin_width_path)
            if number <= 0:
                raise bad_input(f"binWidth must be above 0; got {width!r}", options.bin_width_path)
            start = (
                scalar(origin, Scalar.DECIMAL, options.bin_origin_path) if origin is not None else decimal.Decimal(0)
            )
            return self.params.add(number, "numeric"), self.params.add(start, "numeric")
        interval = _duration(width, options.bin_width_path)
        if origin is None:
            start: Any = "2001-01-01T00:00:00Z" if type_ is KeyType.TIMESTAMPTZ else "2001-01-01T00:00:00"
        else:
            start = scalar(origin, Scalar.DATETIME, options.bin_origin_path)
        sql_type = "timestamptz" if type_ is KeyType.TIMESTAMPTZ else "timestamp"
        return self.params.add(interval, "interval"), self.params.add(start, sql_type)

    def having(
        self, entity: Entity, value: Mapping[str, Any] | None, filter_: Filter | None, path: Path
    ) -> Filter | None:
        """`having`: `count` as an Int filter, `sum`/`avg`/`min`/`max` of numeric columns as Float filters, over the
        group's rows (those of `filter_` too); all must hold."""
        arguments = self.arguments
        if not value:
            return None
        items: list[Filter] = []
        fields = {f.name: f for f in numeric_fields(entity)}
        for name, member in value.items():
            if member is None:
                continue
            if name == "count":
                count = AggregateRef(Aggregate(AggregateFunction.COUNT, filter=filter_))
                items += arguments.operators(count, INT, member, [*path, "count"])
                continue
            kind = AggregateMember(name)
            for field_name, operand in member.items():
                if operand is None:
                    continue
                field = fields[field_name]
                aggregate = AggregateRef(Aggregate(member_function(kind, field), field.column, None, filter_))
                where = [*path, name, arguments.naming.field(entity, field_name)]
                items += arguments.operators(aggregate, FLOAT, operand, where)
        return And(tuple(items)) if len(items) != 1 else items[0]


def _duration(value: Any, path: Path) -> datetime.timedelta:
    """An ISO 8601 duration without months or years (date_bin's stride), as a timedelta above zero."""
    match = _DURATION.match(value) if isinstance(value, str) else None
    if match is None:
        raise bad_input(
            f"binWidth must be an ISO 8601 duration in weeks, days, hours, minutes or seconds (PT15M, P1D); got"
            f" {value!r}",
            path,
        )
    parts = {name: float(amount) for name, amount in match.groupdict().items() if amount is not None}
    width = datetime.timedelta(**parts)
    if width <= datetime.timedelta(0):
        raise bad_input(f"binWidth must be above zero; got {value!r}", path)
    return width


def _has_equality(type_: ValueType) -> bool:
    if type_.kind is ValueKind.COMPOSITE:
        return False
    if type_.kind is ValueKind.LIST:
        return type_.item is not None and _has_equality(type_.item)
    return not (type_.kind is ValueKind.SCALAR and type_.sql_type == "json")


def _native_min(type_: ValueType) -> bool:
    """Whether PostgreSQL has min() and max() of the type (else they are taken in the type's btree order)."""
    if type_.kind is ValueKind.ENUM:
        return True
    if type_.kind is not ValueKind.SCALAR:
        return False
    scalar_ = Scalar(type_.name)
    if scalar_ is Scalar.STRING:
        return bool(_TEXT_WITH_MIN.match(type_.sql_type))
    return scalar_ in _WITH_MIN


@functools.cache
def _time_zones() -> frozenset[str]:
    """The IANA zone names Python knows (PostgreSQL's come from the same database), and UTC; read once."""
    return frozenset(zoneinfo.available_timezones()) | {"UTC"}
