"""The federation v2 subgraph (SPEC "Federation and subscriptions", `graphql.federation.enabled`): which types are
entities and by which keys, the subgraph SDL that `_service { sdl }`, `/subgraph.graphql` and `export-subgraph`
give, and the definitions the served schema adds for `_entities` and `_service`.

An entity is a type whose rows can be read by primary key (its read operation is not omitted) with every key
column exposed: `@key(fields: "<key fields>")` with the fields as the schema names them, and `@key(fields: "id")`
too when the type has global IDs. `PageInfo` is `@shareable`: other subgraphs commonly define it too.
"""

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphql import FieldNode

from svc.errors import Code, SvcError
from svc.model import Entity, Model, Operation
from svc.plan import EntityLookup, Link, ReadKind, RootField, bad_input, decode_global_id, key_value

from ._field_collector import Collector

if TYPE_CHECKING:
    from ._query_planner import Place, PlanRun

#: The federation version the subgraph SDL links to (an identifier: nothing is fetched).
FEDERATION_URL = "https://specs.apollo.dev/federation/v2.3"
LINK = f'extend schema @link(url: "{FEDERATION_URL}", import: ["@key", "@shareable"])\n'
SHAREABLE = " @shareable"

_DEFINITIONS = '''
"""Any representation of an entity: its `__typename` and its key fields."""
scalar _Any

scalar federation__FieldSet

scalar link__Import

enum link__Purpose {
  SECURITY
  EXECUTION
}

directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA

directive @key(fields: federation__FieldSet!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE

directive @shareable repeatable on OBJECT | FIELD_DEFINITION

"""This subgraph as the federation gateway composes it."""
type _Service {
  """The subgraph SDL."""
  sdl: String
}
'''


def entity_keys(entity: Entity) -> tuple[str, ...]:
    """The `@key` field sets of an entity (none: not an entity of the subgraph)."""
    if Operation.READ not in entity.operations or not entity.primary_key:
        return ()
    fields = [entity.field_of_column(column) for column in entity.primary_key]
    if any(field is None for field in fields):
        return ()
    keys = [" ".join(field.name for field in fields if field is not None)]
    if entity.node and keys[0] != "id":
        keys.append("id")
    return tuple(keys)


def key_directives(entity: Entity) -> str:
    """` @key(fields: "rowId") @key(fields: "id")`, or "" for a type that is not an entity."""
    return "".join(f' @key(fields: "{fields}")' for fields in entity_keys(entity))


def served_definitions(model: Model) -> str:
    """What the served schema adds to the subgraph's types: the federation directives and scalars, `_Entity`,
    `_Service`, and the Query fields `_entities` (when there is an entity) and `_service`."""
    entities = [entity.type_name for entity in model.entities if entity_keys(entity)]
    text = _DEFINITIONS
    fields = []
    if entities:
        text += f'\n"""Every type of this subgraph with a `@key`."""\nunion _Entity = {" | ".join(entities)}\n'
        fields.append(
            '  """The entities the representations name, in their order (null for a row that does not exist)."""\n'
            "  _entities(representations: [_Any!]!): [_Entity]!"
        )
    fields.append('  """This subgraph, for the gateway."""\n  _service: _Service!')
    return text + "\nextend type Query {\n" + "\n".join(fields) + "\n}\n"


def subgraph_sdl(printed: str) -> str:
    """The subgraph SDL of the printed schema document without the served definitions."""
    return LINK + "\n" + printed


# --- planning ------------------------------------------------------------------------------------------------------


def plan_entities(
    run: "PlanRun", key: str, place: "Place", nodes: list[FieldNode], representations: list[Any]
) -> RootField:
    """`_entities(representations:)` as ONE root of the read (SPEC: one statement per request, however many
    representations and types): per type, its representations' keys as a JSON parameter and one read by key."""
    maximum = run.limits.page_size.max
    if maximum is not None and len(representations) > maximum:
        raise SvcError(
            Code.PAGE_SIZE_EXCEEDED,
            f"{len(representations)} representations, more than the largest page ({maximum})",
            extensions={"limit": maximum, "actual": len(representations)},
        )
    grouped: dict[str, tuple[Entity, list[dict[str, Any]]]] = {}
    for position, representation in enumerate(representations):
        path = ("representations", position)
        if not isinstance(representation, dict):
            raise bad_input("a representation is an object with __typename and key fields", path)
        type_name = representation.get("__typename")
        entity = run.model.entity_named(type_name) if isinstance(type_name, str) else None
        if entity is None or not entity_keys(entity):
            raise bad_input(f"{type_name!r} is not an entity of this subgraph", [*path, "__typename"])
        row = _key_row(run.model, entity, representation, path)
        grouped.setdefault(entity.type_name, (entity, []))[1].append({**row, "__position": position})
    lookups = []
    for entity, rows in grouped.values():
        assert entity.primary_key is not None
        link = Link(tuple((column, column) for column in entity.primary_key))
        read = run.read(entity, nodes, ReadKind.ONE, place, link=link)
        lookups.append(EntityLookup(run.params.add(json.dumps(rows), "json"), read, len(rows)))
    return RootField(key, entities=tuple(lookups), nullable=False)


def _key_row(model: Model, entity: Entity, representation: Mapping[str, Any], path: tuple[str | int, ...]) -> dict:
    """The representation's key as a row of the entity's table (column names, values as JSON): by its key fields,
    else by its global ID (one of another type is refused)."""
    assert entity.primary_key is not None
    fields = [entity.field_of_column(column) for column in entity.primary_key]
    row = {}
    by_id = entity.node and any(f is not None and f.name not in representation for f in fields)
    for field in fields:
        assert field is not None
        if by_id:
            given = representation.get("id")
            if decode_global_id(given) is None:
                raise bad_input(f"a {entity.type_name} representation needs its key fields or a global ID", path)
            value = key_value(model, entity, field, given, [*path, "id"])
        elif field.name in representation:
            value = key_value(model, entity, field, representation[field.name], [*path, field.name])
        else:
            raise bad_input(f"a {entity.type_name} representation needs its key field {field.name}", path)
        row[field.column] = value if isinstance(value, bool | int | float | str) else str(value)
    return row


def service_answer(collector: Collector, nodes: list[FieldNode], sdl: str) -> bytes:
    """`_service { sdl }` written in memory: its members by response key."""
    members = {}
    for key, fields in collector.subfields("_Service", nodes).items():
        members[key] = sdl if fields[0].name.value == "sdl" else "_Service"
    return json.dumps(members, separators=(",", ":"), ensure_ascii=False).encode()
