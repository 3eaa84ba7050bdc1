"""What each field of the GraphQL schema means in the model, attached to the built schema's field definitions
(`GraphQLField.extensions`), so the planners read a selected field's meaning from its definition instead of looking
its name up again.

The SDL writer writes the Query, Mutation and entity object types from the same tables (`query_roots`,
`mutation_roots`, `svc.plan.entity_fields`) and payload members by `PayloadNames`, so a field and its meaning cannot
drift apart. With `rbac.enabled` each role's schema is built from its pruned model, and so are its meanings. A field
of these types without a meaning fails the build (`SchemaBuildError`): it is a bug, never a request's fault.
"""

import enum
from collections.abc import Mapping
from typing import TypeVar

import attrs
from graphql import GraphQLField, GraphQLNamedType, GraphQLObjectType, GraphQLSchema

from svc.model import Entity, Lookup, Model, Operation, RootFunction, SearchMethod, TypeNames
from svc.plan import (
    HitMember,
    PageMember,
    ResultsMember,
    entity_fields,
    global_sources,
    member_fields,
    member_type_name,
    offered_members,
)

#: The key of a field's meaning in its definition's `extensions`.
MEANING = "svc.meaning"


class RootKind(enum.Enum):
    """What a Query root field reads (SPEC "Root fields per table", "Global object identification", "Functions")."""

    NODE = "node"  # any row by its global ID
    LOOKUP = "lookup"  # an entity's row by a whole unique key
    AS_OF = "as_of"  # a temporal entity's row by its key without the period, the version valid at an instant
    LIST = "list"  # an entity's rows as a list
    CONNECTION = "connection"  # an entity's rows as a cursor connection
    FUNCTION = "function"  # a STABLE or IMMUTABLE function's result
    SEARCH = "search"  # an entity's best matches by one search method
    GLOBAL_SEARCH = "global_search"  # the best matches of every searchable entity
    ENTITIES = "entities"  # federation: rows of several types by the keys of their representations
    SERVICE = "service"  # federation: the subgraph SDL


@attrs.frozen
class RootMeaning:
    """What a Query root field is: `entity` for lookups, lists, connections and searches (and `lookup`, `method`),
    or `function`."""

    kind: RootKind
    entity: Entity | None = None
    lookup: Lookup | None = None
    function: RootFunction | None = None
    method: SearchMethod | None = None


class MutationKind(enum.Enum):
    """What a Mutation root field writes (SPEC "Mutations"): an entity's write, or a VOLATILE function's call."""

    CREATE = "create"
    CREATE_MANY = "create_many"
    UPDATE = "update"  # by the primary key's arguments
    UPDATE_BY_NODE_ID = "update_by_node_id"
    UPDATE_MANY = "update_many"  # by filter
    DELETE = "delete"
    DELETE_BY_NODE_ID = "delete_by_node_id"
    DELETE_MANY = "delete_many"
    FUNCTION = "function"

    @property
    def many(self) -> bool:
        """The payload lists the rows (`films`), rather than one row (`film`)."""
        return self in (MutationKind.CREATE_MANY, MutationKind.UPDATE_MANY, MutationKind.DELETE_MANY)

    @property
    def deletes(self) -> bool:
        return self in (MutationKind.DELETE, MutationKind.DELETE_BY_NODE_ID, MutationKind.DELETE_MANY)


@attrs.frozen
class MutationMeaning:
    """What a Mutation root field is: an entity's write (`entity`), or a function's call (`function`)."""

    kind: MutationKind
    entity: Entity | None = None
    function: RootFunction | None = None


class ConnectionField(enum.Enum):
    """A member of `<Types>Connection` (each value is the member's name)."""

    NODES = "nodes"
    EDGES = "edges"
    PAGE_INFO = "pageInfo"
    TOTAL_COUNT = "totalCount"
    AGGREGATES = "aggregates"
    GROUPED_AGGREGATES = "groupedAggregates"


class GroupField(enum.Enum):
    """A member of `<Type>Aggregates` or `<Type>AggregatesGroup` besides the aggregates (`AggregateMember`)."""

    COUNT = "count"
    KEYS = "keys"


class EdgeField(enum.Enum):
    """A member of `<Types>Edge` (each value is the member's name)."""

    CURSOR = "cursor"
    NODE = "node"
    ROW_NUMBER = "rowNumber"
    RANK = "rank"
    DENSE_RANK = "denseRank"
    PERCENT_RANK = "percentRank"
    RUNNING_SUM = "runningSum"


