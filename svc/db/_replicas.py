"""Read replicas (SPEC "Operations"): one pool per standby, their health, and which one serves a read.

Reads go round-robin to the replicas in the rotation (`healthy` at their last check) that have replayed what the
request asks for (`X-Min-WAL-Position`, `svc.db._positions`). A replica's replayed position is known from its last
health check, and refreshed on demand when a request asks for more than that: one small query, shared by the requests
waiting for it, and never sent for a request that asks for nothing or for what the replica is known to have. The
health checker actor (`svc/actors/_replicas.py`) owns the checks and swaps in each replica's `ReplicaHealth`; a
request that finds a replica unreachable takes it out of the rotation at once and wakes the checker.
"""

import enum
import itertools
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from decimal import Decimal

import attrs
import psycopg
import trio

from svc.errors import first_line

from ._pool import ConnectionSettings, Pool, open_pool

log = logging.getLogger("svc.replicas")

#: A replica's replayed position is not asked again within this many seconds (requests arriving together share one).
REFRESH_SPACING = 0.005
_CHECK_TIMEOUT = 5.0

_PRIMARY_POSITION = "select pg_current_wal_lsn() - '0/0'::pg_lsn"
#: Replay lag in seconds is how long ago the last replayed transaction committed, and zero once the replica has
#: replayed everything the primary had written when the check began: an idle primary is not lag.
_REPLICA_CHECK = """\
select pg_is_in_recovery(), pg_last_wal_replay_lsn() - '0/0'::pg_lsn,
  extract(epoch from now() - pg_last_xact_replay_timestamp())::float8"""
_REPLAYED = "select pg_last_wal_replay_lsn() - '0/0'::pg_lsn"


class ReplicaState(enum.Enum):
    UNCHECKED = "unchecked"
    HEALTHY = "healthy"
    UNREACHABLE = "unreachable"
    LAGGING = "lagging"
    #: Reachable but not in recovery: a promoted standby no longer follows the primary.
    NOT_STANDBY = "not_standby"


@attrs.frozen
class ReplicaHealth:
    """What one check found: the state, the replayed position (bytes), lag in bytes and seconds, and why not."""

    state: ReplicaState = ReplicaState.UNCHECKED
    replayed: int | None = None
    lag_bytes: int | None = None
    lag_seconds: float | None = None
    checked_at: datetime | None = None
    error: str | None = None

    @property
    def in_rotation(self) -> bool:
        return self.state is ReplicaState.HEALTHY


class Replica:
    """One standby: its pool, its latest health (swapped in whole by the checker) and its replayed position."""

    def __init__(self, name: str, pool: Pool) -> None:
        self.name = name
        self.pool = pool
        self.health = ReplicaHealth()
        #: The highest replayed position seen, from checks and on-demand refreshes (bytes).
        self.replayed = 0
        self._refreshing: trio.Event | None = None
        self._refreshed_at = -1.0

    def saw(self, replayed: Decimal | int | None) -> None:
        """A replayed position read from the replica (`pg_lsn` arithmetic answers numeric)."""
        if replayed is not None:
            self.replayed = max(self.replayed, int(replayed))

    async def refresh(self) -> None:
        """Read the replayed position now; requests asking at the same time share the one query."""
        if self._refreshing is not None:
            await self._refreshing.wait()
            return
        if time.monotonic() - self._refreshed_at < REFRESH_SPACING:
            return
        self._refreshing = done = trio.Event()
        try:
            with trio.move_on_after(_CHECK_TIMEOUT):
                async with self.pool.connection() as conn:
                    cursor = await conn.execute(_REPLAYED, prepare=False)
                    row = await cursor.fetchone()
                    self.saw(row[0] if row else None)
        except (psycopg.Error, OSError):
            pass  # the health checker finds out; this read goes to the primary
        finally:
            self._refreshed_at = time.monotonic()
            self._refreshing = None
            done.set()


