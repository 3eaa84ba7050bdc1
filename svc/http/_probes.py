"""Service probes (SPEC "Endpoints" -> service-level): `/live`, `/ready`, `/health`.

`/ready` runs a trivial query and answers within two seconds whatever the database does: 200
`{"status":"ok","database":"connected"}`, else 503 `{"status":"error","database":"unreachable"}`. It also needs a
schema snapshot to be served (the database may be back before the first one is built). `/health` combines the
database state, the snapshot's generation and age, the pool's counts, the statements sent for requests, the version
and the uptime; with subscriptions on, the poller's counts (live subscriptions, rounds, results sent, the last round's
statements and the latest rounds' durations); with read replicas, each replica's state (`unchecked`, `healthy`,
`unreachable`, `lagging`, `not_standby`), pool counts, replayed position and lag as its health checker last found them.
`/ready` is about the primary alone: a replica down sends reads to the primary, it does not stop the service.
"""

import time
from datetime import UTC, datetime

import psycopg
import trio

from svc.actors import Stats
from svc.db import Pool, PoolStats, Replicas, StatementCounter, format_lsn
from svc.snapshot import SnapshotHolder

from ._messages import Request, Response
from ._routing import Route

#: The trivial query's budget: the answer leaves well within SPEC's two seconds even on a loaded machine.
READY_TIMEOUT = 1.5


class Probes:
    def __init__(
        self,
        *,
        pool: Pool,
        holder: SnapshotHolder,
        version: str,
        started: float,
        counter: StatementCounter,
        subscriptions: Stats | None = None,
        replicas: Replicas | None = None,
    ) -> None:
        self._replicas = replicas
        self._subscriptions = subscriptions
        self._pool = pool
        self._counter = counter
        self._holder = holder
        self._version = version
        self._started = started

    def routes(self) -> list[Route]:
        return [
            Route("/live", frozenset({"GET"}), self.live, needs_snapshot=False),
            Route("/ready", frozenset({"GET"}), self.ready, needs_snapshot=False),
            Route("/health", frozenset({"GET"}), self.health, needs_snapshot=False),
        ]

    async def live(self, request: Request) -> Response:
        return Response.json({"status": "ok"})

    async def ready(self, request: Request) -> Response:
        if not await self._database_answers():
            return Response.json({"status": "error", "database": "unreachable"}, 503)
        if self._holder.current is None:
            return Response.json({"status": "error", "database": "connected", "schema": "loading"}, 503)
        return Response.json({"status": "ok", "database": "connected"})

    async def health(self, request: Request) -> Response:
        connected = await self._database_answers()
        snapshot = self._holder.current
        stats = self._pool.stats()
        ok = connected and snapshot is not None
        schema = (
            None
            if snapshot is None
            else {
                "generation": snapshot.generation,
                "builtAt": _iso(snapshot.built_at),
                "age": round(snapshot.age(), 3),
            }
        )
        body = {
            "status": "ok" if ok else "error",
            "timestamp": _iso(datetime.now(UTC)),
            "version": self._version,
            "uptime": round(time.monotonic() - self._started, 3),
            "database": "connected" if connected else "unreachable",
            "schema": schema,
            "pool": _pool(stats),
            "statements": self._counter.sent,
        }
        if self._replicas is not None:
            body["replicas"] = [
                {
                    "name": replica.name,
                    "state": health.state.value,
                    "pool": _pool(replica.pool.stats()),
                    "replayPosition": format_lsn(health.replayed) if health.replayed is not None else None,
                    "lagBytes": health.lag_bytes,
                    "lagSeconds": round(health.lag_seconds, 3) if health.lag_seconds is not None else None,
                    "checkedAt": _iso(health.checked_at) if health.checked_at else None,
                    "error": health.error,
                }
                for replica in self._replicas.all
                for health in (replica.health,)
            ]
        if self._subscriptions is not None:
            body["subscriptions"] = self._subscriptions.report()
        return Response.json(body, 200 if ok else 503)

    async def _database_answers(self) -> bool:
        with trio.move_on_after(READY_TIMEOUT):
            try:
                async with self._pool.connection() as conn:
                    await conn.execute("select 1", prepare=False)
                return True
            except (psycopg.Error, OSError):
                return False
        return False


def _pool(stats: PoolStats) -> dict[str, int]:
    return {"size": stats.size, "idle": stats.idle, "used": stats.used, "pending": stats.pending}


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
