"""How a value of an API type becomes its JSON (SPEC "Scalars and value mapping"): BigInt and Decimal as strings,
enums as their GraphQL values, ranges as `{start: {value, inclusive}, end: {...}}`, composites as objects of their
attributes. Both front ends map values here; they differ only in which members of a composite or a range they
select (GraphQL: the selection set; REST: every member), which a `Selection` says.
"""

from typing import Protocol

import attrs

from svc.catalog import RelationKind
from svc.model import CompositeType, Entity, Field, Model, RangeType, Scalar, ValueKind, ValueType

from ._ir import AttributeOutput, CompositeMap, EnumMap, RangeMap, RowVersionOutput, Shape, ValueMap, ValueMapping


class Selection(Protocol):
    """Which members of a composite or range value are wanted, under which keys."""

    def attributes(self, composite: CompositeType) -> list[tuple[str, Field, "Selection"]]:
        """(key, attribute, its own selection) of each attribute wanted, in order."""
        ...

    def range_keys(self, range_type: RangeType) -> tuple[str | None, str | None, str | None, str | None]:
        """The keys of `start`, `end`, and of a bound's `value` and `inclusive` (None: not wanted)."""
        ...


class Everything:
    """Every member under its API name (REST rows, payloads of rows given as JSON)."""

    def attributes(self, composite: CompositeType) -> list[tuple[str, Field, Selection]]:
        return [(field.name, field, self) for field in composite.fields]

    def range_keys(self, range_type: RangeType) -> tuple[str | None, str | None, str | None, str | None]:
        return "start", "end", "value", "inclusive"


EVERYTHING = Everything()


#: The mappings of scalars by name, other than AS_IS (String's depends on its SQL type).
_SCALAR_MAPS = {
    Scalar.BIG_INT.value: ValueMap.TEXT,
    Scalar.DECIMAL.value: ValueMap.TEXT,
    Scalar.INT.value: ValueMap.NUMBER,
    Scalar.FLOAT.value: ValueMap.NUMBER,
    Scalar.BOOLEAN.value: ValueMap.PLAIN,
    Scalar.UUID.value: ValueMap.PLAIN,
    Scalar.DATE.value: ValueMap.PLAIN,
    Scalar.DATETIME.value: ValueMap.PLAIN,
    Scalar.TIME.value: ValueMap.PLAIN,
}
#: AS_IS mappings that say more of a single value (its CSV cell): a list of such values is AS_IS.
_SCALAR_FORMS = frozenset({ValueMap.STRING, ValueMap.NUMBER, ValueMap.PLAIN})


def value_map(type_: ValueType, model: Model, selection: Selection = EVERYTHING) -> ValueMapping:
    """The mapping of a value of `type_`, its composite and range members as `selection` wants them."""
    kind = type_.kind
    if kind is ValueKind.LIST:
        assert type_.item is not None
        item = value_map(type_.item, model, selection)
        if item is ValueMap.TEXT:
            return ValueMap.TEXT_ARRAY
        if isinstance(item, EnumMap | RangeMap):
            return attrs.evolve(item, array=True)
        return ValueMap.AS_IS if item in _SCALAR_FORMS else item
    if kind is ValueKind.ENUM:
        differing = tuple((label, value) for label, value in model.enum(type_.name).values if label != value)
        return EnumMap(differing) if differing else ValueMap.AS_IS
    if kind is ValueKind.SCALAR:
        if type_.name == Scalar.STRING.value:
            own_text = type_.sql_type == "text" or type_.sql_type.startswith("character varying")
            return ValueMap.STRING if own_text else ValueMap.AS_IS
        return _SCALAR_MAPS.get(type_.name, ValueMap.AS_IS)
    if kind is ValueKind.RANGE:
        range_type = next(r for r in model.ranges if r.name == type_.name)
        bound = value_map(range_type.bound, model)
        assert isinstance(bound, ValueMap | EnumMap)
        return RangeMap(*selection.range_keys(range_type), bound)
    composite = next(c for c in model.composites if c.name == type_.name)
    outputs = tuple(
        AttributeOutput(key, field.column, value_map(field.type, model, inner))
        for key, field, inner in selection.attributes(composite)
    )
    return CompositeMap(outputs)


def row_version(key: str, entity: Entity) -> RowVersionOutput:
    """SPEC "Fields present on generated types": the version column, else the system transaction id (tables)."""
    if entity.version_column is not None:
        return RowVersionOutput(key, entity.version_column, system=False)
    system = entity.kind in (RelationKind.TABLE, RelationKind.PARTITIONED_TABLE) and entity.system_version
    return RowVersionOutput(key, None, system=system)


def without_versions(shape: Shape) -> Shape:
    """Rows as they were (given as JSON: previous or deleted rows) have no version: `rowVersion` is null in them
    (SPEC "Fields present on generated types"), even where a version column held one."""
    outputs = tuple(
        RowVersionOutput(o.key, None, system=False) if isinstance(o, RowVersionOutput) else o for o in shape.outputs
    )
    return attrs.evolve(shape, outputs=outputs)