class Replicas:
    """The standbys and the choice of one for a read."""

    def __init__(self, replicas: Sequence[Replica]) -> None:
        self.all = tuple(replicas)
        self._turn = itertools.count()
        self._check_wanted = trio.Event()

    async def choose(self, minimum: int | None) -> Replica | None:
        """The next replica in the rotation that has replayed `minimum` (bytes), or None: read on the primary."""
        healthy = [replica for replica in self.all if replica.health.in_rotation]
        if not healthy:
            return None
        start = next(self._turn)
        turn = [healthy[(start + offset) % len(healthy)] for offset in range(len(healthy))]
        for replica in turn:
            if minimum is None or replica.replayed >= minimum:
                return replica
        assert minimum is not None
        for replica in turn:
            await replica.refresh()
            if replica.replayed >= minimum and replica.health.in_rotation:
                return replica
        return None

    def failed(self, replica: Replica, error: BaseException) -> None:
        """A request could not reach `replica`: out of the rotation now, and checked again at once."""
        if replica.health.in_rotation:
            replica.health = attrs.evolve(
                replica.health, state=ReplicaState.UNREACHABLE, error=first_line(error), checked_at=datetime.now(UTC)
            )
            log.warning("replica %s is out of the rotation: a read could not reach it (%s); reading on the primary",
                        replica.name, replica.health.error)  # fmt: skip
        self._check_wanted.set()

    async def check_wanted(self) -> None:
        """Until a request asks for a check (the checker's wake-up between rounds)."""
        await self._check_wanted.wait()
        self._check_wanted = trio.Event()

    async def check(self, primary: Pool, max_lag: float, max_lag_bytes: int | None) -> None:
        """Check every replica against the primary's current position, at once; each gets its new health."""
        position = await _primary_position(primary)
        async with trio.open_nursery() as nursery:
            for replica in self.all:
                nursery.start_soon(self._check_one, replica, position, max_lag, max_lag_bytes)

    async def _check_one(
        self, replica: Replica, primary: int | None, max_lag: float, max_lag_bytes: int | None
    ) -> None:
        now = datetime.now(UTC)
        try:
            with trio.fail_after(_CHECK_TIMEOUT):
                async with replica.pool.connection() as conn:
                    cursor = await conn.execute(_REPLICA_CHECK, prepare=False)
                    row = await cursor.fetchone()
        except (psycopg.Error, OSError, trio.TooSlowError) as exc:
            replica.health = ReplicaHealth(ReplicaState.UNREACHABLE, checked_at=now, error=first_line(exc))
            return
        assert row is not None
        in_recovery, replayed, since_last = row
        if not in_recovery:
            replica.health = ReplicaHealth(ReplicaState.NOT_STANDBY, checked_at=now, error="not in recovery")
            return
        replica.saw(replayed)
        replayed = int(replayed) if replayed is not None else None
        behind = None if primary is None or replayed is None else max(0, primary - replayed)
        if behind is None:
            seconds = None
        elif behind == 0:
            seconds = 0.0  # caught up: however long ago its last transaction was, an idle primary is not lag
        else:
            seconds = float(since_last) if since_last is not None else None
        health = ReplicaHealth(ReplicaState.HEALTHY, replayed, behind, seconds, now)
        if seconds is not None and seconds > max_lag:
            health = attrs.evolve(health, state=ReplicaState.LAGGING, error=f"{seconds:.1f}s behind the primary")
        elif max_lag_bytes is not None and behind is not None and behind > max_lag_bytes:
            health = attrs.evolve(health, state=ReplicaState.LAGGING, error=f"{behind} bytes behind the primary")
        replica.health = health


async def _primary_position(primary: Pool) -> int | None:
    """The primary's WAL position (bytes), or None when it cannot be read (lag in bytes is then unknown)."""
    try:
        with trio.fail_after(_CHECK_TIMEOUT):
            async with primary.connection() as conn:
                cursor = await conn.execute(_PRIMARY_POSITION, prepare=False)
                row = await cursor.fetchone()
                return int(row[0]) if row and row[0] is not None else None
    except (psycopg.Error, OSError, trio.TooSlowError):
        return None


@asynccontextmanager
async def open_replicas(
    urls: Sequence[str], settings: ConnectionSettings, *, size: int
) -> AsyncGenerator[Replicas | None, None]:
    """A pool per replica URL (`replica_1`, ...), each running in its own nursery; None when there are none."""
    if not urls:
        yield None
        return
    async with AsyncExitStack() as stack:
        replicas: list[Replica] = []
        for number, url in enumerate(urls, 1):
            name = f"replica_{number}"
            pool = await stack.enter_async_context(open_pool(url, settings, size=size, name=name))
            replicas.append(Replica(name, pool))
        yield Replicas(replicas)
