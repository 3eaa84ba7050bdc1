"""What each name of an entity's GraphQL types means: its fields, and the values of `<Type>OrderBy`.

The SDL writer lists these names and the planner looks them up, so the two read the same table (SPEC "GraphQL
behaviour" -> orderBy: `NATURAL`, `PRIMARY_KEY_ASC/DESC`, `<COLUMN>_ASC/DESC`, `_NULLS_FIRST`/`_NULLS_LAST` variants
for nullable values, a to-one relation's columns `<RELATION>_<COLUMN>_...`, a to-many relation's row count
`<RELATION>_COUNT_...`, and computed values that need no argument).
"""

import enum
from collections.abc import Mapping

import attrs

from svc.model import (
    Arc,
    Cardinality,
    ComputedField,
    Entity,
    Field,
    Hierarchy,
    Model,
    Relation,
    ReturnKind,
    Scalar,
    ValueKind,
    upper_snake,
)

from ._ir import Hierarchy as Walk
from ._ir import Param


class FieldKind(enum.Enum):
    TYPENAME = "__typename"
    GLOBAL_ID = "id"
    DATABASE_ID = "databaseId"
    ROW_VERSION = "rowVersion"
    COLUMN = "column"
    RELATION = "relation"  # to-one, or a to-many/many-to-many list
    RELATION_CONNECTION = "relation_connection"
    COMPUTED = "computed"
    ANCESTORS = "ancestors"
    DESCENDANTS = "descendants"
    HISTORY = "history"  # the versions of a temporal row
    ARC = "arc"  # an exclusive arc's `target`: the row of one of several types
    SUBTYPE_NAME = "subtype_name"  # a table-per-type parent's row's concrete type (`typename`)


@attrs.frozen
class FieldMeaning:
    kind: FieldKind
    field: Field | None = None
    relation: Relation | None = None
    computed: ComputedField | None = None
    hierarchy: Hierarchy | None = None
    arc: Arc | None = None

    def walk(self, entity: Entity, max_depth: Param | None) -> Walk:
        """The walk an `ancestors`/`descendants` field (or a path column's) asks for."""
        hierarchy = self.hierarchy
        assert hierarchy is not None and self.kind in (FieldKind.ANCESTORS, FieldKind.DESCENDANTS)
        return Walk(
            pairs=hierarchy.pairs,
            key=tuple(entity.primary_key or (parent for _, parent in hierarchy.pairs)),
            ancestors=self.kind is FieldKind.ANCESTORS,
            max_depth=max_depth,
            path=hierarchy.path,
        )


class OrderKind(enum.Enum):
    NATURAL = "natural"
    PRIMARY_KEY = "primary_key"
    FIELD = "field"
    RELATED_FIELD = "related_field"
    RELATED_COUNT = "related_count"
    COMPUTED = "computed"


@attrs.frozen
class OrderValue:
    """One value of `<Type>OrderBy`: what it orders by, which way, and where NULLs go."""

    name: str
    kind: OrderKind
    descending: bool = False
    nulls_first: bool = False
    field: Field | None = None
    relation: Relation | None = None
    computed: ComputedField | None = None


def entity_fields(entity: Entity) -> dict[str, FieldMeaning]:
    """Every field of the entity's object type by name (SDL order)."""
    fields: dict[str, FieldMeaning] = {"__typename": FieldMeaning(FieldKind.TYPENAME)}
    if entity.node:
        fields["id"] = FieldMeaning(FieldKind.GLOBAL_ID)
        fields["databaseId"] = FieldMeaning(FieldKind.DATABASE_ID)
    if entity.primary_key is not None:
        fields["rowVersion"] = FieldMeaning(FieldKind.ROW_VERSION)
    for field in entity.fields:
        fields[field.name] = FieldMeaning(FieldKind.COLUMN, field=field)
    if entity.typename_field is not None:
        fields[entity.typename_field] = FieldMeaning(FieldKind.SUBTYPE_NAME)
    for relation in entity.relations:
        fields[relation.name] = FieldMeaning(FieldKind.RELATION, relation=relation)
        if relation.kind is not Cardinality.TO_ONE:
            fields[f"{relation.name}Connection"] = FieldMeaning(FieldKind.RELATION_CONNECTION, relation=relation)
    for hierarchy in entity.hierarchies:
        fields[hierarchy.ancestors] = FieldMeaning(FieldKind.ANCESTORS, hierarchy=hierarchy)
        fields[hierarchy.descendants] = FieldMeaning(FieldKind.DESCENDANTS, hierarchy=hierarchy)
    for computed in entity.computed:
        fields[computed.name] = FieldMeaning(FieldKind.COMPUTED, computed=computed)
    if entity.temporal is not None and entity.temporal.history is not None:
        fields[entity.temporal.history] = FieldMeaning(FieldKind.HISTORY)
    for arc in entity.arcs:
        fields[arc.name] = FieldMeaning(FieldKind.ARC, arc=arc)
    return fields


