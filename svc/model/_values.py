"""Database types to API value types (SPEC "Scalars and value mapping"), and the enum, composite and range types
the exposed columns, arguments and results use.

64-bit integers are BigInt and numeric is Decimal (both JSON strings); uuid is UUID; timestamps are Datetime; json
and jsonb are JSON; arrays are lists; enums are GraphQL enums with their labels mapped to valid names (`PG-13` ->
`PG_13`, overridable with `types.<enum>.values`); composite types get an object type and an `<Name>Input`; ranges get
`<Bound>Range` types. A domain is its base type. Types with no better mapping (inet, tsvector, bytea, ...) are
String: their text form.
"""

from collections.abc import Callable, Mapping

from svc.catalog import Catalog, PgType, TypeKind
from svc.config import TypeConfig

from ._entities import CompositeType, EnumType, Field, RangeType, Scalar, ValueKind, ValueType
from ._hints import read_hints
from ._naming import camel, enum_value, pascal

_SCALARS: Mapping[str, Scalar] = {
    "int2": Scalar.INT,
    "int4": Scalar.INT,
    "int8": Scalar.BIG_INT,
    "oid": Scalar.BIG_INT,
    "float4": Scalar.FLOAT,
    "float8": Scalar.FLOAT,
    "numeric": Scalar.DECIMAL,
    "bool": Scalar.BOOLEAN,
    "uuid": Scalar.UUID,
    "timestamptz": Scalar.DATETIME,
    "timestamp": Scalar.DATETIME,
    "date": Scalar.DATE,
    "time": Scalar.TIME,
    "timetz": Scalar.TIME,
    "interval": Scalar.INTERVAL,
    "json": Scalar.JSON,
    "jsonb": Scalar.JSON,
}
#: Range types of the built-in subtypes are named after the subtype's scalar.
_RANGE_NAMES: Mapping[Scalar, str] = {
    Scalar.INT: "IntRange",
    Scalar.BIG_INT: "BigIntRange",
    Scalar.DECIMAL: "DecimalRange",
    Scalar.FLOAT: "FloatRange",
    Scalar.DATETIME: "DatetimeRange",
    Scalar.DATE: "DateRange",
    Scalar.TIME: "TimeRange",
}
#: Scalars whose values PostgreSQL cannot order meaningfully for an API (`ORDER BY json` is an error).
_UNORDERABLE = frozenset({Scalar.JSON})


class UnsupportedType(Exception):
    """A pseudo-type (record, trigger, anyelement, ...) has no API type."""


class TypeMapper:
    """Maps type oids to value types, collecting the enums, composites and ranges used along the way.

    `type_name` resolves a database type's GraphQL name (config, then hint, then derived); `check_enum` registers
    a text column closed by a CHECK IN-list as an enum of its own.
    """

    def __init__(
        self,
        catalog: Catalog,
        configs: Mapping[str, TypeConfig],
        type_name: Callable[[PgType], str],
    ) -> None:
        self._catalog = catalog
        self._configs = configs
        self._type_name = type_name
        self.enums: dict[int | str, EnumType] = {}
        self.composites: dict[int, CompositeType] = {}
        self.ranges: dict[int, RangeType] = {}

    def value_type(self, oid: int) -> ValueType:
        pg = self._catalog.type(oid)
        kind = pg.kind
        if kind is TypeKind.DOMAIN:
            assert pg.base_oid is not None
            return self.value_type(pg.base_oid)
        if pg.category == "A" and pg.element_oid:
            item = self.value_type(pg.element_oid)
            return ValueType(ValueKind.LIST, item.name, pg.sql_name, item=item)
        if kind is TypeKind.ENUM:
            return ValueType(ValueKind.ENUM, self._enum(pg).name, pg.sql_name)
        if kind is TypeKind.COMPOSITE and pg.relation_oid is None:
            return ValueType(ValueKind.COMPOSITE, self._composite(pg).name, pg.sql_name)
        if kind is TypeKind.RANGE:
            return ValueType(ValueKind.RANGE, self._range(pg).name, pg.sql_name)
        if kind is TypeKind.MULTIRANGE and pg.multirange_range_oid:
            item = self.value_type(pg.multirange_range_oid)
            return ValueType(ValueKind.LIST, item.name, pg.sql_name, item=item, item_nullable=False)
        if kind is TypeKind.PSEUDO or (kind is TypeKind.COMPOSITE and pg.relation_oid is not None):
            raise UnsupportedType(pg.sql_name)
        scalar = _SCALARS.get(pg.name, Scalar.STRING) if pg.schema == "pg_catalog" else Scalar.STRING
        return ValueType(ValueKind.SCALAR, scalar.value, pg.sql_name)

    def orderable(self, value: ValueType) -> bool:
        if value.kind is ValueKind.SCALAR:
            return Scalar(value.name) not in _UNORDERABLE
        return value.kind in (ValueKind.ENUM, ValueKind.RANGE)

    def check_enum(self, entity_type: str, table: str, field: str, column: str, values: tuple[str, ...]) -> ValueType:
        """The enum of a text column closed by a CHECK IN-list: `<Type><Field>`, or `types.<table>.<column>`."""
        config = self._configs.get(f"{table}.{column}", TypeConfig())
        name = config.type_name or f"{entity_type}{pascal(field)}"
        key = f"{table}.{column}"
        if key not in self.enums:
            labels = tuple((label, config.values.get(label) or enum_value(label)) for label in values)
            self.enums[key] = EnumType(name, labels, "text", config.description)
        return ValueType(ValueKind.ENUM, self.enums[key].name, "text")

    def _enum(self, pg: PgType) -> EnumType:
        if pg.oid not in self.enums:
            config = self._configs.get(pg.name, TypeConfig())
            labels = tuple((label, config.values.get(label) or enum_value(label)) for label in pg.enum_labels)
            description = config.description or read_hints(pg.comment).description
            self.enums[pg.oid] = EnumType(self._type_name(pg), labels, pg.sql_name, description)
        return self.enums[pg.oid]

    def _composite(self, pg: PgType) -> CompositeType:
        if pg.oid not in self.composites:
            config = self._configs.get(pg.name, TypeConfig())
            name = self._type_name(pg)
            # Registered before its attributes are mapped, so a composite that refers to itself terminates.
            self.composites[pg.oid] = CompositeType(name, f"{name}Input", pg.sql_name, ())
            fields = []
            for attribute in pg.attributes:
                attribute_config = config.attributes.get(attribute.name)
                value = self.value_type(attribute.type_oid)
                fields.append(
                    Field(
                        name=(attribute_config.field_name if attribute_config else None) or camel(attribute.name),
                        column=attribute.name,
                        type=value,
                        nullable=not attribute.not_null,
                        orderable=self.orderable(value),
                    )
                )
            description = config.description or read_hints(pg.comment).description
            self.composites[pg.oid] = CompositeType(name, f"{name}Input", pg.sql_name, tuple(fields), description)
        return self.composites[pg.oid]

    def _range(self, pg: PgType) -> RangeType:
        if pg.oid not in self.ranges:
            assert pg.range_subtype_oid is not None
            bound = self.value_type(pg.range_subtype_oid)
            builtin = pg.schema == "pg_catalog" and bound.scalar in _RANGE_NAMES
            name = _RANGE_NAMES[bound.scalar] if builtin and bound.scalar else self._type_name(pg)
            self.ranges[pg.oid] = RangeType(name, f"{name}Input", pg.sql_name, bound)
        return self.ranges[pg.oid]
