"""Relation fields from foreign keys (SPEC "Naming", "Fields present on generated types").

- To-one, on the row holding the key: named from the key's column (`author_id` -> `author`); a key over several
  columns, or a column whose name gives nothing new, is `<target>By<Columns>` (`personByAuthor`).
- Reverse, on the referenced row: the child's plural (`posts`), disambiguated by the key's columns
  (`postsByEditorId`) when the child has several keys to this table or refers to itself; a to-one when the key's
  columns are unique in the child (`userProfile`).
- Many-to-many through a junction table (two foreign keys making up its primary key): the far side's plural
  (`film.actors`), disambiguated by the junction (`actorsByFilmActor`) when needed.
- Hierarchies over a self-reference: `ancestors` and `descendants` (prefixed with the relation's name when the table
  refers to itself more than once).
- Exclusive arcs: a CHECK that exactly one of several columns is set, each the sole column of a single-column foreign
  key to an exposed table, gives `target` (the CHECK's name in lower camel case when `target` is taken or the table
  has more than one arc).

Configuration wins: `entities.<t>.foreign_keys.<constraint>` (`field_name`, `reverse_field_name`, `omit_reverse`),
a virtual key declared there with `columns` and `references`, and an `@name` hint in the key's comment.
"""

from collections.abc import Callable, Mapping

import attrs

from svc.catalog import ForeignKey, Relation
from svc.config import EntityConfig, ForeignKeyConfig

from ._entities import Arc, Cardinality, EntityRef, Hierarchy
from ._entities import Relation as RelationField
from ._hints import read_hints
from ._naming import camel, lower_first, pascal

_KEY_SUFFIXES = ("_id", "_uuid", "_key", "_fk", "Id", "ID", "Uuid")
_RENAME = "set field_name or reverse_field_name in entities.<table>.foreign_keys.<constraint>"

#: Relation fields found so far, per entity.
Fields = dict[EntityRef, list[RelationField]]
#: Takes a field name on an entity: the preferred one, else the fallback, else None (a problem is recorded).
Claim = Callable[[EntityRef, str, str, str], str | None]


@attrs.frozen
class Side:
    """What naming a relation needs to know about an exposed table."""

    relation: Relation
    config: EntityConfig
    type_name: str
    plural_name: str
    field_names: frozenset[str]  # column fields already taken

    @property
    def ref(self) -> EntityRef:
        return EntityRef(self.relation.schema, self.relation.name)

    def key_columns(self) -> tuple[tuple[str, ...], ...]:
        """Column sets that identify a row: the primary key and plain unique keys."""
        keys = [self.relation.primary_key] if self.relation.primary_key else []
        keys += [key for key in self.relation.unique_keys if key.is_plain]
        return tuple(key.columns for key in keys if key is not None)


@attrs.frozen
class Relations:
    fields: Mapping[EntityRef, tuple[RelationField, ...]]
    hierarchies: Mapping[EntityRef, tuple[Hierarchy, ...]]
    arcs: Mapping[EntityRef, tuple[Arc, ...]]


def foreign_keys(side: Side, sides: Mapping[EntityRef, Side]) -> tuple[ForeignKey, ...]:
    """The table's foreign keys to exposed tables, virtual ones from the configuration included."""
    keys = list(side.relation.foreign_keys)
    for name, config in side.config.foreign_keys.items():
        if config.columns is not None and config.references is not None:
            target = _target_of(config, side, sides)
            if target is None:
                continue
            columns = config.references.columns or (
                target.relation.primary_key.columns if target.relation.primary_key else ()
            )
            keys.append(ForeignKey(name, config.columns, target.relation.schema, target.relation.name, columns))
    return tuple(fk for fk in keys if EntityRef(fk.target_schema, fk.target_name) in sides)


def _target_of(config: ForeignKeyConfig, side: Side, sides: Mapping[EntityRef, Side]) -> Side | None:
    assert config.references is not None
    schema, dot, name = config.references.table.rpartition(".")
    if dot:
        return sides.get(EntityRef(schema, name))
    return sides.get(EntityRef(side.relation.schema, name)) or next(
        (s for ref, s in sides.items() if ref.table == name), None
    )


