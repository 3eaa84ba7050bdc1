"""Write inputs into write plans (SPEC "Mutations", "Nested writes"): the GraphQL input objects and the REST bodies
share one shape (API field names, relation members), so both front ends convert them here.

Values take their database form (enum labels, range text, composites by attribute name, JSON as JSON) and are
checked before any SQL: lengths of varchar/char columns (`<FIELD>_TOO_LONG`) and numeric precision after rounding
to the column's scale (`<FIELD>_OUT_OF_RANGE`), with the input path in `extensions.field`. Paths, those of errors and
those a write carries for the pipeline's, name fields as the front end's `Naming` says (GraphQL's by default:
`input.tags.connect.0.id`; REST's: `input.tags.connect[0].id`). Keys are one whole primary or unique key, or a global
ID of the right type. Relation members become related writes, refused where the spec says they cannot be:
disconnecting a child whose key is not nullable, relations of a row `connectOrCreate` creates or of a `sync` row,
relations in a bulk update's `set`.
"""

import decimal
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import attrs

from svc.errors import Code, SvcError
from svc.model import (
    Arc,
    Cardinality,
    Entity,
    ErrorCode,
    ErrorKind,
    Field,
    JsonSchemaCheck,
    Model,
    Relation,
    Supertype,
    ValueKind,
    ValueType,
    json_schema_errors,
)

from ._cursors import decode_global_id
from ._ir import Table
from ._naming import GRAPHQL_NAMING, Naming, rendered
from ._values import bad_input, coerce, enum_label, json_text, range_literal, scalar, scalar_reader
from ._write_plan import KeyLookup, OnConflict, Path, RelatedWrite, RelationWriteKind, RowWrite, Values

K = RelationWriteKind
_STATUS_BY_KIND = {
    ErrorKind.UNIQUE: Code.CONFLICT,
    ErrorKind.EXCLUSION: Code.CONFLICT,
    ErrorKind.FOREIGN_KEY: Code.CONFLICT,
    ErrorKind.REFERENCED_BY: Code.CONFLICT,
    ErrorKind.STALE_VERSION: Code.STALE_VERSION,
}
#: The order relation members of one relation input run in: releases first, so `set` keeps what it connects and
#: creates; connections before creations; changes to existing children last.
#: Rendered paths (`_at`) and column plans (`column_values`) kept; past it they are made afresh.
_KEPT = 4096
_TO_MANY_ORDER = ("set", "disconnect", "connect", "connectOrCreate", "create", "update", "delete", "sync")


#: A `column_values` plan: the members' columns, each member's step (its reader, and the path to call it with), and
#: their paths.
_ColumnPlan = tuple[tuple[str, ...], tuple[tuple[Callable[[Any, Any], Any], Any], ...], tuple[Path, ...]]
_UNPLANNED: Any = object()


