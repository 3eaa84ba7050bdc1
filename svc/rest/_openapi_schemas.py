"""The named JSON Schemas of the OpenAPI document (`components.schemas`): rows, write bodies, nested writes, enums,
composites, ranges and records (SPEC "Naming", "Resources and their fields", "Nested writes").

Names: a row is its GraphQL type (`Film`); enums, composites, ranges and records keep their GraphQL names; the schemas
the REST API adds are `<Type>Create`, `<Type>Update`, `<Type>Key` and the nested-write shapes (`<Type>ToOne`,
`<Type>ToOneUpdate`, `<Type>ToMany`, `<Type>ToManyUpdate`, `<Type>ManyToMany`, `<Type>ManyToManyUpdate`,
`<Type>ConnectOrCreate`, `<Type>UpdateByKey`), the aggregate shapes (`<Type>Aggregate`, `<Type>AggregateGroup`,
`<Type>AggregateRequest`), plus `Problem`, `SearchRequest`, `JsonPatch` and `RestIndex`. Such a
name that a GraphQL type (or another added name) already takes is written with a dot instead (`Film.Create`,
`svc.Problem`): GraphQL names have no dots, so the dotted form is always free, and the choice depends on the model
alone. Which members a write body has, and which are required, mirrors GraphQL's `Create<T>Input` and `Update<T>Input`.

Schemas are built when first referenced, so the document holds only those it uses; `all()` lists them by name.
"""

from collections import Counter
from collections.abc import Mapping

import attrs

from svc.config import Config
from svc.model import (
    REST_TYPENAME,
    SERVICE_TYPE_NAMES,
    Arc,
    Cardinality,
    Entity,
    Field,
    JsonSchemaCheck,
    Model,
    Operation,
    RecordType,
    ValueKind,
    ValueType,
    composite_type_names,
    enum_type_names,
    openapi_json_schema,
    range_type_names,
    rebased,
)
from svc.plan import member_fields, member_type, offered_members

from ._openapi_fixed import json_patch, problem, search_request
from ._openapi_values import Schema, bounded, described, nullable, ref, scalar

#: What the REST API adds per entity type (`<Type><suffix>`), and the service's own schemas.
_ENTITY_SUFFIXES = (
    "Create", "Update", "Key", "ToOne", "ToOneUpdate", "ToMany", "ToManyUpdate", "ManyToMany", "ManyToManyUpdate",
    "ConnectOrCreate", "UpdateByKey", "Aggregate", "AggregateGroup", "AggregateRequest",
)  # fmt: skip
_SERVICE_SCHEMAS = ("Problem", "SearchRequest", "JsonPatch", "RestIndex")