def build_relations(sides: Mapping[EntityRef, Side], problems: list[str]) -> Relations:
    names = {ref: set(side.field_names) for ref, side in sides.items()}
    fields: Fields = {ref: [] for ref in sides}
    hierarchies: dict[EntityRef, list[Hierarchy]] = {ref: [] for ref in sides}
    keys = {ref: foreign_keys(side, sides) for ref, side in sides.items()}

    def claim(ref: EntityRef, preferred: str, fallback: str, what: str) -> str | None:
        for name in (preferred, fallback):
            if name not in names[ref]:
                names[ref].add(name)
                return name
        problems.append(f"{sides[ref].type_name}.{preferred}: {what} collides with another field; {_RENAME}")
        return None

    for ref, side in sides.items():
        for fk in keys[ref]:
            _to_one(side, sides[EntityRef(fk.target_schema, fk.target_name)], fk, fields, claim)
    for ref, side in sides.items():
        for fk in keys[ref]:
            target = sides[EntityRef(fk.target_schema, fk.target_name)]
            _reverse(side, target, fk, siblings=keys[ref], fields=fields, claim=claim)
    for ref, side in sides.items():
        _many_to_many(side, keys[ref], sides, fields, claim)
    for ref in sides:
        self_keys = [fk for fk in keys[ref] if EntityRef(fk.target_schema, fk.target_name) == ref]
        for fk in self_keys:
            relation = next(r for r in fields[ref] if r.foreign_key == fk.name and r.holds_key)
            prefix = relation.name if len(self_keys) > 1 else ""
            ancestors = claim(ref, _join(prefix, "ancestors"), _join(prefix, "ancestors"), "hierarchy field")
            descendants = claim(ref, _join(prefix, "descendants"), _join(prefix, "descendants"), "hierarchy field")
            if ancestors and descendants:
                pairs = tuple(zip(fk.columns, fk.target_columns, strict=True))
                hierarchies[ref].append(Hierarchy(ancestors, descendants, pairs, fk.name))
    arcs = {ref: _arcs(side, keys[ref], fields[ref], claim) for ref, side in sides.items()}
    return Relations(
        {ref: tuple(items) for ref, items in fields.items()},
        {ref: tuple(items) for ref, items in hierarchies.items()},
        arcs,
    )