def render_path(path: Sequence[str | int]) -> str:
    """An input path as clients read it: `inputs[1].posts.create[0].title`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def typed_error(
    code: ErrorCode, entity: Entity, fields: Sequence[str], message: str, more: Mapping[str, Any] | None = None
) -> SvcError:
    """A constraint's error: its code, the enum it belongs to (`extensions.type`), the fields it names, and `more`
    members."""
    extensions: dict[str, Any] = {"type": entity.names.error_code, **(more or {})}
    if code.kind in (ErrorKind.TOO_LONG, ErrorKind.OUT_OF_RANGE):
        extensions["field"] = fields[0] if fields else None
    else:
        extensions["fields"] = list(fields)
    return SvcError(_STATUS_BY_KIND.get(code.kind, Code.INVALID), message, extensions=extensions, code_name=code.code)


def table(entity: Entity) -> Table:
    return Table(entity.schema, entity.table)


def key_value(model: Model, entity: Entity, field: Field, value: Any, path: Sequence[str | int]) -> Any:
    """A key column's value; a global ID of this type is accepted in its place, one of another type refused (SPEC
    "Filter and condition inputs")."""
    decoded = decode_global_id(value) if isinstance(value, str) else None
    if decoded is not None and model.entity_named(decoded[0]) is not None:
        if decoded[0] != entity.type_name:
            raise bad_input(f"a global ID of a {decoded[0]} where a {entity.type_name} key belongs", path)
        value = decoded[1]
    return coerce(value, field.type, model, path)


class WriteInputs:
    """Converts write inputs against one model; paths name fields as `naming` says."""

    def __init__(self, model: Model, naming: Naming = GRAPHQL_NAMING) -> None:
        self.model = model
        self.naming = naming
        self._rendered: dict[Path, tuple[str, ...]] = {}
        #: Each column's `value`, by its type's name and its field's.
        self._readers: dict[tuple[str, str], Callable[[Any, Path], Any]] = {}
        #: `column_values`' plans, by type, member names, path and whether the write updates.
        self._plans: dict[tuple[str, tuple[str, ...], Path, bool], _ColumnPlan | None] = {}

    def _at(self, path: Path) -> tuple[str, ...]:
        """The path as a check names it, rendered once per path (a bulk write's rows repeat the same few)."""
        found = self._rendered.get(path)
        if found is None:
            found = self._rendered[path] = rendered(self.naming, path)
            if len(self._rendered) > _KEPT:
                self._rendered.clear()
        return found

    # --- rows --------------------------------------------------------------------------------------------------

    def create(
        self,
        entity: Entity,
        value: Mapping[str, Any],
        path: Path,
        *,
        on_conflict: Mapping[str, Any] | None = None,
        conflict_path: Path = ("onConflict",),
        previous: bool = False,
        relations: str | None = None,
    ) -> RowWrite:
        """A row to insert (or upsert with `on_conflict`, given at `conflict_path`). `relations`, when set, is why
        relation members are refused here."""
        values, related = self._members(entity, value, path, update=False, refuse_relations=relations)
        conflict = self.on_conflict(entity, on_conflict, values, conflict_path) if on_conflict else None
        return RowWrite(
            table(entity), entity.primary_key, values, path, related, on_conflict=conflict, previous=previous
        )

    def update(
        self,
        entity: Entity,
        where: KeyLookup | None,
        value: Mapping[str, Any],
        path: Path,
        *,
        expected_version: str | None = None,
        version_field: str = "expectedVersion",
        previous: bool = False,
        must_exist: bool = False,
    ) -> RowWrite:
        """Changes to one row by key (`where` is None for a to-one `update`: the key is the row's reference);
        `version_field` names where `expected_version` was given (a STALE_VERSION error names it)."""
        values, related = self._members(entity, value, path, update=True)
        return RowWrite(
            table(entity),
            entity.primary_key,
            values,
            path,
            related,
            where=where,
            expected_version=expected_version,
            version_column=entity.version_column,
            version_field=version_field,
            previous=previous,
            must_exist=must_exist,
        )

    def bulk_values(self, entity: Entity, value: Mapping[str, Any], path: Path) -> Values:
        """A bulk update's `set`: columns only (SPEC "Mutations" 6: bulk update does not write relations)."""
        values, _ = self._members(entity, value, path, update=True, refuse_relations="a bulk update")
        return values

    def _members(
        self,
        entity: Entity,
        value: Any,
        path: Path,
        *,
        update: bool,
        refuse_relations: str | None = None,
    ) -> tuple[Values, tuple[RelatedWrite, ...]]:
        if not isinstance(value, Mapping):
            raise bad_input(f"expected an object of {entity.type_name} fields", self._at(path))
        members = cast("Mapping[str, Any]", value)
        columns = self._columns(entity, members, path, update=update)
        if columns is not None:
            return columns, ()
        values: dict[str, Any] = {}
        paths: dict[str, Path] = {}
        related: list[RelatedWrite] = []
        arcs: list[tuple[Arc, RelatedWrite, Path]] = []  # an update's arcs connected anew
        relations = {relation.name: relation for relation in entity.relations}
        parent = entity.supertype if not update else None
        inherited: dict[str, Any] = {}
        for name, member in members.items():
            at = (*path, self.naming.field(entity, name))
            field = entity.field(name)
            if field is not None:
                values[field.column] = self._written(entity, field, member, at, update=update)
                paths[field.column] = at
                continue
            if parent is not None and (parent_field := parent.column(name)) is not None:
                if refuse_relations is not None:  # the parent's row is a related row
                    raise bad_input(f"{refuse_relations} does not write the {parent.type_name} row", self._at(at))
                inherited[parent_field.name] = member
                continue
            relation = relations.get(name)
            arc = None if relation is not None else next((a for a in entity.arcs if a.name == name), None)
            if relation is None and arc is None:
                raise bad_input(f"{entity.type_name} has no writable field {name!r}", self._at(at))
            if member is None:
                continue
            if refuse_relations is not None:
                raise bad_input(f"{refuse_relations} does not write related rows ({name})", self._at(at))
            if arc is not None:
                related.append(self._arc_connect(entity, arc, member, at, update=update))
                if update:
                    arcs.append((arc, related[-1], at))
                continue
            assert relation is not None
            if not (relation.updatable if update else relation.insertable):
                raise bad_input(f"{name} is read-only", self._at(at))
            related += self._relation(entity, relation, member, at, update=update)
        if parent is not None and inherited:
            related.append(self._parent_row(entity, parent, inherited, members=members, values=values, path=path))
        for arc, connect, at in arcs:
            self._arc_released(entity, arc, connect, values=values, paths=paths, at=at)
        for write in related:
            if write.cardinality is Cardinality.TO_ONE:
                given = [local for local, _ in write.pairs if local in values]
                if given:
                    field = entity.field_of_column(given[0])
                    named = self.naming.field(entity, field.name) if field else given[0]
                    raise bad_input(
                        f"{named} and {write.relation} both set the same reference",
                        write.path,
                    )
        return Values(tuple(values.items()), tuple(paths.items())), tuple(related)

    def _columns(self, entity: Entity, members: Mapping[str, Any], path: Path, *, update: bool) -> Values | None:
        """The values of an input whose members are all the entity's columns, as `_members` takes them (the common
        case, without the walk relations, arcs and a parent's columns need); None when one member is not a column."""
        found = self.column_values(entity, members, path, update=update)
        if found is None:
            return None
        columns, values, paths = found
        return Values(tuple(zip(columns, values, strict=True)), tuple(zip(columns, paths, strict=True)))

    def column_values(
        self, entity: Entity, members: Mapping[str, Any], path: Path, *, update: bool = False
    ) -> tuple[tuple[str, ...], list[Any], tuple[Path, ...]] | None:
        """An input's members when all are columns the write may set: their columns, values (each as `value`
        converts it) and paths, in the members' order; None when one is not such a column (a relation, an arc, a
        parent's column, a read-only column, or nothing: `_members` takes those, in order). What to do with each
        member is worked out once per set of names."""
        key = (entity.type_name, tuple(members), path, update)
        plan = self._plans.get(key, _UNPLANNED)
        if plan is _UNPLANNED:
            if len(self._plans) >= _KEPT:
                self._plans.clear()
            plan = self._plans[key] = self._plan_columns(entity, key[1], path, update=update)
        if plan is None:
            return None
        columns, steps, paths = plan
        values: list[Any] = []
        # A loop, not a comprehension (one call less a row); zip without strict: the plan's steps are as many as
        # the members whose names made it.
        for (read, at), member in zip(steps, members.values()):  # noqa: B905
            values.append(None if member is None else read(member, at))
        return columns, values, paths

    def _plan_columns(self, entity: Entity, names: tuple[str, ...], path: Path, *, update: bool) -> _ColumnPlan | None:
        """How `column_values` reads members of these names: each one's column, its step (a reader of a value other
        than None, which every column reads as None, and the path to call it with) and its path. A column without
        checks of a scalar type is read by the scalar's own reader, given the path rendered (one call a value)."""
        fields = [entity.field(name) for name in names]
        if None in fields:
            return None
        written = cast("list[Field]", fields)
        if not all(field.updatable if update else field.insertable for field in written):
            return None
        paths = tuple((*path, self.naming.field(entity, field.name)) for field in written)
        steps: list[tuple[Callable[[Any, Any], Any], Any]] = []
        for field, at in zip(written, paths, strict=True):
            kind = field.type.scalar if field.type.name != "JSON" else None
            if kind is not None and not self._checks(entity, field):
                steps.append((scalar_reader(kind), self._at(at)))
            else:
                steps.append((self._reader(entity, field), at))
        return tuple(field.column for field in written), tuple(steps), paths

    def _written(self, entity: Entity, field: Field, member: Any, at: Path, *, update: bool) -> Any:
        """A column member's value, refused where the column is not written (read-only here)."""
        if not (field.updatable if update else field.insertable):
            raise bad_input(f"{field.name} is read-only", self._at(at))
        return self.value(entity, field, member, at)

    # --- values ------------------------------------------------------------------------------------------------

    def value(self, entity: Entity, field: Field, value: Any, path: Path) -> Any:
        """A column's value in its database form, checked against the column's length and precision, and its JSON
        Schema."""
        return self._reader(entity, field)(value, path)

    def _reader(self, entity: Entity, field: Field) -> Callable[[Any, Path], Any]:
        """`value` for one column, its steps chosen once (kept by type and field name): the conversion its type
        takes (a scalar's own reader, its path rendered only for an error), then the checks the column has."""
        key = (entity.type_name, field.name)
        reader = self._readers.get(key)
        if reader is None:
            reader = self._readers[key] = self._made_reader(entity, field)
        return reader

    def _checks(self, entity: Entity, field: Field) -> list[Callable[[Any, Path], None]]:
        """The checks a column's converted values take (JSON Schema, length, precision)."""
        checks: list[Callable[[Any, Path], None]] = []
        schema = field.json_schema
        if schema is not None:
            checks.append(lambda converted, path: self._check_json_schema(entity, field, schema, converted, path))
        if field.max_length is not None:
            checks.append(self._length_check(entity, field, field.max_length))
        if field.numeric_precision is not None:
            checks.append(self._precision_check(entity, field, field.numeric_precision, field.numeric_scale or 0))
        return checks

    def _made_reader(self, entity: Entity, field: Field) -> Callable[[Any, Path], Any]:
        type_ = field.type
        checks = self._checks(entity, field)
        kind = type_.scalar if type_.name != "JSON" else None
        if kind is None:

            def read(value: Any, path: Path) -> Any:
                converted = self.write_value(value, type_, path)
                if converted is not None:
                    for check in checks:
                        check(converted, path)
                return converted

            return read
        read_scalar = scalar_reader(kind)

        def read_column(value: Any, path: Path) -> Any:
            if value is None:
                return None
            try:
                converted = read_scalar(value, ())
            except SvcError as error:  # the readers' errors are `bad_input`'s: named here, by the path
                raise bad_input(error.message, self._at(path)) from None
            for check in checks:
                check(converted, path)
            return converted

        return read_column

    def _length_check(self, entity: Entity, field: Field, limit: int) -> Callable[[Any, Path], None]:
        def check_length(converted: Any, path: Path) -> None:
            # Excess spaces are cut, as PostgreSQL does.
            if isinstance(converted, str) and len(converted) > limit and len(converted.rstrip(" ")) > limit:
                raise self._too(entity, field, ErrorKind.TOO_LONG, path, f"at most {limit} characters")

        return check_length

    def _precision_check(self, entity: Entity, field: Field, precision: int, scale: int) -> Callable[[Any, Path], None]:
        digits = precision - scale

        def check_precision(converted: Any, path: Path) -> None:
            # A value with as many digits before the point as allowed is out of range whatever its rounding; one
            # with fewer but one stays in range however it rounds (most do: nothing more to do); the others are
            # rounded with room for every digit (quantize fails past the context's precision).
            if not isinstance(converted, decimal.Decimal) or converted.adjusted() < digits - 1:
                return
            too_big = converted.adjusted() >= digits
            if not too_big:
                with decimal.localcontext() as context:
                    context.prec = max(context.prec, precision + 2)
                    rounded = converted.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
                too_big = abs(rounded) >= decimal.Decimal(10) ** digits
            if too_big:
                limit = f"{precision} digits, {scale} after the point"
                raise self._too(entity, field, ErrorKind.OUT_OF_RANGE, path, limit)

        return check_precision

    def write_value(self, value: Any, type_: ValueType, path: Path) -> Any:
        """A client's value as the JSON `json_populate_record` reads into the column's type."""
        if value is None:
            return None
        kind = type_.kind
        if kind is ValueKind.LIST:
            assert type_.item is not None
            items = cast("list[Any]", value) if isinstance(value, list) else [value]
            return [self.write_value(item, type_.item, (*path, i)) for i, item in enumerate(items)]
        if kind is ValueKind.ENUM:
            return enum_label(value, type_.name, self.model, self._at(path))
        if kind is ValueKind.RANGE:
            return range_literal(value, type_, self.model, self._at(path))
        if kind is ValueKind.COMPOSITE:
            composite = next(c for c in self.model.composites if c.name == type_.name)
            if not isinstance(value, Mapping):
                raise bad_input(f"expected a {composite.input_name} object", self._at(path))
            converted: dict[str, Any] = {}
            for name, member in cast("Mapping[str, Any]", value).items():
                attribute = next((f for f in composite.fields if f.name == name), None)
                if attribute is None:
                    raise bad_input(f"{composite.name} has no field {name!r}", self._at((*path, name)))
                converted[attribute.column] = self.write_value(member, attribute.type, (*path, name))
            return converted
        if type_.name == "JSON":
            json_text(value, self._at(path))  # refuses NUL
            return value
        assert type_.scalar is not None
        return scalar(value, type_.scalar, self._at(path))

    def _check_json_schema(self, entity: Entity, field: Field, check: JsonSchemaCheck, value: Any, path: Path) -> None:
        """SPEC "Extension integrations": a value its JSON Schema rejects is `<COLUMN>_INVALID` (the CHECK's code,
        or the domain's) with `validationErrors`, each `{path (JSON Pointer in the value), message}`."""
        failures = json_schema_errors(check.schema, value)
        if not failures:
            return
        if check.constraint is not None:
            code = next(c for c in entity.error_codes if c.kind is ErrorKind.CHECK and c.constraint == check.constraint)
        else:
            code = next(
                c for c in entity.error_codes if c.kind is ErrorKind.DOMAIN_CHECK and c.columns == (field.column,)
            )
        where = render_path(path)
        message = f"{where} does not match its JSON Schema: {failures[0]['message']}"
        raise typed_error(code, entity, [where], message, {"validationErrors": failures})

    def _too(self, entity: Entity, field: Field, kind: ErrorKind, path: Path, limit: str) -> SvcError:
        code = next((c for c in entity.error_codes if c.kind is kind and c.columns == (field.column,)), None)
        message = f"{render_path(path)} is {'too long' if kind is ErrorKind.TOO_LONG else 'out of range'}: {limit}"
        if code is None:
            return bad_input(message, self._at(path))
        return typed_error(code, entity, [render_path(path)], message)

    # --- keys --------------------------------------------------------------------------------------------------

    def key(self, entity: Entity, value: Any, path: Path) -> KeyLookup:
        """`<Type>KeyInput`: the global ID, or the members of exactly one whole primary or unique key."""
        if not isinstance(value, Mapping):
            raise bad_input(f"expected a {entity.names.key_input} object", self._at(path))
        members = cast("Mapping[str, Any]", value)
        given = {name: member for name, member in members.items() if member is not None}
        if "id" in given and entity.node:
            if len(given) > 1:
                raise bad_input("give the global ID or a key, not both", self._at(path))
            return self.node_key(entity, given["id"], (*path, self.naming.field(entity, "id")))
        columns: dict[str, Any] = {}
        for name, member in given.items():
            at = (*path, self.naming.field(entity, name))
            field = entity.field(name)
            if field is None:
                raise bad_input(f"{name!r} is not a key of {entity.type_name}", self._at(at))
            columns[field.column] = key_value(self.model, entity, field, member, self._at(at))
        for lookup in entity.lookups:
            if set(lookup.columns) == set(columns):
                return KeyLookup(tuple((column, columns[column]) for column in lookup.columns), path)
        keys = " or ".join(
            "(" + ", ".join(self._field_name(entity, c) for c in lookup.columns) + ")" for lookup in entity.lookups
        )
        raise bad_input(f"give one whole key of {entity.type_name}: {keys or 'it has none'}", self._at(path))

    def node_key(self, entity: Entity, node_id: Any, path: Path) -> KeyLookup:
        """A row by global ID, which must name this type."""
        decoded = decode_global_id(node_id)
        if decoded is None or entity.primary_key is None:
            raise bad_input("not a global ID", self._at(path))
        if decoded[0] != entity.type_name:
            raise bad_input(f"a global ID of a {decoded[0]} where a {entity.type_name} belongs", self._at(path))
        (column,) = entity.primary_key
        field = entity.field_of_column(column)
        assert field is not None
        return KeyLookup(((column, coerce(decoded[1], field.type, self.model, self._at(path))),), path)

    def key_arguments(self, entity: Entity, arguments: Mapping[str, Any], path: Path) -> KeyLookup:
        """The primary key given as one argument per column (`updatePerson(rowId: 5, ...)`)."""
        assert entity.primary_key is not None
        values: list[tuple[str, Any]] = []
        for column in entity.primary_key:
            field = entity.field_of_column(column)
            assert field is not None
            at = self._at((*path, self.naming.field(entity, field.name)))
            values.append((column, key_value(self.model, entity, field, arguments[field.name], at)))
        return KeyLookup(tuple(values), path)

    def _field_name(self, entity: Entity, column: str) -> str:
        field = entity.field_of_column(column)
        return self.naming.field(entity, field.name) if field else column

    # --- upserts -----------------------------------------------------------------------------------------------

    def on_conflict(self, entity: Entity, value: Mapping[str, Any], values: Values, path: Path) -> OnConflict:
        """`onConflict`: the unique key (by constraint name or by columns), the action, the columns to update
        (default: every column the input sets, but the key's)."""
        at = path
        if not entity.upsertable:
            raise bad_input(f"{entity.type_name} rows cannot be upserted", self._at(at))
        constraint, names = value.get("constraint"), value.get("columns")
        if (constraint is None) == (names is None):
            raise bad_input("give the conflicting unique key as constraint or as columns (one of them)", self._at(at))
        if constraint is not None:
            lookup = next((lookup for lookup in entity.lookups if lookup.constraint == constraint), None)
            if lookup is None:
                known = ", ".join(lookup.constraint for lookup in entity.lookups)
                raise bad_input(
                    f"{constraint!r} is not a unique key of {entity.type_name} (one of {known})", self._at(at)
                )
        else:
            assert names is not None
            columns = {self._column(entity, name, (*at, "columns")) for name in names}
            lookup = next((lookup for lookup in entity.lookups if set(lookup.columns) == columns), None)
            if lookup is None:
                raise bad_input(
                    f"{', '.join(names)} are not the columns of a unique key of {entity.type_name}", self._at(at)
                )
        if value.get("action", "UPDATE") == "NOTHING":
            return OnConflict(lookup.columns, (), nothing=True)
        update = value.get("update")
        if update is None:
            # Of the columns the input sets, those the update may write (under `rbac`, a role may insert a column
            # it may not update: the conflicting row keeps its value there).
            updatable = {field.column for field in entity.fields if field.updatable}
            chosen = tuple(c for c in values.columns() if c not in lookup.columns and c in updatable)
        else:
            chosen = tuple(self._column(entity, name, (*at, "update"), update=True) for name in update)
        return OnConflict(lookup.columns, chosen)

    def _column(self, entity: Entity, name: str, path: Path, *, update: bool = False) -> str:
        """A field an upsert names: a key column it inserts (`columns`), or a column it updates (`update`)."""
        field = entity.field(name)
        if field is None or not (field.updatable if update else field.insertable):
            raise bad_input(f"{name!r} is not a writable field of {entity.type_name}", self._at(path))
        return field.column

    # --- relations ---------------------------------------------------------------------------------------------

    def _relation(
        self, entity: Entity, relation: Relation, value: Mapping[str, Any], path: Path, *, update: bool
    ) -> list[RelatedWrite]:
        target = self.model.entity(relation.target)
        if relation.kind is Cardinality.TO_ONE:
            return self._to_one(entity, relation, target, value, path)
        members = [name for name in _TO_MANY_ORDER if value.get(name) is not None]
        if "sync" in members and len(members) > 1:
            raise bad_input("sync makes the children exactly the rows given: it takes no other member", self._at(path))
        return [self._to_many(entity, relation, target, name, value[name], path=(*path, name)) for name in members]

    def _arc_connect(self, entity: Entity, arc: Arc, value: Any, path: Path, *, update: bool) -> RelatedWrite:
        """`target: {connect: {<Type>: <key>}}`: the connect of the arc's relation to that type (SPEC "Embedding
        controls": `target`); exactly one type, of the arc's targets, else BAD_USER_INPUT."""
        if not self.model.arc_connects(entity, arc, update=update):
            raise bad_input(f"{entity.type_name} has no writable field {arc.name!r}", self._at(path))
        relations = {target.type_name: r for r, target in self.model.arc_targets(entity, arc, update=update)}
        members: Mapping[str, Any] = cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}
        connect = members.get("connect")
        if set(members) != {"connect"} or not isinstance(connect, Mapping):
            raise bad_input(f"{arc.name} takes {{connect: {{<type>: <key>}}}}", self._at(path))
        connect = cast("Mapping[str, Any]", connect)
        given = [name for name, member in connect.items() if member is not None]
        at = (*path, "connect")
        if len(given) != 1 or given[0] not in relations:
            raise bad_input(
                f"give exactly one of {', '.join(relations)} to connect {arc.name}; got {', '.join(given) or 'none'}",
                self._at(at),
            )
        (type_name,) = given
        relation, target, at = relations[type_name], self.model.entity(relations[type_name].target), (*at, type_name)
        return self._with(relation, target, K.CONNECT, at, keys=(self.key(target, connect[type_name], at),))

    def _arc_released(
        self,
        entity: Entity,
        arc: Arc,
        connect: RelatedWrite,
        *,
        values: dict[str, Any],
        paths: dict[str, Path],
        at: Path,
    ) -> None:
        """An update connecting an arc anew lets go of what it pointed at: the keys of the arc's other relations are
        set to NULL (so its CHECK holds), unless the update sets one of them itself, which is refused."""
        for relation in entity.arc_relations(arc):
            if relation.name == connect.relation:
                continue
            for local, _ in relation.pairs:
                if local in values:
                    field = entity.field_of_column(local)
                    named = self.naming.field(entity, field.name) if field else local
                    raise bad_input(f"{named} and {arc.name} both set what {arc.name} points at", self._at(at))
                values[local] = None
                paths[local] = at

    def _parent_row(
        self,
        entity: Entity,
        parent: Supertype,
        inherited: dict[str, Any],
        *,
        members: Mapping[str, Any],
        values: dict[str, Any],
        path: Path,
    ) -> RelatedWrite:
        """A table-per-type subtype's create given its parent's columns: the parent's row is created first, as by
        `<relation>: {create: ...}`, and the subtype's row refers to it (its key, when given, is the parent's)."""
        relation = next(r for r in entity.relations if r.name == parent.relation)
        if members.get(relation.name) is not None:
            given = next(name for name, field in parent.columns if field.name in inherited)
            raise bad_input(
                f"{given} and {relation.name} both write the {parent.type_name} row", self._at((*path, given))
            )
        target = self.model.entity(parent.target)
        for local, remote in relation.pairs:
            own, inherited_key = entity.field_of_column(local), target.field_of_column(remote)
            if local in values and own is not None and inherited_key is not None:
                del values[local]
                inherited[inherited_key.name] = members[own.name]
        row = self.create(target, inherited, path)
        # errors name a parent column as the subtype's input does (`input.animalName`)
        named = {field.column: (*path, self.naming.field(entity, name)) for name, field in parent.columns}
        paths = tuple((column, named.get(column, at)) for column, at in row.values.paths)
        row = attrs.evolve(row, values=Values(row.values.values, paths))
        return self._with(relation, target, K.CREATE, (*path, relation.name), rows=(row,))

    def _base(self, relation: Relation, target: Entity, kind: RelationWriteKind, path: Path) -> RelatedWrite:
        junction = self.model.entity(relation.junction) if relation.junction else None
        return RelatedWrite(
            kind=kind,
            relation=relation.name,
            target=table(target),
            target_key=target.primary_key or (),
            cardinality=relation.kind,
            pairs=relation.pairs,
            junction=table(junction) if junction else None,
            junction_pairs=relation.junction_pairs,
            junction_parent_pairs=relation.pairs if junction else (),
            path=path,
        )

    def _to_one(
        self, entity: Entity, relation: Relation, target: Entity, value: Mapping[str, Any], path: Path
    ) -> list[RelatedWrite]:
        given = [name for name, member in value.items() if member is not None and member is not False]
        if not given and value.get("disconnect") is False:
            return []  # `disconnect: false` asks for nothing
        if len(given) != 1:
            raise bad_input(
                f"give exactly one of {', '.join(value) or 'connect, create'} for {relation.name}", self._at(path)
            )
        (name,) = given
        member, at = value[name], (*path, name)
        if name == "connect":
            return [self._with(relation, target, K.CONNECT, at, keys=(self.key(target, member, at),))]
        if name == "create":
            return [self._with(relation, target, K.CREATE, at, rows=(self.create(target, member, at),))]
        if name == "connectOrCreate":
            where = self.key(target, member["where"], (*at, "where"))
            create = self.create(target, member["create"], (*at, "create"), relations="connectOrCreate")
            return [self._with(relation, target, K.CONNECT_OR_CREATE, at, keys=(where,), rows=(create,))]
        if name == "disconnect":
            columns = [local for local, _ in relation.pairs]
            if not all(self._nullable(entity, column) for column in columns):
                raise bad_input(f"{relation.name} cannot be disconnected: its key is not nullable", self._at(at))
            return [self._with(relation, target, K.DISCONNECT, at)]
        assert name == "update"
        data = self.update(target, None, member, at, must_exist=True)
        return [self._with(relation, target, K.UPDATE, at, rows=(data,))]

    def _to_many(
        self, entity: Entity, relation: Relation, target: Entity, name: str, items: Sequence[Any], *, path: Path
    ) -> RelatedWrite:
        many_to_many = relation.kind is Cardinality.MANY_TO_MANY
        at = [(*path, i) for i in range(len(items))]
        if name in ("connect", "disconnect", "set", "delete"):
            if name in ("disconnect", "set") and not many_to_many:
                children = [child for _, child in relation.pairs]
                if not all(self._nullable(target, column) for column in children):
                    raise bad_input(
                        f"{relation.name} cannot be released ({name}): their key is not nullable", self._at(path)
                    )
            keys = tuple(self.key(target, item, at[i]) for i, item in enumerate(items))
            kind = {"connect": K.CONNECT, "disconnect": K.DISCONNECT, "set": K.SET, "delete": K.DELETE}[name]
            return self._with(relation, target, kind, path, keys=keys)
        if name == "create":
            rows = tuple(self.create(target, item, at[i]) for i, item in enumerate(items))
            return self._with(relation, target, K.CREATE, path, rows=rows)
        if name == "connectOrCreate":
            keys = tuple(self.key(target, item["where"], (*at[i], "where")) for i, item in enumerate(items))
            rows = tuple(
                self.create(target, item["create"], (*at[i], "create"), relations="connectOrCreate")
                for i, item in enumerate(items)
            )
            return self._with(relation, target, K.CONNECT_OR_CREATE, path, keys=keys, rows=rows)
        if name == "update":
            rows = tuple(
                self.update(
                    target, self.key(target, item["where"], (*at[i], "where")), item["data"], (*at[i], "data"),
                    must_exist=True,
                )
                for i, item in enumerate(items)
            )  # fmt: skip
            return self._with(relation, target, K.UPDATE, path, rows=rows)
        assert name == "sync"
        if target.primary_key is None:
            raise bad_input(f"{relation.name} rows have no primary key to sync by", self._at(path))
        rows = tuple(self.create(target, item, at[i], relations="sync") for i, item in enumerate(items))
        return self._with(relation, target, K.SYNC, path, rows=rows)

    def _with(
        self, relation: Relation, target: Entity, kind: RelationWriteKind, path: Path, **members: Any
    ) -> RelatedWrite:
        return attrs.evolve(self._base(relation, target, kind, path), **members)

    @staticmethod
    def _nullable(entity: Entity, column: str) -> bool:
        field = entity.field_of_column(column)
        return field is None or field.nullable