class Schemas:
    """The schemas of one document, built on first reference; each method answers a `$ref` to one."""

    def __init__(self, model: Model, config: Config) -> None:
        self.model = model
        self.config = config
        self._built: dict[str, Schema] = {}
        self._names = _added_names(model)

    def all(self) -> dict[str, Schema]:
        """Every schema referenced so far, by name."""
        return dict(sorted(self._built.items()))

    def name(self, owner: str, suffix: str) -> str:
        """The name of a schema the REST API adds: `<owner><suffix>`, else `<owner>.<suffix>` (module docstring)."""
        return self._names.get((owner, suffix), f"{owner}.{suffix}")

    def service_name(self, name: str) -> str:
        return self._names.get(("", name), f"svc.{name}")

    # --- values ------------------------------------------------------------------------------------------------

    def value(self, value: ValueType, *, nullable_: bool = False) -> Schema:
        """The schema of a value of this type (in rows, bodies, arguments and results alike)."""
        schema = self._value(value)
        return nullable(schema) if nullable_ else schema

    def _value(self, value: ValueType) -> Schema:
        if value.kind is ValueKind.LIST:
            assert value.item is not None
            return {"type": "array", "items": self.value(value.item, nullable_=value.item_nullable)}
        if value.kind is ValueKind.ENUM:
            return self._enum(value.name)
        if value.kind is ValueKind.COMPOSITE:
            return self._composite(value.name)
        if value.kind is ValueKind.RANGE:
            return self._range(value.name)
        return scalar(value)

    def field(self, field: Field, *, bounds: bool = False) -> Schema:
        """A column's property: its value (null when the column is nullable), description and deprecation.

        `bounds` adds the column's length and simple CHECK bounds (write bodies only: a row read is what the database
        holds). CHECK patterns are left out: they are POSIX regular expressions, not the ECMA-262 ones JSON Schema
        means.
        """
        schema = self._json_schema(field.json_schema) if field.json_schema is not None else self._value(field.type)
        if bounds:
            schema = bounded(schema, field)
        schema = described(nullable(schema) if field.nullable else schema, field.description)
        if field.deprecation is not None:
            schema["deprecated"] = True
        return schema

    def _json_schema(self, check: JsonSchemaCheck) -> Schema:
        """A JSON column's schema (SPEC "Extension integrations"): inline, or its component when a domain holds it
        (`Json.<Domain>`) or it refers to itself (`Json.<table>.<column>`, its references rebased on it)."""
        document, recursive = openapi_json_schema(check.schema)
        schema: Schema = document if isinstance(document, dict) else ({} if document else {"not": {}})
        if not (check.domain or recursive):
            return schema
        name = check.component
        if name not in self._built:
            self._built[name] = rebased(schema, f"#/components/schemas/{name}")
        return ref(name)

    def _enum(self, name: str) -> Schema:
        if name not in self._built:
            enum = self.model.enum(name)
            schema: Schema = {"type": "string", "enum": [value for _, value in enum.values]}
            self._built[name] = described(schema, enum.description)
        return ref(name)

    def _composite(self, name: str) -> Schema:
        if name not in self._built:
            composite = next(c for c in self.model.composites if c.name == name)
            self._built[name] = {}  # before its attributes: a composite may refer to itself
            schema = {"type": "object", "properties": {f.name: self.field(f) for f in composite.fields}}
            self._built[name] = described(schema, composite.description)
        return ref(name)

    def _range(self, name: str) -> Schema:
        if name not in self._built:
            range_type = next(r for r in self.model.ranges if r.name == name)
            bound = f"{name}Bound"
            self._built[name] = {
                "type": "object",
                "description": "A range; a side without a bound (and both sides of an empty range) is null.",
                "properties": {"start": nullable(ref(bound)), "end": nullable(ref(bound))},
            }
            self._built[bound] = {
                "type": "object",
                "properties": {"value": self.value(range_type.bound), "inclusive": {"type": "boolean"}},
                "required": ["value", "inclusive"],
            }
        return ref(name)

    def record(self, record: RecordType) -> Schema:
        """A function's OUT/TABLE columns: an object of its own, named as in GraphQL."""
        if record.name not in self._built:
            self._built[record.name] = {
                "type": "object",
                "properties": {f.name: self.field(f) for f in record.fields},
            }
        return ref(record.name)

    # --- rows and write bodies ---------------------------------------------------------------------------------

    def row(self, entity: Entity) -> Schema:
        """`<Type>`: each column under its REST name, in column order, then `rowVersion` for a keyed entity.

        No `required` list and other members allowed: `fields=` leaves members out, `include=` adds relations and
        `cursors=true` adds `_cursor`.
        """
        name = entity.type_name
        if name not in self._built:
            self._built[name] = {}
            properties = {f.rest_name: self.field(f) for f in entity.fields}
            properties.update(self._subtype_members(entity))
            if entity.primary_key is not None:
                properties["rowVersion"] = {
                    "type": ["string", "null"],
                    "description": "The row's version: its `ETag` without quotes, for `If-Match`. Null in rows as they"
                    " were (`previous`, deleted rows) and where the role may not read it.",
                }
            for arc in entity.arcs:
                properties[arc.name] = {
                    **nullable(self._arc(entity, arc)),
                    "description": f"With `include={arc.name}`: the row the exclusive arc `{arc.check}` points at,"
                    " with `__typename` naming its type.",
                }
            self._built[name] = {
                "type": "object",
                "description": _row_description(entity),
                "properties": properties,
            }
        return ref(name)

    def _arc(self, entity: Entity, arc: Arc) -> Schema:
        """`<Type><Arc>`: one of the rows an exclusive arc may point at, told apart by `__typename`."""
        if arc.type_name not in self._built:
            self._built[arc.type_name] = {}
            mapping: dict[str, str] = {}
            for relation in entity.arc_relations(arc):
                target = self.model.entity(relation.target)
                member = f"{arc.type_name}{target.type_name}"
                self._built[member] = {
                    "allOf": [
                        self.row(target),
                        {
                            "type": "object",
                            "properties": {"__typename": {"const": target.type_name}},
                            "required": ["__typename"],
                        },
                    ]
                }
                mapping[target.type_name] = ref(member)["$ref"]
            self._built[arc.type_name] = {
                "description": f"A row `{entity.type_name}.{arc.name}` may point at.",
                "oneOf": [{"$ref": target} for target in mapping.values()],
                "discriminator": {"propertyName": "__typename", "mapping": mapping},
            }
        return ref(arc.type_name)

    def _arc_connect(self, entity: Entity, arc: Arc) -> Schema:
        """`<Type><Arc>Input`: `{connect: {<type>: <key>}}`, exactly one type (as GraphQL's input)."""
        keys = {target.type_name: self.key(target) for _, target in self.model.arc_input(entity, arc)}
        if arc.input_name not in self._built:
            self._built[arc.input_name] = {
                "type": "object",
                "description": f"Sets `{arc.name}`: connects the row of the one type given.",
                "properties": {
                    "connect": {
                        "type": "object",
                        "properties": keys,
                        "minProperties": 1,
                        "maxProperties": 1,
                        "additionalProperties": False,
                    }
                },
                "required": ["connect"],
                "additionalProperties": False,
            }
        return ref(arc.input_name)

    def _subtype_members(self, entity: Entity) -> dict[str, Schema]:
        """A table-per-type parent's `__typename` and its subtypes' columns (null unless the row is of the subtype);
        `filter[<name>]` and `order=<name>` take them too."""
        if not entity.subtypes:
            return {}
        names = [entity.type_name, *(subtype.type_name for subtype in entity.subtypes)]
        members: dict[str, Schema] = {
            REST_TYPENAME: {
                "type": "string",
                "enum": names,
                "description": f"The row's concrete type: the subtype it has a row of, else `{entity.type_name}`.",
            }
        }
        for subtype in entity.subtypes:
            for name, field in subtype.columns:
                schema = nullable(self.field(attrs.evolve(field, description=None, deprecation=None)))
                members[name] = described(schema, f"`{subtype.type_name}` rows only (null in others).")
        return members

    def _parent_members(self, entity: Entity) -> dict[str, Schema]:
        """A table-per-type subtype's parent columns: given, the parent's row is created with the subtype's."""
        parent = entity.supertype
        if parent is None:
            return {}
        return {
            name: described(
                self.field(attrs.evolve(field, description=None), bounds=True),
                f"`{parent.type_name}.{field.rest_name}`: creates the `{parent.type_name}` row too.",
            )
            for name, field in parent.columns
        }

    def create(self, entity: Entity) -> Schema:
        """`<Type>Create`: the writable columns and the nested writes of its relations, as GraphQL's
        `Create<Type>Input` (SPEC "Nested writes"). Required: the columns with no NULL, default or identity to fall
        back on, unless a to-one relation member can fill them."""
        name = self.name(entity.type_name, "Create")
        if name not in self._built:
            self._built[name] = {}
            covered = {column for r in entity.relations if r.holds_key and r.insertable for column, _ in r.pairs}
            writable = [f for f in entity.fields if f.insertable]
            schema: Schema = {
                "type": "object",
                "description": f"One new `{entity.type_name}` row; relation members write related rows too.",
                "properties": {
                    **{f.rest_name: self.field(f, bounds=True) for f in writable},
                    **self._parent_members(entity),
                    **self._relation_members(entity, update=False),
                },
            }
            required = [f.rest_name for f in writable if not f.optional_on_create and f.column not in covered]
            if required:
                schema["required"] = required
            self._built[name] = {**schema, "additionalProperties": False}
        return ref(name)

    def update(self, entity: Entity) -> Schema:
        """`<Type>Update`: the members given are set (null sets NULL); at least one."""
        name = self.name(entity.type_name, "Update")
        if name not in self._built:
            self._built[name] = {}
            self._built[name] = {
                "type": "object",
                "description": f"Changes to one `{entity.type_name}` row: the members given are set (null sets NULL).",
                "properties": {
                    **{f.rest_name: self.field(f, bounds=True) for f in entity.fields if f.updatable},
                    **self._relation_members(entity, update=True),
                },
                "minProperties": 1,
                "additionalProperties": False,
            }
        return ref(name)

    def _relation_members(self, entity: Entity, *, update: bool) -> dict[str, Schema]:
        """The relation members of a write body: which relations and which shape, as the GraphQL inputs have them."""
        members = {}
        for relation in entity.relations:
            target = self.model.entity(relation.target)
            if not (relation.updatable if update else relation.insertable):
                continue
            if Operation.CREATE not in target.operations and not target.primary_key:
                continue
            if relation.kind is Cardinality.TO_ONE and relation.holds_key:
                kind = "ToOne"
            elif relation.kind is Cardinality.MANY_TO_MANY:
                kind = "ManyToMany"
            elif relation.kind is Cardinality.TO_MANY:
                kind = "ToMany"
            else:
                continue
            nested = self._nested(target, kind + ("Update" if update else ""))
            members[relation.name] = described(nested, relation.description)
        for arc in entity.arcs:
            if self.model.arc_connects(entity, arc, update=update):
                members[arc.name] = self._arc_connect(entity, arc)
        return members

    def _nested(self, entity: Entity, kind: str) -> Schema:
        """A nested write of related rows (SPEC "Nested writes": connect, create, connectOrCreate; in updates also
        disconnect, set, update, delete, sync)."""
        name = self.name(entity.type_name, kind)
        if name in self._built:
            return ref(name)
        self._built[name] = {}
        keyed = entity.primary_key is not None or bool(entity.lookups)
        creates = Operation.CREATE in entity.operations
        many = not kind.startswith("ToOne")
        members: dict[str, Schema] = {}
        if keyed:
            members["connect"] = _many(self.key(entity), many)
        if creates:
            members["create"] = _many(self.create(entity), many)
        if keyed and creates:
            members["connectOrCreate"] = _many(self._pair(entity, "ConnectOrCreate"), many)
        if kind == "ToOneUpdate":
            members["disconnect"] = {"type": "boolean", "description": "true: set the foreign key to NULL."}
            if Operation.UPDATE in entity.operations:
                members["update"] = self.update(entity)
        if kind in ("ToManyUpdate", "ManyToManyUpdate") and keyed:
            members["disconnect"] = _many(self.key(entity), True)
            members["set"] = _many(self.key(entity), True)
        if kind == "ToManyUpdate" and keyed:
            if Operation.UPDATE in entity.operations:
                members["update"] = _many(self._pair(entity, "UpdateByKey"), True)
            if Operation.DELETE in entity.operations:
                members["delete"] = _many(self.key(entity), True)
            if creates:
                members["sync"] = _many(self.create(entity), True)
        self._built[name] = {
            "type": "object",
            "description": f"Writes of related `{entity.type_name}` rows.",
            "properties": members,
            "additionalProperties": False,
        }
        return ref(name)

    def _pair(self, entity: Entity, kind: str) -> Schema:
        """`<Type>ConnectOrCreate` {where, create} and `<Type>UpdateByKey` {where, data}."""
        name = self.name(entity.type_name, kind)
        if name not in self._built:
            self._built[name] = {}
            second = ("create", self.create(entity)) if kind == "ConnectOrCreate" else ("data", self.update(entity))
            self._built[name] = {
                "type": "object",
                "properties": {"where": self.key(entity), second[0]: second[1]},
                "required": ["where", second[0]],
                "additionalProperties": False,
            }
        return ref(name)

    def key(self, entity: Entity) -> Schema:
        """`<Type>Key`: a row by its primary key or another unique key (a global ID in place of a single-column
        key of a type that has them)."""
        name = self.name(entity.type_name, "Key")
        if name not in self._built:
            columns = list(entity.primary_key or ())
            for lookup in entity.lookups:
                columns += [c for c in lookup.columns if c not in columns]
            properties = {}
            for column in columns:
                field = entity.field_of_column(column)
                if field is None:
                    continue
                schema = self.value(field.type)
                if entity.node and entity.primary_key == (column,):
                    schema = {"anyOf": [schema, {"type": "string", "description": "The row's global ID."}]}
                properties[field.rest_name] = schema
            self._built[name] = {
                "type": "object",
                "description": f"One `{entity.type_name}` row, by its primary key or another unique key.",
                "properties": properties,
                "minProperties": 1,
                "additionalProperties": False,
            }
        return ref(name)

    # --- aggregates (SPEC "Aggregate request members") --------------------------------------------------------------

    def aggregate(self, entity: Entity, *, grouped: bool) -> Schema:
        """`<Type>Aggregate` (`{count, <member>: {<column>: value}}`) or `<Type>AggregateGroup` (with `keys`)."""
        name = self.name(entity.type_name, "AggregateGroup" if grouped else "Aggregate")
        if name not in self._built:
            properties: dict[str, Schema] = {}
            if grouped:
                properties["keys"] = {
                    "type": "object",
                    "description": "The group's keys by `group` item (`staffId`, `paymentDate:month`): truncated dates"
                    " and timestamps as ISO 8601 strings, BigInt and Decimal as strings, enums as their values.",
                    "additionalProperties": True,
                }
            properties["count"] = {"type": "integer", "minimum": 0, "description": "The rows of the set or group."}
            for member in offered_members(entity):
                columns = {
                    field.rest_name: self.value(member_type(member, field), nullable_=True)
                    for field in member_fields(entity, member)
                }
                properties[member.value] = {"type": "object", "properties": columns, "additionalProperties": False}
            description = "A group of rows: its keys and aggregates." if grouped else "Aggregates of a set of rows."
            self._built[name] = {
                "type": "object",
                "description": description,
                "properties": properties,
                "required": ["keys", "count"] if grouped else ["count"],
                "additionalProperties": False,
            }
        return ref(name)

    def aggregate_request(self, entity: Entity, members: Mapping[str, Schema]) -> Schema:
        """`<Type>AggregateRequest`: the query parameters as body members, or named `sets` of them."""
        name = self.name(entity.type_name, "AggregateRequest")
        if name not in self._built:
            filter_: Schema = {
                "type": "object",
                "description": "A `<Type>Filter` object.",
                "additionalProperties": True,
            }
            one = {"filter": filter_, **members}
            self._built[name] = {
                "type": "object",
                "description": "The members of `GET` as a JSON body (column lists as arrays or comma-separated"
                " strings, `having` in the GraphQL `<Type>HavingInput` shape); or `sets`: named sets of such members"
                " (each may have its own `filter`), beside nothing but the `filter` every set reads.",
                "properties": {
                    **one,
                    "sets": {
                        "type": "object",
                        "additionalProperties": {"type": "object", "properties": one, "additionalProperties": False},
                    },
                },
                "additionalProperties": False,
            }
        return ref(name)

    # --- the service's own -------------------------------------------------------------------------------------

    def problem(self) -> Schema:
        name = self.service_name("Problem")
        if name not in self._built:
            self._built[name] = problem()
        return ref(name)

    def search_request(self) -> Schema:
        name = self.service_name("SearchRequest")
        if name not in self._built:
            self._built[name] = search_request(self.config)
        return ref(name)

    def json_patch(self) -> Schema:
        name = self.service_name("JsonPatch")
        if name not in self._built:
            self._built[name] = json_patch()
        return ref(name)

    def rest_index(self) -> Schema:
        name = self.service_name("RestIndex")
        if name not in self._built:
            self._built[name] = {
                "type": "object",
                "description": "The resources (name, schema, GraphQL type, path), the functions (paths under"
                " `/rest/rpc/`) and the path of this document.",
            }
        return ref(name)


