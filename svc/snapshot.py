"""The Snapshot: everything derived from the database catalog, frozen, and the holder that swaps it whole.

ARCHITECTURE.md ("Snapshot"): a reload builds a new snapshot off to the side, runs the startup checks, then swaps one
reference; a request takes the current snapshot once, at its start, and finishes on it. The catalog is its first
member; the model, GraphQL schema, OpenAPI document and compiled-statement cache join it with their issues.
"""

import time
from datetime import UTC, datetime

import attrs

from svc.catalog import INTROSPECTION_QUERY, Catalog, read_catalog
from svc.config import Config
from svc.db import Executor, Transaction


class SnapshotError(Exception):
    """A startup check failed: the database does not fit the configuration. `problems` names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@attrs.frozen
class Snapshot:
    built_at: datetime
    built_monotonic: float
    catalog: Catalog
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


async def build_snapshot(executor: Executor, config: Config) -> Snapshot:
    """Read the catalog in one repeatable-read transaction, derive the snapshot and run the startup checks.

    Raises SnapshotError when a check fails, and the executor's `SvcError` when the database cannot be read.
    """

    async def introspect(tx: Transaction) -> object:
        parameters = {"schemas": list(config.database.schemas), "roles": _configured_roles(config)}
        cursor = await tx.execute(INTROSPECTION_QUERY, parameters, prepare=False)
        row = await cursor.fetchone()
        return row[0]

    document = await executor.run(introspect, readonly=True, isolation="repeatable read", tags={"svc": "introspection"})
    catalog = read_catalog(document)  # type: ignore[arg-type]
    _check(catalog, config)
    return Snapshot(datetime.now(UTC), time.monotonic(), catalog)


def _configured_roles(config: Config) -> list[str]:
    """The database roles requests run as (`auth.roles`), those set, once each: the catalog reads their privileges."""
    roles = config.auth.roles
    return list(dict.fromkeys(role for role in (roles.authenticated, roles.anonymous) if role))


def _check(catalog: Catalog, config: Config) -> None:
    missing = [name for name in config.database.schemas if name not in catalog.schemas]
    if missing:
        raise SnapshotError([f"database.schemas: schema {name!r} does not exist in the database" for name in missing])