class PayloadField(enum.Enum):
    """A member of a mutation payload (SPEC "Mutations": payloads)."""

    ROWS = "rows"  # the rows written (`film` or `films`); deleted rows as they were
    PREVIOUS_ROWS = "previous_rows"  # the rows as they were before the write (`previousFilm`, `previousFilms`)
    AFFECTED_COUNT = "affected_count"
    DELETED_ID = "deleted_id"  # the deleted row's global ID


@attrs.frozen
class PayloadNames:
    """The names of the row members of an entity's payloads (the SDL writer writes these)."""

    row: str  # film
    rows: str  # films
    previous_row: str  # previousFilm
    previous_rows: str  # previousFilms

    @classmethod
    def of(cls, names: TypeNames) -> "PayloadNames":
        return cls(_lower(names.type), _lower(names.plural), f"previous{names.type}", f"previous{names.plural}")

    def meanings(self) -> dict[str, PayloadField]:
        return {
            self.row: PayloadField.ROWS,
            self.rows: PayloadField.ROWS,
            self.previous_row: PayloadField.PREVIOUS_ROWS,
            self.previous_rows: PayloadField.PREVIOUS_ROWS,
            "affectedCount": PayloadField.AFFECTED_COUNT,
            "deletedId": PayloadField.DELETED_ID,
        }


_CONNECTION = {member.value: member for member in ConnectionField}
_EDGE = {member.value: member for member in EdgeField}
_PAGE_INFO = {
    "hasNextPage": PageMember.HAS_NEXT_PAGE,
    "hasPreviousPage": PageMember.HAS_PREVIOUS_PAGE,
    "startCursor": PageMember.START_CURSOR,
    "endCursor": PageMember.END_CURSOR,
}


def query_roots(model: Model) -> dict[str, RootMeaning]:
    """Every Query root field of the model by name, in SDL order: `node`, each entity's lookups, list, connection
    and searches (as its operations allow), the functions that are not mutations, then `globalSearch` when some
    entity is searchable by text."""
    roots = {"node": RootMeaning(RootKind.NODE)}
    for entity in model.entities:
        if Operation.READ in entity.operations:
            for lookup in entity.lookups:
                roots[lookup.name] = RootMeaning(RootKind.LOOKUP, entity, lookup)
            if entity.as_of_lookup is not None:
                roots[entity.as_of_lookup] = RootMeaning(RootKind.AS_OF, entity)
        if Operation.LIST in entity.operations:
            roots[entity.roots.list] = RootMeaning(RootKind.LIST, entity)
        if Operation.CONNECTION in entity.operations:
            roots[entity.roots.connection] = RootMeaning(RootKind.CONNECTION, entity)
        if Operation.LIST in entity.operations:
            for method in entity.search.methods:
                roots[entity.search_root(method)] = RootMeaning(RootKind.SEARCH, entity, method=method)
    for function in model.functions:
        if not function.mutation:
            roots[function.name] = RootMeaning(RootKind.FUNCTION, function=function)
    if global_sources(model):
        roots[GLOBAL_SEARCH] = RootMeaning(RootKind.GLOBAL_SEARCH)
    return roots


def mutation_roots(model: Model) -> dict[str, MutationMeaning]:
    """Every Mutation root field of the model by name, in SDL order: each entity's writes (as its operations allow;
    by node ID for a `Node`), then the VOLATILE functions."""
    roots: dict[str, MutationMeaning] = {}
    for entity in model.entities:
        names = entity.roots
        kinds: list[tuple[str, MutationKind]] = []
        if Operation.CREATE in entity.operations:
            kinds += [(names.create, MutationKind.CREATE), (names.create_many, MutationKind.CREATE_MANY)]
        if Operation.UPDATE in entity.operations:
            kinds.append((names.update, MutationKind.UPDATE))
            if entity.node:
                kinds.append((names.update_by_node_id, MutationKind.UPDATE_BY_NODE_ID))
            kinds.append((names.update_many, MutationKind.UPDATE_MANY))
        if Operation.DELETE in entity.operations:
            kinds.append((names.delete, MutationKind.DELETE))
            if entity.node:
                kinds.append((names.delete_by_node_id, MutationKind.DELETE_BY_NODE_ID))
            kinds.append((names.delete_many, MutationKind.DELETE_MANY))
        roots.update((name, MutationMeaning(kind, entity)) for name, kind in kinds)
    for function in model.functions:
        if function.mutation:
            roots[function.name] = MutationMeaning(MutationKind.FUNCTION, function=function)
    return roots


class MissingMeaning(Exception):
    """A field of the built schema the model gives no meaning (a bug of the SDL writer or of these tables)."""


#: The Query fields of a federation subgraph (SPEC "Federation and subscriptions"); not mirrored by Subscription.
FEDERATION_ROOTS = {"_entities": RootMeaning(RootKind.ENTITIES), "_service": RootMeaning(RootKind.SERVICE)}


