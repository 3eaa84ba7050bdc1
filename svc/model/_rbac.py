"""The model as one database role sees it: pruned to what its grants let it do (SPEC "What the service does", rule 3:
"With `rbac.enabled: true` the APIs are pruned to what the connecting role may access").

The catalog read each role's table and column privileges (SELECT, INSERT, UPDATE, DELETE; a column's include its
table's) and whether it may EXECUTE each function; `prune_model` keeps, per table, column and operation, what those
allow. The database still decides every request (grants and row-level security): pruning only keeps the generated
APIs from offering what would be refused, as PostGraphile does without `ignoreRBAC` and Hasura does per role.

- An entity stays when the role may SELECT the table, or one of its exposed columns that `<Type>Condition` can compare
  (a type whose only readable columns are json or composite would have an empty Condition input, which GraphQL
  refuses). Its fields are the columns it may SELECT; a field is insertable/updatable when the column also is for
  the role. Write-only columns (INSERT without SELECT) are left out of the inputs too: every write answers the
  written row, which the role must be able to read.
- Operations: reads need only the entity to stay. CREATE needs INSERT (on the table or a column), UPDATE needs
  UPDATE and DELETE needs DELETE; UPDATE and DELETE also need the primary key readable, since the service finds
  the row by its key. A key the role cannot read is no key for it: no `Node`, no lookup by it, no update or delete.
  CREATE (UPDATE) also goes when pruning took out every column its input had (no input object is left empty).
- A relation stays when its target does, and the role may read the columns on both sides of the join (for a
  many-to-many, the junction's too, and the junction stays as an entity); relation filters and orderBy values
  follow. A create (update) input offers a relation's nested writes when the role may INSERT (UPDATE) what they
  set: a to-one's key columns; the children's key columns for a to-many (INSERT or UPDATE: children are created or
  connected); junction rows for a many-to-many (INSERT; for an update, INSERT or DELETE). Their members follow the
  target's operations. A hierarchy stays when its key is readable.
- A computed field or root function stays when the role may EXECUTE the function and the table whose rows it
  returns stays. A computed field also needs every column of its table readable (the row is passed whole, and
  PostgreSQL checks a whole-row reference against every column); a mounted one, the columns its arguments read.
- Enum, composite, range and record types stay unless only what was pruned used them.
- Names never change, and error codes stay whole: a write the role may make can still hit a constraint over columns
  it cannot see (a NOT NULL column it may not set, a hidden table's foreign key blocking a delete), and the
  database reports it by the constraint's name.

Refused: a role the catalog read no privileges for (not among `Catalog.roles`). Its grants are unknown, and
neither guess (everything, nothing) is safe, so `prune_model` raises ModelError naming the role.
"""

from collections.abc import Iterable, Iterator, Mapping

import attrs

from svc.catalog import Catalog
from svc.catalog import Relation as Table

from ._config import ModelError
from ._entities import (
    Cardinality,
    ComputedField,
    Entity,
    EntityRef,
    EntitySearch,
    Field,
    Hierarchy,
    Model,
    Operation,
    Relation,
    ReturnKind,
    Returns,
    RootFunction,
    Supertype,
    ValueKind,
    ValueType,
)

_SELECT, _INSERT, _UPDATE, _DELETE = "SELECT", "INSERT", "UPDATE", "DELETE"
#: Records are keyed like value types in `_types_used`; they have no ValueKind of their own.
_RECORD = "record"