def _arcs(side: Side, keys: tuple[ForeignKey, ...], fields: list[RelationField], claim: Claim) -> tuple[Arc, ...]:
    """The table's exclusive arcs: CHECKs saying exactly one of several columns is set, where each column is the sole
    column of a single-column foreign key with a to-one field (composite keys make no arc)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for check in side.relation.checks:
        if check.exactly_one is None:
            continue
        relations: list[str] = []
        for column in check.exactly_one:
            fk = next((k for k in keys if k.columns == (column,)), None)
            relation = next((r for r in fields if fk is not None and r.holds_key and r.foreign_key == fk.name), None)
            if relation is None:
                break
            relations.append(relation.name)
        else:
            found.append((check.name, tuple(relations)))
    arcs: list[Arc] = []
    for check_name, arc_relations in found:
        fallback = camel(check_name)
        name = claim(side.ref, "target" if len(found) == 1 else fallback, fallback, "exclusive arc")
        if name is not None:
            type_name = f"{side.type_name}{pascal(name)}"
            arcs.append(Arc(name, type_name, f"{type_name}Input", arc_relations, check_name))
    return tuple(arcs)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}{name[:1].upper()}{name[1:]}" if prefix else name


def _to_one(side: Side, target: Side, fk: ForeignKey, fields: Fields, claim: Claim) -> None:
    config = side.config.foreign_keys.get(fk.name, ForeignKeyConfig())
    hints = read_hints(fk.comment)
    columns = _named_columns(fk)
    fallback = f"{lower_first(target.type_name)}By{''.join(pascal(c) for c in columns)}"
    preferred = config.field_name or hints.name or _column_name(columns) or fallback
    name = claim(side.ref, preferred, fallback, "to-one relation")
    if name is None:
        return
    nullable = any(not (column := side.relation.column(c)) or not column.not_null for c in fk.columns)
    fields[side.ref].append(
        RelationField(
            name=name,
            kind=Cardinality.TO_ONE,
            target=target.ref,
            pairs=_pairs(fk.columns, fk.target_columns, fk),
            foreign_key=fk.name,
            holds_key=True,
            nullable=nullable,
            on_delete=fk.on_delete,
            description=hints.description,
            deprecation=hints.deprecation,
            batch=config.batch,
            period=(fk.columns[-1], fk.target_columns[-1]) if fk.period else None,
        )
    )


def _pairs(near: tuple[str, ...], far: tuple[str, ...], fk: ForeignKey) -> tuple[tuple[str, str], ...]:
    """The columns a relation matches (near, far); a period foreign key's periods are matched by containment of an
    instant instead (`Relation.period`), so they are left out."""
    pairs = tuple(zip(near, far, strict=True))
    return pairs[:-1] if fk.period else pairs


def _named_columns(fk: ForeignKey) -> tuple[str, ...]:
    """The columns a relation is named after: a period foreign key's without its period (`room_id`, not
    `room_id, valid_at`)."""
    return fk.columns[:-1] if fk.period else fk.columns


def _column_name(columns: tuple[str, ...]) -> str | None:
    """`author_id` -> `author`: a single key column named after what it refers to."""
    if len(columns) != 1:
        return None
    column = columns[0]
    for suffix in _KEY_SUFFIXES:
        if column.endswith(suffix) and len(column) > len(suffix):
            return camel(column[: -len(suffix)])
    return None


def _reverse(
    side: Side, target: Side, fk: ForeignKey, *, siblings: tuple[ForeignKey, ...], fields: Fields, claim: Claim
) -> None:
    """The referenced table's field listing the rows that refer to it."""
    config = side.config.foreign_keys.get(fk.name, ForeignKeyConfig())
    if config.omit_reverse:
        return
    # Across a period foreign key, a child is one per parent when its columns other than the period are a key.
    columns = _named_columns(fk)
    unique = set(columns) in [set(key) for key in side.key_columns()]
    base = lower_first(side.type_name if unique else side.plural_name)
    by_columns = f"{base}By{''.join(pascal(c) for c in columns)}"
    same_target = [k for k in siblings if (k.target_schema, k.target_name) == (fk.target_schema, fk.target_name)]
    ambiguous = len(same_target) > 1 or side.ref == target.ref
    preferred = config.reverse_field_name or (by_columns if ambiguous else base)
    name = claim(target.ref, preferred, by_columns, "reverse relation")
    if name is None:
        return
    fields[target.ref].append(
        RelationField(
            name=name,
            kind=Cardinality.TO_ONE if unique else Cardinality.TO_MANY,
            target=side.ref,
            pairs=_pairs(fk.target_columns, fk.columns, fk),
            foreign_key=fk.name,
            on_delete=fk.on_delete,
            period=(fk.target_columns[-1], fk.columns[-1]) if fk.period else None,
        )
    )


def _many_to_many(
    junction: Side, keys: tuple[ForeignKey, ...], sides: Mapping[EntityRef, Side], fields: Fields, claim: Claim
) -> None:
    """A junction table: exactly two foreign keys that together make up its primary key (or a unique key)."""
    if len(keys) != 2:
        return
    first, second = keys
    covered = set(first.columns) | set(second.columns)
    if set(first.columns) & set(second.columns) or covered not in [set(c) for c in junction.key_columns()]:
        return
    for near, far in ((first, second), (second, first)):
        owner = sides[EntityRef(near.target_schema, near.target_name)]
        target = sides[EntityRef(far.target_schema, far.target_name)]
        base = lower_first(target.plural_name)
        by_junction = f"{base}By{junction.type_name}"
        self_join = owner.ref == target.ref
        preferred = f"{base}By{''.join(pascal(c) for c in far.columns)}" if self_join else base
        name = claim(owner.ref, preferred, by_junction, "many-to-many relation")
        if name is None:
            continue
        fields[owner.ref].append(
            RelationField(
                name=name,
                kind=Cardinality.MANY_TO_MANY,
                target=target.ref,
                pairs=tuple(zip(near.target_columns, near.columns, strict=True)),
                foreign_key=far.name,
                junction=junction.ref,
                junction_pairs=tuple(zip(far.columns, far.target_columns, strict=True)),
                junction_foreign_key=near.name,
            )
        )
