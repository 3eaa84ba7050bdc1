"""The Snapshot: everything derived from the database catalog, frozen, and the holder that swaps it whole.

ARCHITECTURE.md ("Snapshot"): a reload builds a new snapshot off to the side, runs the startup checks, then swaps one
reference; a request takes the current snapshot once, at its start, and finishes on it. A snapshot holds the
configuration it was built with, the catalog, the model and the GraphQL schema; the OpenAPI document and the
compiled-statement cache join it with their issues.

Startup checks (SPEC "States and transitions"): the configured schemas exist, the configuration's names fit the
catalog (the model's problems), and the pinned SDL (`export.graphql`) matches per `export.pin`.
"""

import time
from datetime import UTC, datetime
from pathlib import Path

import attrs
import trio

from svc.catalog import INTROSPECTION_QUERY, Catalog, read_catalog
from svc.config import Config
from svc.db import Executor, Transaction
from svc.graphql import (
    GraphqlEndpoint,
    GraphqlSchema,
    QueryPlanner,
    SchemaBuildError,
    Settings,
    build_graphql_schema,
    diff_sdl,
)
from svc.model import Model, ModelError, build_model
from svc.pipeline import Mutations, StatementCache
from svc.rest import RestEndpoint


class SnapshotError(Exception):
    """A startup check failed: the database does not fit the configuration. `problems` names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@attrs.frozen
class Snapshot:
    built_at: datetime
    built_monotonic: float
    config: Config
    catalog: Catalog
    model: Model
    graphql: GraphqlSchema
    endpoint: GraphqlEndpoint
    rest: RestEndpoint
    #: What startup logs about this snapshot (schema-prefixed names, a pinned file that differs under `warn`...).
    warnings: tuple[str, ...] = ()
    #: 1 for the first snapshot served, one more for each swap (set by `SnapshotHolder.swap`).
    generation: int = 0

    def age(self) -> float:
        """Seconds since this snapshot was built."""
        return time.monotonic() - self.built_monotonic


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


async def read_database_catalog(executor: Executor, config: Config) -> Catalog:
    """The catalog of the configured schemas, read in one repeatable-read, read-only transaction.

    JIT is off for it: on a large catalog the planner's cost estimate of the one big statement can pass
    `jit_above_cost`, and compiling it would take longer than running it.
    """

    async def introspect(tx: Transaction) -> object:
        await tx.execute("set local jit = off", prepare=False)
        parameters = {"schemas": list(config.database.schemas), "roles": _configured_roles(config)}
        cursor = await tx.execute(INTROSPECTION_QUERY, parameters, prepare=False)
        row = await cursor.fetchone()
        return row[0]

    document = await executor.run(introspect, readonly=True, isolation="repeatable read", tags={"svc": "introspection"})
    return read_catalog(document)  # type: ignore[arg-type]


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
        return model, build_graphql_schema(model)
    except ModelError as exc:
        raise SnapshotError(exc.problems) from exc
    except SchemaBuildError as exc:
        raise SnapshotError([f"the generated GraphQL schema is invalid (a bug): {exc}"]) from exc


async def build_snapshot(executor: Executor, config: Config) -> Snapshot:
    """Read the catalog, derive the snapshot and run the startup checks.

    Raises SnapshotError when a check fails, and the executor's `SvcError` when the database cannot be read.
    """
    catalog = await read_database_catalog(executor, config)
    model, graphql = derive(catalog, config)
    warnings = [*model.warnings, *await _pin_check(config, graphql.sdl)]
    statements = StatementCache()
    mutations = Mutations(model, config.errors, statements)
    endpoint = GraphqlEndpoint(
        graphql.schema,
        QueryPlanner(graphql.schema, model, config.limits),
        Settings(
            introspection=config.graphql.introspection,
            errors=config.errors,
            sql_comments=config.database.sql_comments,
        ),
        statements,
        mutations,
    )
    rest = RestEndpoint(graphql.schema, model, config, statements, mutations)
    warnings += rest.index.warnings
    return Snapshot(
        datetime.now(UTC), time.monotonic(), config, catalog, model, graphql, endpoint, rest, tuple(warnings)
    )


async def _pin_check(config: Config, sdl: str) -> list[str]:
    """SPEC "Versioning": compare the generated SDL with the pinned file; `fail` refuses, `warn` logs, `off` skips.

    A missing file pins nothing.
    """
    if config.export.pin == "off":
        return []
    path = trio.Path(Path(config.export.graphql))
    if not await path.is_file():
        return []
    differences = diff_sdl(await path.read_text(encoding="utf-8"), sdl)
    if not differences:
        return []
    summary = f"{config.export.graphql} differs from the generated schema ({len(differences)} items): "
    summary += ", ".join(differences[:50]) + (", ..." if len(differences) > 50 else "")
    if config.export.pin == "fail":
        raise SnapshotError([f"export.pin is fail and {summary}; re-export with `svc schema export`"])
    return [summary]