def attach_meanings(schema: GraphQLSchema, model: Model, *, federation: bool = False) -> None:
    """Puts each field's meaning in its definition's `extensions` under `MEANING`: the root meanings on Query (and
    Subscription, its mirror) and Mutation, `FieldMeaning` on entity types, `ConnectionField`, `EdgeField` and
    `PageMember` on connections, edges and `PageInfo`, `PayloadField` on payloads. Raises MissingMeaning for a field
    of these types without one."""
    if schema.query_type is not None:
        _attach(schema.query_type, {**query_roots(model), **(FEDERATION_ROOTS if federation else {})})
    if schema.subscription_type is not None:
        _attach(schema.subscription_type, query_roots(model))  # the same fields, live
    if schema.mutation_type is not None:
        _attach(schema.mutation_type, mutation_roots(model))
    _attach(_object_type(schema, "PageInfo"), _PAGE_INFO)
    _attach_search(schema, model)
    for entity in model.entities:
        names = entity.names
        _attach(_object_type(schema, names.type), entity_fields(entity))
        _attach(_object_type(schema, names.connection), _CONNECTION)
        edge = _object_type(schema, names.edge)
        _attach(edge, {name: meaning for name, meaning in _EDGE.items() if name in edge.fields})
        _attach_aggregates(schema, entity)
        payload = PayloadNames.of(names).meanings()
        for payload_name in (
            names.create_payload,
            names.create_many_payload,
            names.update_payload,
            names.update_many_payload,
            names.delete_payload,
            names.delete_many_payload,
        ):
            if payload_name in schema.type_map:
                _attach(_object_type(schema, payload_name), payload)


#: The members of `<Type>SearchResults` and `<Type>SearchHit` (and of the global search's types).
SEARCH_RESULTS = {"hits": ResultsMember.HITS, "hasMore": ResultsMember.HAS_MORE}
SEARCH_HIT = {
    "score": HitMember.SCORE,
    "node": HitMember.NODE,
    "highlight": HitMember.HIGHLIGHT,
    "distance": HitMember.DISTANCE,
}
GLOBAL_SEARCH = "globalSearch"
GLOBAL_SEARCH_RESULTS, GLOBAL_SEARCH_HIT, GLOBAL_SEARCH_NODE = (
    "GlobalSearchResults",
    "GlobalSearchHit",
    "GlobalSearchNode",
)


def _attach_search(schema: GraphQLSchema, model: Model) -> None:
    pairs = [
        (e.names.search_results, e.names.search_hit) for e in model.entities if e.names.search_hit in schema.type_map
    ]
    if GLOBAL_SEARCH_HIT in schema.type_map:
        pairs.append((GLOBAL_SEARCH_RESULTS, GLOBAL_SEARCH_HIT))
    for results, hit in pairs:
        _attach(_object_type(schema, results), SEARCH_RESULTS)
        _attach(_object_type(schema, hit), SEARCH_HIT)


def _attach_aggregates(schema: GraphQLSchema, entity: Entity) -> None:
    """`GroupField` and `AggregateMember` on the aggregates objects, the model's `Field` on each member's object."""
    names = entity.names
    members = offered_members(entity)
    meanings: dict[str, object] = {member.value: member for member in members}
    meanings.update((field.value, field) for field in GroupField)
    for type_name in (names.aggregates, names.aggregates_group):
        if type_name in schema.type_map:
            _attach(_object_type(schema, type_name), meanings)
    for member in members:
        fields = {field.name: field for field in member_fields(entity, member)}
        _attach(_object_type(schema, member_type_name(names, member)), fields)


def _attach(object_type: GraphQLObjectType, meanings: Mapping[str, object]) -> None:
    for name, definition in object_type.fields.items():
        if name not in meanings:
            raise MissingMeaning(f"{object_type.name}.{name} has no meaning in the model")
        definition.extensions[MEANING] = meanings[name]


def _object_type(schema: GraphQLSchema, name: str) -> GraphQLObjectType:
    found: GraphQLNamedType | None = schema.type_map.get(name)
    if not isinstance(found, GraphQLObjectType):
        raise MissingMeaning(f"the schema has no object type {name}")
    return found


M = TypeVar("M")


def meaning_of(definition: GraphQLField, kind: type[M]) -> M:
    """The meaning attached to a field's definition, of the kind its parent type's fields have."""
    found = definition.extensions[MEANING]
    assert isinstance(found, kind), f"a field meaning {found!r} where {kind.__name__} belongs"
    return found


def _lower(name: str) -> str:
    return name[:1].lower() + name[1:]