def prune_model(model: Model, catalog: Catalog, role: str) -> Model:
    """`model` as `role` may use it: the entities, fields, operations, relations and functions its grants allow.

    `catalog` is the one `model` was built from, read with `role` among its roles. Pure: the same inputs give an
    equal model, and a role with every privilege gets a model equal to `model`. ModelError when `catalog` holds no
    privileges for `role`.
    """
    if role not in catalog.roles:
        read = ", ".join(catalog.roles) or "none"
        raise ModelError(
            [
                f"rbac: the privileges of role {role!r} were not read (read for: {read}); a role requests run as"
                " must exist in the database"
            ]
        )
    grants = _Grants(role, {EntityRef(t.schema, t.name): t for t in catalog.relations}, _executable(catalog, role))
    narrowed = (_columns_seen(entity, grants) for entity in model.entities)
    seen = {entity.ref: entity for entity in narrowed if entity is not None}
    entities = tuple(_relations_seen(entity, seen, grants) for entity in seen.values())
    functions = tuple(
        f for f in model.functions if grants.may_execute(f.schema, f.function) and _present(f.returns, seen)
    )
    pruned = attrs.evolve(model, entities=entities, functions=functions)
    gone = _types_used(model) - _types_used(pruned)
    return attrs.evolve(
        pruned,
        enums=tuple(t for t in model.enums if (ValueKind.ENUM, t.name) not in gone),
        composites=tuple(t for t in model.composites if (ValueKind.COMPOSITE, t.name) not in gone),
        ranges=tuple(t for t in model.ranges if (ValueKind.RANGE, t.name) not in gone),
        records=tuple(t for t in model.records if (_RECORD, t.name) not in gone),
    )


# --- grants ------------------------------------------------------------------------------------------------------


@attrs.frozen
class _Grants:
    """One role's privileges, by table and column (database names) and by function."""

    role: str
    tables: Mapping[EntityRef, Table]
    executable: Mapping[tuple[str, str], bool]

    def table(self, ref: EntityRef) -> frozenset[str]:
        table = self.tables.get(ref)
        return table.privileges.get(self.role, frozenset()) if table is not None else frozenset()

    def column(self, ref: EntityRef, name: str) -> frozenset[str]:
        """A column's privileges (its table's included, as the catalog reads them); none for an unknown column."""
        table = self.tables.get(ref)
        column = table.column(name) if table is not None else None
        return column.privileges.get(self.role, frozenset()) if column is not None else frozenset()

    def may(self, ref: EntityRef, privilege: str, columns: Iterable[str]) -> bool:
        """`privilege` on every one of `columns`."""
        return all(privilege in self.column(ref, name) for name in columns)

    def may_read(self, ref: EntityRef, columns: Iterable[str]) -> bool:
        return self.may(ref, _SELECT, columns)

    def may_read_row(self, ref: EntityRef) -> bool:
        """SELECT on every column: what a whole-row reference (`f(t)`) needs."""
        table = self.tables.get(ref)
        return table is not None and self.may_read(ref, (c.name for c in table.columns))

    def holds(self, ref: EntityRef, privilege: str) -> bool:
        """`privilege` on the table or on one of its columns."""
        table = self.tables.get(ref)
        columns = table.columns if table is not None else ()
        return privilege in self.table(ref) or any(privilege in self.column(ref, c.name) for c in columns)

    def may_execute(self, schema: str, function: str) -> bool:
        return self.executable.get((schema, function), False)


def _executable(catalog: Catalog, role: str) -> dict[tuple[str, str], bool]:
    """EXECUTE per served function; overloads are never served, so (schema, name) names one."""
    return {(f.schema, f.name): f.executable.get(role, False) for f in catalog.functions}


# --- entities: columns, key, operations --------------------------------------------------------------------------


def _columns_seen(entity: Entity, grants: _Grants) -> Entity | None:
    """The entity with the fields, key, lookups and operations the role's column and table grants allow (its
    relations and computed fields come next, once every entity is known); None when it cannot read it."""
    ref = entity.ref
    fields = tuple(f for f in (_field_seen(f, grants.column(ref, f.column)) for f in entity.fields) if f is not None)
    if _SELECT not in grants.table(ref) and not any(_comparable(f.type) for f in fields):
        return None
    key = entity.primary_key if entity.primary_key and grants.may_read(ref, entity.primary_key) else None
    readable = {f.column for f in fields}
    lookups = tuple(
        lookup
        for lookup in entity.lookups
        if set(lookup.columns) <= readable and (not lookup.primary or key is not None)
    )
    operations = set(entity.operations)
    temporal = entity.temporal
    if not grants.holds(ref, _INSERT) or _emptied(entity.fields, fields, "insertable"):
        operations.discard(Operation.CREATE)
    if key is None or not grants.holds(ref, _UPDATE) or _emptied(entity.fields, fields, "updatable"):
        operations.discard(Operation.UPDATE)
    if key is None or _DELETE not in grants.table(ref):
        operations.discard(Operation.DELETE)
    return attrs.evolve(
        entity,
        fields=fields,
        primary_key=key,
        lookups=lookups,
        operations=frozenset(operations),
        withheld=entity.withheld | (entity.operations - operations),
        system_version=entity.system_version and _SELECT in grants.table(ref),
        search=_search_seen(entity.search, readable, key),
        # Reading as of an instant compares the period; a history matches the key's other columns.
        temporal=entity.temporal if temporal is not None and {*temporal.columns, temporal.period} <= readable else None,
    )


