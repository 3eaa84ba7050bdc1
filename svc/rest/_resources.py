"""Which resource and function each REST path names (SPEC "REST API" -> route table, "Several schemas").

A resource is an exposed entity, named by its table name; functions are the root functions, named by their SQL
name, under `rpc/`. `/rest/{name}` is the default schema's resource (the first of `database.schemas`), else the
same-named one of the first other schema that has it; every schema with resources or functions also has
`/rest/{schema}/...`, where another schema's resource is 404. A first segment naming such a schema is a schema path
(a table named like a schema is reached there only). The reserved words `rpc`, `search` and `node` name no
resource or schema. The schema set is fixed when the snapshot is built; an unknown schema is 404 before any SQL.
"""

import enum
from collections.abc import Mapping, Sequence
from typing import TypeVar
from urllib.parse import unquote

import attrs

from svc.errors import Code, SvcError
from svc.model import Entity, Model, RootFunction
from svc.plan import global_sources

T = TypeVar("T")
RESERVED = frozenset({"rpc", "search", "node"})


class Kind(enum.Enum):
    INDEX = "index"  # /rest, /rest/{schema}
    COLLECTION = "collection"  # /rest/{r}
    ROW = "row"  # /rest/{r}/{key}
    COLUMN = "column"  # /rest/{r}/{key}/{column}
    SEARCH = "search"  # /rest/{r}/search
    SEARCH_METHOD = "search_method"  # /rest/{r}/search/{method}
    AGGREGATE = "aggregate"  # /rest/{r}/aggregate
    GLOBAL_SEARCH = "global_search"  # /rest/search
    NODE = "node"  # /rest/node/{id}
    RPC = "rpc"  # /rest/rpc/{function}


@attrs.frozen
class Target:
    """What a REST path names. `base` is the path of the resource or function as the client wrote it (schema path
    or shortcut): `Location`, `Link` and error `instance` keep it."""

    kind: Kind
    base: str
    schema: str | None = None  # the schema path used, if any
    entity: Entity | None = None
    function: RootFunction | None = None
    key: str | None = None  # the raw (still percent-encoded) key segment
    column: str | None = None
    word: str | None = None  # a search method, or a node ID

    @property
    def template(self) -> str:
        """The route template of the path (`/rest/{resource}/{key}`): telemetry's `http.route`."""
        return ("/rest/{schema}" if self.schema else "/rest") + _TEMPLATES[self.kind]


_TEMPLATES = {
    Kind.INDEX: "",
    Kind.COLLECTION: "/{resource}",
    Kind.ROW: "/{resource}/{key}",
    Kind.COLUMN: "/{resource}/{key}/{column}",
    Kind.SEARCH: "/{resource}/search",
    Kind.SEARCH_METHOD: "/{resource}/search/{method}",
    Kind.AGGREGATE: "/{resource}/aggregate",
    Kind.GLOBAL_SEARCH: "/search",
    Kind.NODE: "/node/{id}",
    Kind.RPC: "/rpc/{function}",
}


@attrs.frozen
class Resource:
    name: str
    entity: Entity
    path: str  # the canonical path: the shortcut when it names this resource, else the schema path


@attrs.frozen
class FunctionRoute:
    name: str
    function: RootFunction
    path: str