def _added_names(model: Model) -> dict[tuple[str, str], str]:
    """The plain name of each schema the REST API adds, where it is free: no GraphQL type has it and no other added
    schema would (keys: (entity type, suffix), or ("", service schema))."""
    taken = set(SERVICE_TYPE_NAMES) | {record.name for record in model.records}
    for entity in model.entities:
        taken |= set(entity.names.all())
    for enum in model.enums:
        taken |= set(enum_type_names(enum.name))
    for composite in model.composites:
        taken |= set(composite_type_names(composite.name))
    for range_type in model.ranges:
        taken |= set(range_type_names(range_type.name))
    wanted = {(e.type_name, suffix): e.type_name + suffix for e in model.entities for suffix in _ENTITY_SUFFIXES}
    wanted |= {("", name): name for name in _SERVICE_SCHEMAS}
    counts = Counter(wanted.values())
    return {key: name for key, name in wanted.items() if counts[name] == 1 and name not in taken}


def _row_description(entity: Entity) -> str:
    kind = entity.kind.name.lower().replace("_", " ")
    text = entity.description or f"A row of the {kind} `{entity.schema}.{entity.table}`."
    return (
        f"{text}\n\n`fields=` picks members, `include=` adds relations (to-one: an object or null; to-many: an array)"
        " and `cursors=true` adds `_cursor`; a list's `window=`/`running=` add `_window` (`rowNumber`, `rank`,"
        " `denseRank`, `percentRank`, `runningSum: {<column>: sum}`)."
    )


def _many(schema: Schema, many: bool) -> Schema:
    return {"type": "array", "items": schema} if many else schema