def _search_seen(search: EntitySearch, readable: set[str], key: tuple[str, ...] | None) -> EntitySearch:
    """The search documents made only of columns the role reads (a highlight only when its text is, too)."""
    fields = tuple(
        field if field.source is None or set(field.source_columns) <= readable else attrs.evolve(field, source=None)
        for field in search.fields
        if set(field.columns) <= readable
    )
    return EntitySearch.found(fields, key)


def _field_seen(field: Field, privileges: frozenset[str]) -> Field | None:
    if _SELECT not in privileges:
        return None
    return attrs.evolve(
        field,
        insertable=field.insertable and _INSERT in privileges,
        updatable=field.updatable and _UPDATE in privileges,
    )


def _emptied(before: tuple[Field, ...], after: tuple[Field, ...], flag: str) -> bool:
    """Pruning took every column out of an input that had some (an input with relation members only keeps its
    operation: pruning changed nothing there)."""
    return any(getattr(f, flag) for f in before) and not any(getattr(f, flag) for f in after)


def _comparable(value: ValueType) -> bool:
    """A member of `<Type>Condition`: the SDL's rule (not composite, not json, which has no `=`)."""
    if value.kind is ValueKind.COMPOSITE:
        return False
    return not (value.kind is ValueKind.SCALAR and value.sql_type == "json")


# --- entities: relations, hierarchies, computed fields -----------------------------------------------------------


def _relations_seen(entity: Entity, seen: Mapping[EntityRef, Entity], grants: _Grants) -> Entity:
    ref = entity.ref
    relations = tuple(
        _relation_writes(ref, r, grants) for r in entity.relations if _relation_seen(ref, r, seen, grants)
    )
    kept = {r.name for r in relations}
    subtypes = tuple(
        attrs.evolve(s, columns=tuple((n, f) for n, f in s.columns if seen[s.target].field(f.name) is not None))
        for s in entity.subtypes
        if s.relation in kept
    )
    return attrs.evolve(
        entity,
        relations=relations,
        # An arc stays while one of its relations does (its union and input then name those left).
        arcs=tuple(arc for arc in entity.arcs if kept & set(arc.relations)),
        hierarchies=tuple(h for h in entity.hierarchies if _hierarchy_seen(ref, h, grants)),
        computed=tuple(c for c in entity.computed if _computed_seen(ref, c, seen, grants)),
        subtypes=subtypes,
        typename_field=entity.typename_field if subtypes else None,
        supertype=_supertype_seen(entity.supertype, relations, seen),
    )


def _supertype_seen(
    supertype: Supertype | None, relations: tuple[Relation, ...], seen: Mapping[EntityRef, Entity]
) -> Supertype | None:
    """The parent's columns a subtype's create takes, as the role may insert them (none: no parent columns)."""
    relation = next((r for r in relations if supertype is not None and r.name == supertype.relation), None)
    if supertype is None or relation is None or not relation.insertable or supertype.target not in seen:
        return None
    parent = seen[supertype.target]
    if Operation.CREATE not in parent.operations:
        return None
    columns = tuple(
        (name, kept) for name, field in supertype.columns if (kept := parent.field(field.name)) and kept.insertable
    )
    return attrs.evolve(supertype, columns=columns)