class RestIndex:
    """The resources and functions of one model, and what a path under `/rest` names."""

    def __init__(self, model: Model, schemas: Sequence[str]) -> None:
        self.schemas = tuple(schemas)
        self.default_schema = self.schemas[0] if self.schemas else None
        warnings: list[str] = []
        # A schema named with a reserved word is not served: none of its tables or functions (SPEC "REST API").
        served = tuple(schema for schema in self.schemas if schema not in RESERVED)
        by_schema: dict[str, dict[str, Entity]] = {schema: {} for schema in served}
        for entity in model.entities:
            if entity.schema not in by_schema:
                if entity.schema in RESERVED:
                    warnings.append(_unserved(f"table {entity.schema}.{entity.table}", entity.schema))
            elif entity.table in RESERVED:
                warnings.append(_unserved(f"table {entity.schema}.{entity.table}", entity.table))
            else:
                by_schema[entity.schema].setdefault(entity.table, entity)
        functions: dict[str, dict[str, RootFunction]] = {schema: {} for schema in served}
        for function in model.functions:
            if function.schema in functions:
                functions[function.schema].setdefault(function.function, function)
            elif function.schema in RESERVED:
                warnings.append(_unserved(f"function {function.schema}.{function.function}", function.schema))
        self._entities = by_schema
        self._functions = functions
        #: Schemas with a path of their own: those with resources or functions.
        self.schema_paths = tuple(s for s in served if by_schema[s] or functions[s])
        for schema in served:
            for name in by_schema[schema]:
                if name in self.schema_paths:
                    warnings.append(
                        f"table {schema}.{name} is reached only at /rest/{schema}/{name}: /rest/{name} is the path"
                        f" of schema {name}"
                    )
        #: Startup warnings (SPEC "Several schemas": a table named like a schema is reached at the schema path).
        self.warnings = tuple(warnings)
        self._shortcuts = _first_by_name(by_schema, served)
        self._function_shortcuts = _first_by_name(functions, served)
        self.resources = tuple(
            Resource(name, entity, self._path(name, entity.schema, self._shortcuts.get(name) is entity))
            for schema in served
            for name, entity in by_schema[schema].items()
        )
        self.functions = tuple(
            FunctionRoute(name, f, self._path(f"rpc/{name}", schema, self._function_shortcuts.get(name) is f))
            for schema in served
            for name, f in functions[schema].items()
        )
        self._paths = {resource.entity.ref: resource.path for resource in self.resources}
        self._searchable = tuple(
            (entity, self._paths[entity.ref].removeprefix("/rest/"))
            for entity in global_sources(model)
            if entity.ref in self._paths
        )

    def _path(self, name: str, schema: str, shortcut: bool) -> str:
        """A shortcut when it names this object and is no schema's path (a table named like a schema)."""
        return f"/rest/{name}" if shortcut and name not in self.schema_paths else f"/rest/{schema}/{name}"

    def searchable(self, schema: str | None = None) -> tuple[tuple[Entity, str], ...]:
        """The resources global search reads (of `schema`, or of every schema), each with its name in the hits'
        `type`: its path under /rest."""
        return tuple(found for found in self._searchable if schema is None or found[0].schema == schema)

    def serves(self, entity: Entity) -> bool:
        """Whether the entity is a resource here (not reserved, not of an unserved schema)."""
        return entity.ref in self._paths

    def path_of(self, entity: Entity) -> str:
        """The canonical collection path of an entity's resource."""
        return self._paths[entity.ref]

    def resolve(self, raw_path: str) -> Target:
        """What a path under /rest names, given as sent (percent-encoded): segments are decoded one by one, so an
        encoded `/` stays inside its segment; the key segment stays encoded (composite keys are split at commas
        before their values are decoded). SvcError NOT_FOUND for what names nothing."""
        raw = raw_path.split("/")[2:]
        path = unquote(raw_path)
        if raw and raw[-1] == "":
            raise _not_found(path)
        segments = [unquote(segment) for segment in raw]
        schema = None
        base = "/rest"
        if segments and segments[0] in self.schema_paths:
            schema, segments, raw = segments[0], segments[1:], raw[1:]
            base = f"/rest/{schema}"
        if not segments:
            return Target(Kind.INDEX, base, schema)
        head, rest = segments[0], segments[1:]
        if head == "rpc":
            if len(rest) != 1:
                raise _not_found(path)
            function = self._function(rest[0], schema)
            if function is None:
                raise SvcError(Code.NOT_FOUND, f"no function {rest[0]!r} at {path}")
            return Target(Kind.RPC, f"{base}/rpc/{raw[1]}", schema, function=function)
        if head == "search" and not rest:
            return Target(Kind.GLOBAL_SEARCH, f"{base}/search", schema)
        if head == "node" and schema is None and len(rest) == 1:
            return Target(Kind.NODE, base, schema, word=rest[0])
        entity = self._entity(head, schema)
        if entity is None:
            raise SvcError(Code.NOT_FOUND, f"no resource {head!r} at {path}")
        base = f"{base}/{raw[0]}"
        if not rest:
            return Target(Kind.COLLECTION, base, schema, entity)
        if rest[0] == "search":
            if len(rest) == 1:
                return Target(Kind.SEARCH, base, schema, entity)
            if len(rest) == 2:
                return Target(Kind.SEARCH_METHOD, base, schema, entity, word=rest[1])
            raise _not_found(path)
        if rest[0] == "aggregate" and len(rest) == 1:
            return Target(Kind.AGGREGATE, base, schema, entity)
        if entity.primary_key is None:
            # Read by key only when a key exists (SPEC "REST API"): without one, no row path exists to refuse.
            raise SvcError(Code.NOT_FOUND, f"{head} has no key: no row of it is addressed at {path}")
        if len(rest) == 1:
            return Target(Kind.ROW, base, schema, entity, key=raw[1])
        if len(rest) == 2:
            return Target(Kind.COLUMN, base, schema, entity, key=raw[1], column=rest[1])
        raise _not_found(path)

    def _entity(self, name: str, schema: str | None) -> Entity | None:
        if schema is not None:
            return self._entities[schema].get(name)
        return self._shortcuts.get(name)

    def _function(self, name: str, schema: str | None) -> RootFunction | None:
        if schema is not None:
            return self._functions[schema].get(name)
        return self._function_shortcuts.get(name)


def _first_by_name(by_schema: Mapping[str, Mapping[str, T]], schemas: Sequence[str]) -> dict[str, T]:
    """Each name to the first schema's object of that name (the default schema first)."""
    first: dict[str, T] = {}
    for schema in schemas:
        for name, item in by_schema[schema].items():
            first.setdefault(name, item)
    return first


def _unserved(what: str, word: str) -> str:
    return f"{what} is not served by REST: {word!r} is a reserved path word (rpc, search, node)"


def _not_found(path: str) -> SvcError:
    return SvcError(Code.NOT_FOUND, f"no resource at {path}")
