"""The Snapshot: everything derived from the database catalog, frozen, and the holder that swaps it whole.

ARCHITECTURE.md ("Snapshot"): a reload builds a new snapshot off to the side, runs the startup checks, then swaps one
reference; a request takes the current snapshot once, at its start, and finishes on it. A snapshot holds the
configuration it was built with, the catalog, the whole model and GraphQL schema, and per database role a request may
run as the APIs it is offered (pruned to its grants with `rbac.enabled`), each with its endpoints and caches.

Startup checks (SPEC "States and transitions"): the configured schemas exist, the configuration's names fit the
catalog (the model's problems), and the pinned SDL (`export.graphql`) matches per `export.pin`.
"""

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import psycopg
import trio

from svc.catalog import (
    HYPERTABLES_QUERY,
    INTROSPECTION_QUERY,
    REMOTE_CONSTRAINTS_QUERY,
    SERVERS_QUERY,
    Catalog,
    ForeignServer,
    read_catalog,
    remote_servers,
    remote_tables,
    with_remote_constraints,
)
from svc.config import Config
from svc.db import Executor, Transaction, fdw_conninfo, remote_rows
from svc.graphql import (
    GraphqlEndpoint,
    GraphqlSchema,
    ManifestError,
    PersistedQueries,
    QueryPlanner,
    Registry,
    SchemaBuildError,
    Settings,
    build_graphql_schema,
    diff_sdl,
    manifest_problems,
    read_manifest,
)
from svc.model import Model, ModelError, build_model, prune_model
from svc.pipeline import Statements
from svc.rest import RestEndpoint, build_openapi, diff_openapi, read_openapi
from svc.version import VERSION