def _relation_seen(ref: EntityRef, relation: Relation, seen: Mapping[EntityRef, Entity], grants: _Grants) -> bool:
    """The target stays and the join's columns are readable on both sides (and on the junction, which stays)."""
    if relation.target not in seen:
        return False
    if relation.kind is not Cardinality.MANY_TO_MANY:
        # Across a period foreign key, the target's period is compared with an instant too.
        periods = (relation.period[1],) if relation.period is not None else ()
        return grants.may_read(ref, (c for c, _ in relation.pairs)) and grants.may_read(
            relation.target, (*(c for _, c in relation.pairs), *periods)
        )
    junction = relation.junction
    return (
        junction is not None
        and junction in seen
        and grants.may_read(ref, (c for c, _ in relation.pairs))
        and grants.may_read(junction, (c for _, c in relation.pairs))
        and grants.may_read(junction, (c for c, _ in relation.junction_pairs))
        and grants.may_read(relation.target, (c for _, c in relation.junction_pairs))
    )


def _relation_writes(ref: EntityRef, relation: Relation, grants: _Grants) -> Relation:
    """Which inputs offer the relation's nested writes: those whose writes set columns the role may write."""
    near, far = [c for c, _ in relation.pairs], [c for _, c in relation.pairs]
    if relation.kind is Cardinality.MANY_TO_MANY:
        assert relation.junction is not None
        # A link is a junction row: connecting inserts one, disconnecting (or `set`) deletes one.
        links = [*far, *(c for c, _ in relation.junction_pairs)]
        insertable = grants.may(relation.junction, _INSERT, links)
        updatable = insertable or _DELETE in grants.table(relation.junction)
    elif relation.holds_key:
        insertable, updatable = grants.may(ref, _INSERT, near), grants.may(ref, _UPDATE, near)
    else:
        # The children's key columns: set by creating children (INSERT) or by connecting them (UPDATE).
        insertable = updatable = grants.may(relation.target, _INSERT, far) or grants.may(relation.target, _UPDATE, far)
    return attrs.evolve(
        relation, insertable=relation.insertable and insertable, updatable=relation.updatable and updatable
    )


def _hierarchy_seen(ref: EntityRef, hierarchy: Hierarchy, grants: _Grants) -> bool:
    return grants.may_read(ref, hierarchy.columns)


def _computed_seen(ref: EntityRef, computed: ComputedField, seen: Mapping[EntityRef, Entity], grants: _Grants) -> bool:
    if not grants.may_execute(computed.schema, computed.function) or not _present(computed.returns, seen):
        return False
    if computed.from_columns:
        return grants.may_read(ref, computed.from_columns.values())
    return grants.may_read_row(ref)


def _present(returns: Returns, seen: Mapping[EntityRef, Entity]) -> bool:
    """A function's result type is still there: rows of a table are, when the table stays."""
    return returns.entity is None or returns.entity in seen


# --- types -------------------------------------------------------------------------------------------------------


def _types_used(model: Model) -> set[tuple[ValueKind | str, str]]:
    """The enum, composite, range and record types the model's fields, arguments and results use, transitively."""
    used: set[tuple[ValueKind | str, str]] = set()
    pending = list(_values_of(model))
    records = [f.returns.record for f in _functions(model) if f.returns.record is not None]
    used |= {(_RECORD, record.name) for record in records}
    pending += [field.type for record in records for field in record.fields]
    composites = {c.name: c for c in model.composites}
    ranges = {r.name: r for r in model.ranges}
    while pending:
        value = pending.pop()
        if value.item is not None:
            pending.append(value.item)
        if value.kind not in (ValueKind.ENUM, ValueKind.COMPOSITE, ValueKind.RANGE) or (value.kind, value.name) in used:
            continue
        used.add((value.kind, value.name))
        if value.kind is ValueKind.COMPOSITE and value.name in composites:
            pending += [field.type for field in composites[value.name].fields]
        if value.kind is ValueKind.RANGE and value.name in ranges:
            pending.append(ranges[value.name].bound)
    return used


def _functions(model: Model) -> Iterator[ComputedField | RootFunction]:
    yield from model.functions
    for entity in model.entities:
        yield from entity.computed


def _values_of(model: Model) -> Iterator[ValueType]:
    for entity in model.entities:
        yield from (field.type for field in entity.fields)
    for function in _functions(model):
        yield from (argument.type for argument in function.arguments)
        if function.returns.kind in (ReturnKind.SCALAR, ReturnKind.SCALARS) and function.returns.type is not None:
            yield function.returns.type