def order_values(entity: Entity, model: Model) -> dict[str, OrderValue]:
    """Every value of `<Type>OrderBy`, in SDL order."""
    values: dict[str, OrderValue] = {"NATURAL": OrderValue("NATURAL", OrderKind.NATURAL)}
    if entity.primary_key is not None:
        for descending in (False, True):
            name = f"PRIMARY_KEY_{'DESC' if descending else 'ASC'}"
            values[name] = OrderValue(name, OrderKind.PRIMARY_KEY, descending=descending)
    for field in entity.fields:
        if field.orderable:
            _add(values, upper_snake(field.name), field.nullable, OrderKind.FIELD, field=field)
    for relation in entity.relations:
        if relation.kind is Cardinality.TO_ONE and relation.period is None:
            # (Across a period foreign key the row reached depends on an instant: not an order of the rows.)
            target = model.entity(relation.target)
            for field in target.fields:
                if field.orderable:
                    prefix = f"{upper_snake(relation.name)}_{upper_snake(field.name)}"
                    _add(values, prefix, True, OrderKind.RELATED_FIELD, field=field, relation=relation)
        elif relation.kind is not Cardinality.TO_ONE:
            _add(values, f"{upper_snake(relation.name)}_COUNT", False, OrderKind.RELATED_COUNT, relation=relation)
    for computed in entity.computed:
        if orderable_computed(computed):
            _add(values, upper_snake(computed.name), True, OrderKind.COMPUTED, computed=computed)
    return values


def _add(
    values: dict[str, OrderValue],
    name: str,
    nullable: bool,
    kind: OrderKind,
    *,
    field: Field | None = None,
    relation: Relation | None = None,
    computed: ComputedField | None = None,
) -> None:
    """`NAME_ASC`, `NAME_DESC`, and for nullable values `NAME_ASC_NULLS_FIRST`, `NAME_DESC_NULLS_LAST`.

    Default NULL placement: last ascending, first descending (SPEC "orderBy").
    """
    variants = [("ASC", False, False), ("DESC", True, True)]
    if nullable:
        variants += [("ASC_NULLS_FIRST", False, True), ("DESC_NULLS_LAST", True, False)]
    for suffix, descending, nulls_first in variants:
        values[f"{name}_{suffix}"] = OrderValue(
            f"{name}_{suffix}", kind, descending, nulls_first, field=field, relation=relation, computed=computed
        )


def orderable_computed(computed: ComputedField) -> bool:
    """A computed field that orders rows: a scalar (not JSON) or enum, needing no argument of its own."""
    value = computed.returns.type
    return (
        computed.returns.kind is ReturnKind.SCALAR
        and not any(argument.required for argument in computed.arguments)
        and value is not None
        and value.kind in (ValueKind.SCALAR, ValueKind.ENUM)
        and value.name != Scalar.JSON.value
    )


#: Aggregate members of a to-many relation filter (SPEC "Filter and condition inputs": `sum: { <col>: <filter> }`).
AGGREGATES = ("sum", "avg", "min", "max")
_NUMERIC = frozenset({Scalar.INT.value, Scalar.BIG_INT.value, Scalar.FLOAT.value, Scalar.DECIMAL.value})


def numeric_fields(entity: Entity) -> list[Field]:
    """The entity's numeric columns: those aggregate filters compare."""
    return [f for f in entity.fields if f.type.kind is ValueKind.SCALAR and f.type.name in _NUMERIC]


def filterable_computed(computed: ComputedField) -> bool:
    return computed.returns.kind is ReturnKind.SCALAR and not any(a.required for a in computed.arguments)


@attrs.define
class EntityIndex:
    """Lazily built, per snapshot: field meanings and order values of each entity type, by type name."""

    model: Model
    _fields: dict[str, Mapping[str, FieldMeaning]] = attrs.field(factory=dict[str, Mapping[str, FieldMeaning]])
    _orders: dict[str, Mapping[str, OrderValue]] = attrs.field(factory=dict[str, Mapping[str, OrderValue]])

    def fields(self, entity: Entity) -> Mapping[str, FieldMeaning]:
        found = self._fields.get(entity.type_name)
        if found is None:
            found = self._fields[entity.type_name] = entity_fields(entity)
        return found

    def orders(self, entity: Entity) -> Mapping[str, OrderValue]:
        found = self._orders.get(entity.type_name)
        if found is None:
            found = self._orders[entity.type_name] = order_values(entity, self.model)
        return found