class SnapshotError(Exception):
    """A startup check failed: the database does not fit the configuration. `problems` names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@attrs.frozen
class Api:
    """The APIs one database role is offered: its model (pruned to its grants when `rbac.enabled`), GraphQL schema,
    and the endpoints answering it, with their caches."""

    model: Model
    graphql: GraphqlSchema
    endpoint: GraphqlEndpoint
    rest: RestEndpoint
    config: Config
    #: The OpenAPI document, built once when first asked for (it takes a while on a large catalog: not at startup).
    _document: dict[str, Mapping[str, Any]] = attrs.field(factory=dict, eq=False, repr=False)

    async def openapi(self) -> Mapping[str, Any]:
        """The OpenAPI document of the REST API the role is offered (built in a worker thread, then kept)."""
        found = self._document.get("openapi")
        if found is None:
            found = await trio.to_thread.run_sync(
                lambda: build_openapi(self.model, self.rest.index, self.config, version=VERSION)
            )
            self._document["openapi"] = found
        return found


@attrs.frozen
class Snapshot:
    built_at: datetime
    built_monotonic: float
    config: Config
    catalog: Catalog
    #: The APIs of the whole model (what is exported and pinned).
    whole: Api
    #: The APIs per database role a request may run as (one, unpruned, without `rbac.enabled`).
    apis: Mapping[str, Api]
    #: The role a request runs as when none is configured: the connecting one.
    connecting_role: str
    #: What startup logs about this snapshot (schema-prefixed names, a pinned file that differs under `warn`...).
    warnings: tuple[str, ...] = ()
    #: 1 for the first snapshot served, one more for each swap (set by `SnapshotHolder.swap`).
    generation: int = 0

    def age(self) -> float:
        """Seconds since this snapshot was built."""
        return time.monotonic() - self.built_monotonic

    @property
    def model(self) -> Model:
        return self.whole.model

    @property
    def graphql(self) -> GraphqlSchema:
        return self.whole.graphql

    def api(self, role: str | None) -> Api:
        """The APIs offered to a request running as `role` (None: the connecting role)."""
        found = self.apis.get(role or self.connecting_role)
        return found if found is not None else self.apis[self.connecting_role]


class SnapshotHolder:
    """The one mutable reference to the current snapshot; `swap` replaces it in a single assignment."""

    def __init__(self) -> None:
        self._current: Snapshot | None = None

    @property
    def current(self) -> Snapshot | None:
        return self._current

    def swap(self, snapshot: Snapshot) -> Snapshot:
        """Serve `snapshot`, numbered as the next generation, from now on and return it.

        Requests holding the previous one finish on it.
        """
        previous = self._current
        self._current = attrs.evolve(snapshot, generation=previous.generation + 1 if previous else 1)
        return self._current


#: The statement timeout of the catalog read when `limits.statement_timeout` is shorter.
_CATALOG_TIMEOUT_SECONDS = 60
_CATALOG_TIMEOUT = "set local statement_timeout = '60s'"


async def read_database_catalog(executor: Executor, config: Config) -> Catalog:
    """The catalog of the configured schemas, read in one repeatable-read, read-only transaction.

    JIT is off for it: on a large catalog the planner's cost estimate of the one big statement can pass
    `jit_above_cost`, and compiling it would take longer than running it. A `limits.statement_timeout` under a minute
    does not apply to it.
    """

    async def introspect(tx: Transaction) -> Mapping[str, Any]:
        await tx.execute("set local jit = off")
        timeout = config.limits.statement_timeout
        if timeout is not None and timeout.seconds < _CATALOG_TIMEOUT_SECONDS:
            # `limits.statement_timeout` bounds requests; a short one must not keep a large catalog from being read.
            await tx.execute(_CATALOG_TIMEOUT)
        parameters = {"schemas": list(config.database.schemas), "roles": _configured_roles(config)}
        cursor = await tx.execute(INTROSPECTION_QUERY, parameters)
        row = await cursor.fetchone()
        assert row is not None  # one row, one JSON document, whatever the catalog holds
        document: Mapping[str, Any] = row[0]
        if document.get("hypertables_readable") and config.extensions.integrations.timescaledb != "off":
            cursor = await tx.execute(HYPERTABLES_QUERY, {"schemas": parameters["schemas"]})
            document = {**document, "hypertables": await cursor.fetchall()}
        return document

    document = await executor.run(introspect, readonly=True, isolation="repeatable read", tags={"svc": "introspection"})
    catalog = read_catalog(document)
    if config.extensions.integrations.postgres_fdw == "off" or not remote_servers(catalog):
        return catalog
    return await _with_remote_constraints(executor, config, catalog)


async def _with_remote_constraints(executor: Executor, config: Config, catalog: Catalog) -> Catalog:
    """The catalog with its postgres_fdw foreign tables' keys and checks read from their servers' catalogs, each
    server once (one that cannot be reached or read is a warning: its tables keep no keys but those in config)."""

    async def servers(tx: Transaction) -> list[ForeignServer]:
        cursor = await tx.execute(SERVERS_QUERY, {"servers": list(remote_servers(catalog))})
        return [ForeignServer(name, options, user) for name, options, user in await cursor.fetchall()]

    warnings = []
    for server in await executor.run(servers, readonly=True, tags={"svc": "introspection"}):
        if server.user_options is None:
            warnings.append(
                f"postgres_fdw server {server.name}: no user mapping for {catalog.current_user} or PUBLIC; the keys"
                " of its foreign tables are not read (set them in entities.<name>.primary_key)"
            )
            continue
        conninfo = fdw_conninfo(server.options, server.user_options, catalog.current_user, executor.pool.conninfo)
        try:
            rows = await remote_rows(
                conninfo,
                REMOTE_CONSTRAINTS_QUERY,
                remote_tables(catalog, server.name),
                timeout=config.database.connect_timeout.seconds,
            )
        except (psycopg.Error, OSError) as exc:
            warnings.append(
                f"postgres_fdw server {server.name}: its catalog could not be read ({str(exc).strip()}); the keys of"
                " its foreign tables are not read (set them in entities.<name>.primary_key)"
            )
            continue
        catalog = with_remote_constraints(catalog, server.name, rows)
    return attrs.evolve(catalog, warnings=(*catalog.warnings, *warnings))


def _configured_roles(config: Config) -> list[str]:
    """The database roles requests run as (`auth.roles`), those set, once each: the catalog reads their privileges."""
    roles = config.auth.roles
    return list(dict.fromkeys(role for role in (roles.authenticated, roles.anonymous) if role))


def derive(catalog: Catalog, config: Config) -> tuple[Model, GraphqlSchema]:
    """The model and the GraphQL schema of a catalog; SnapshotError when the configuration does not fit it."""
    missing = [name for name in config.database.schemas if name not in catalog.schemas]
    if missing:
        raise SnapshotError([f"database.schemas: schema {name!r} does not exist in the database" for name in missing])
    try:
        model = build_model(catalog, config)
        return model, _schema(model, config)
    except ModelError as exc:
        raise SnapshotError(exc.problems) from exc
    except SchemaBuildError as exc:
        raise SnapshotError([f"the generated GraphQL schema is invalid (a bug): {exc}"]) from exc


async def build_snapshot(executor: Executor, config: Config, registry: Registry | None = None) -> Snapshot:
    """Read the catalog, derive the snapshot and run the startup checks. `registry`: the instance's automatic
    persisted queries, kept from one snapshot to the next (a new one when not given).

    Raises SnapshotError when a check fails, and the executor's `SvcError` when the database cannot be read.
    """
    persisted = await _persisted_queries(config, registry or Registry())
    catalog = await read_database_catalog(executor, config)
    model, graphql = derive(catalog, config)
    whole = _api(model, graphql, config, persisted)
    warnings = [
        *catalog.warnings,
        *unbuilt_integrations(catalog, config),
        *model.warnings,
        *whole.rest.index.warnings,
        *await _pin_check(config, whole),
        *_manifest_check(config, whole, persisted),
    ]
    connecting = catalog.current_user
    if config.rbac.enabled:
        roles = dict.fromkeys([*_configured_roles(config), connecting])
        apis = {role: _api(*_pruned(model, catalog, role, config), config, persisted) for role in roles}
    else:
        apis = {connecting: whole}
    return Snapshot(
        datetime.now(UTC),
        time.monotonic(),
        config,
        catalog,
        whole,
        apis,
        connecting,
        tuple(warnings),
    )


def active_integrations(catalog: Catalog, model: Model, config: Config) -> tuple[str, ...]:
    """SPEC "Extension integrations": the integrations a snapshot uses, each with what turned it on, for the log.
    Those the service does not build (`UNBUILT_INTEGRATIONS`) are never active."""
    switches = config.extensions.integrations
    active = []
    checked = sum(1 for entity in model.entities for field in entity.fields if field.json_schema is not None)
    if checked:  # the model leaves the schemas out while the switch is off
        active.append(f"pg_jsonschema ({_counted(checked, 'JSON Schema column')})")
    installed = {extension.name for extension in catalog.extensions}
    if "pg_stat_statements" in installed and switches.pg_stat_statements != "off":
        active.append("pg_stat_statements (advise --statements)")
    keyed = sum(1 for r in catalog.relations if r.remote is not None and (r.primary_key or r.unique_keys))
    if keyed:  # keys are read from the servers only while the switch is on
        active.append(f"postgres_fdw (remote keys of {_counted(keyed, 'foreign table')})")
    return tuple(active)


#: Integrations the SPEC names that the service does not build (none of them can be installed where it is built):
#: switch -> (the extension's name, what the integration would do).
UNBUILT_INTEGRATIONS = {
    "timescaledb": ("timescaledb", "hypertable estimates and descriptions"),
    "pgvectorscale": ("vectorscale", "semantic search from its indexes"),
    "vectorchord": ("vchord", "semantic search from its indexes"),
    "pgroonga": ("pgroonga", "full-text search from its indexes"),
}


def unbuilt_integrations(catalog: Catalog, config: Config) -> list[str]:
    """A warning for each installed extension whose integration the service does not build while its switch is
    `auto`: the switch cannot do what it says there (`off` says nothing is expected of it)."""
    installed = {extension.name for extension in catalog.extensions}
    switches = attrs.asdict(config.extensions.integrations)
    return [
        f"extensions.integrations.{switch}: {extension} is installed, but this service has no {switch} integration"
        f" ({does}); its objects are served like any others (set the switch to off to silence this)"
        for switch, (extension, does) in UNBUILT_INTEGRATIONS.items()
        if extension in installed and switches[switch] == "auto"
    ]


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _pruned(model: Model, catalog: Catalog, role: str, config: Config) -> tuple[Model, GraphqlSchema]:
    """SPEC rule 3: with `rbac.enabled` the APIs are pruned to what the role may access (its grants)."""
    try:
        pruned = prune_model(model, catalog, role)
        return pruned, _schema(pruned, config)
    except ModelError as exc:
        raise SnapshotError(exc.problems) from exc
    except SchemaBuildError as exc:
        raise SnapshotError([f"the GraphQL schema of role {role!r} is invalid (a bug): {exc}"]) from exc


def _schema(model: Model, config: Config) -> GraphqlSchema:
    return build_graphql_schema(
        model, subscriptions=config.subscriptions.enabled, federation=config.graphql.federation.enabled
    )


def _api(model: Model, graphql: GraphqlSchema, config: Config, persisted: PersistedQueries) -> Api:
    statements = Statements(model, config.limits, config.errors)
    endpoint = GraphqlEndpoint(
        graphql.schema,
        QueryPlanner(graphql.schema, model, config.limits, graphql.subgraph_sdl, config.search),
        Settings(introspection=config.graphql.introspection),
        statements,
        persisted,
    )
    rest = RestEndpoint(graphql.schema, model, config, statements)
    return Api(model, graphql, endpoint, rest, config)


async def _persisted_queries(config: Config, registry: Registry) -> PersistedQueries:
    """SPEC "Persisted queries": the configuration's switches and its manifest, read afresh with each snapshot (an
    unreadable manifest refuses the snapshot in every mode: an allow-list must never open up)."""
    settings = config.graphql.persisted_queries
    if not settings.enabled:
        return PersistedQueries(registry=registry)
    manifest = None
    if settings.manifest is not None:
        where = f"graphql.persisted_queries.manifest: {settings.manifest}"
        try:
            manifest = read_manifest(await trio.Path(settings.manifest).read_text(encoding="utf-8"))
        except OSError as exc:
            raise SnapshotError([f"{where}: cannot be read ({exc.strerror or exc})"]) from exc
        except ManifestError as exc:
            raise SnapshotError([f"{where}: {exc}"]) from exc
    return PersistedQueries(True, settings.automatic, settings.allow_list, manifest, registry)


def _manifest_check(config: Config, whole: Api, persisted: PersistedQueries) -> list[str]:
    """SPEC: every manifest operation is validated against the schema; prod refuses the snapshot when one fails (at
    startup: no start; on reload: the previous snapshot keeps serving), dev logs it."""
    if persisted.manifest is None:
        return []
    problems = manifest_problems(persisted.manifest, whole.endpoint.documents)
    if problems and config.mode == "prod":
        raise SnapshotError(problems)
    return problems


async def _pin_check(config: Config, whole: Api) -> list[str]:
    """SPEC "Versioning": compare the generated SDL and OpenAPI document with the pinned files; `fail` refuses to
    serve, `warn` logs, `off` skips. A missing file pins nothing; the document is compared as a document (formatting
    and key order ignored), its differences named by JSON pointers."""
    if config.export.pin == "off":
        return []
    summaries = []
    pinned_sdl = [(config.export.graphql, "schema", whole.graphql.sdl)]
    if whole.graphql.subgraph_sdl is not None:
        pinned_sdl.append((config.export.subgraph, "subgraph", whole.graphql.subgraph_sdl))
    for name, what, text in pinned_sdl:
        path = trio.Path(Path(name))
        if await path.is_file():
            differences = diff_sdl(await path.read_text(encoding="utf-8"), text)
            if differences:
                summaries.append(_differs(name, what, differences))
    path = trio.Path(Path(config.export.openapi))
    if config.openapi.enabled and await path.is_file():
        try:
            pinned = read_openapi(config.export.openapi, await path.read_text(encoding="utf-8"))
        except ValueError as exc:
            differences = [f"cannot be read: {exc}"]
        else:
            differences = diff_openapi(pinned, await whole.openapi())
        if differences:
            summaries.append(_differs(config.export.openapi, "OpenAPI document", differences))
    if summaries and config.export.pin == "fail":
        raise SnapshotError([f"export.pin is fail and {s}; re-export with `svc schema export`" for s in summaries])
    return summaries


def _differs(path: str, what: str, differences: list[str]) -> str:
    summary = f"{path} differs from the generated {what} ({len(differences)} items): "
    return summary + ", ".join(differences[:50]) + (", ..." if len(differences) > 50 else "")
