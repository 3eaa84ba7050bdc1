"""Table-per-type subtypes (issue 23): a table whose whole primary key is a foreign key to another table's whole
primary key (same number of columns, one-to-one) is a subtype of it. The parent's rows carry the name of their
concrete type and the subtype's columns; the parent's to-one relation to the subtype (`dog`) filters and orders by
them.

Only direct subtypes are listed on a parent: a subtype of a subtype is listed on its own parent (a puppy row is a
`Dog` among animals). A subtype whose reverse relation is omitted (`omit_reverse`) is not one.
"""

from collections.abc import Mapping, Sequence

import attrs

from svc.catalog import ForeignKey

from ._entities import Entity, EntityRef, Operation, Subtype, Supertype
from ._naming import lower_first

#: The GraphQL field naming a row's concrete type, and the one taken when a field of the entity has that name.
TYPENAME_FIELD = "typename"
#: The REST member naming a row's concrete type.
REST_TYPENAME = "__typename"


def is_subtype_key(fk: ForeignKey, child: Entity, parent: Entity) -> bool:
    """The key makes the child a subtype of the parent: it is the child's whole primary key and refers to the
    parent's whole primary key (a table referring to itself is not its own subtype)."""
    if child.ref == parent.ref or child.primary_key is None or parent.primary_key is None:
        return False
    return (
        len(fk.columns) == len(child.primary_key) == len(parent.primary_key)
        and set(fk.columns) == set(child.primary_key)
        and set(fk.target_columns) == set(parent.primary_key)
    )


def with_subtypes(entities: Sequence[Entity], keys: Mapping[EntityRef, Sequence[ForeignKey]]) -> tuple[Entity, ...]:
    """The entities, each parent with its subtypes and each subtype with the parent columns its create takes (`keys`:
    each entity's foreign keys to exposed tables)."""
    by_ref = {entity.ref: entity for entity in entities}
    found: dict[EntityRef, list[tuple[Entity, ForeignKey]]] = {}
    for child in entities:
        for fk in keys.get(child.ref, ()):
            parent = by_ref.get(EntityRef(fk.target_schema, fk.target_name))
            if parent is not None and is_subtype_key(fk, child, parent):
                found.setdefault(parent.ref, []).append((child, fk))
    parented = {
        entity.ref: _parent(entity, found[entity.ref]) if entity.ref in found else entity for entity in entities
    }
    parents = {
        subtype.target: (parent, fk)
        for parent in parented.values()
        for subtype in parent.subtypes
        for child, fk in found[parent.ref]
        if child.ref == subtype.target
    }
    return tuple(_child(entity, *parents[ref]) if ref in parents else entity for ref, entity in parented.items())


def _child(entity: Entity, parent: Entity, fk: ForeignKey) -> Entity:
    """The subtype with the parent columns its create input takes (when it can create the parent's row through its
    relation to it)."""
    relation = next((r for r in entity.relations if r.foreign_key == fk.name and r.holds_key), None)
    if relation is None or not relation.insertable or Operation.CREATE not in parent.operations:
        return entity
    taken = {f.name for f in entity.fields} | {r.name for r in entity.relations}
    columns = tuple(
        (field.name if field.name not in taken else _prefixed(parent.type_name, field.name), field)
        for field in parent.fields
        if field.insertable and field.column not in (parent.primary_key or ())
    )
    return attrs.evolve(entity, supertype=Supertype(parent.ref, parent.type_name, relation.name, columns))


def _parent(entity: Entity, children: list[tuple[Entity, ForeignKey]]) -> Entity:
    taken = {f.rest_name for f in entity.fields} | {r.name for r in entity.relations} | {REST_TYPENAME}
    taken |= {c.name for c in entity.computed}
    counts: dict[str, int] = {}
    for child, _ in children:
        for field in child.fields:
            if field.column not in (child.primary_key or ()):
                counts[field.rest_name] = counts.get(field.rest_name, 0) + 1
    subtypes = []
    for child, fk in children:
        relation = next(
            (r for r in entity.relations if r.foreign_key == fk.name and r.target == child.ref and not r.holds_key),
            None,
        )
        if relation is None:
            continue
        columns = tuple(
            (
                field.rest_name
                if field.rest_name not in taken and counts[field.rest_name] == 1
                else f"{relation.name}.{field.rest_name}",
                field,
            )
            for field in child.fields
            if field.column not in (child.primary_key or ())
        )
        subtypes.append(Subtype(child.ref, child.type_name, relation.name, relation.pairs, columns))
    if not subtypes:
        return entity
    names = {f.name for f in entity.fields} | {r.name for r in entity.relations} | {c.name for c in entity.computed}
    typename = TYPENAME_FIELD if TYPENAME_FIELD not in names else _prefixed(entity.type_name, TYPENAME_FIELD)
    return attrs.evolve(entity, subtypes=tuple(subtypes), typename_field=typename)


def _prefixed(type_name: str, name: str) -> str:
    """`animalName`: a field's name with its type's in front, where the plain name is taken."""
    return f"{lower_first(type_name)}{name[:1].upper()}{name[1:]}"
