"""A bounded Trio pool of `Connection`s: one task per connection at a time, broken connections replaced.

psycopg_pool is asyncio-only (ARCHITECTURE.md), so the service keeps its own. Connections open lazily up to `size`;
a task waiting for one counts as pending. An idle connection is checked without a round trip before it is handed
out (`Connection.looks_alive`) and pinged by the health check when it has been idle for a while; a connection that
comes back broken, interrupted or inside a transaction is closed. When one connection turns out dead, every idle
one is closed too: they share the fate of the server that dropped the first.

Every new connection is set up per `ConnectionSettings` (SPEC "Limits": `statement_timeout` with a role's own lower
value applying first; SPEC "Extension integrations": the configured schemas, then installed extensions' schemas,
on the search path; `database.statement_cache` prepared statements).
"""

import logging
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Self

import attrs
import psycopg
import trio
from psycopg import pq, sql

from ._connection import Connection
from ._wire import PreparedNames

log = logging.getLogger("svc.db")

#: An idle connection unused this long is pinged by the health check before it is handed out again.
HEALTH_CHECK_INTERVAL = 30.0
_PING_TIMEOUT = 5.0

#: `totalCount(estimate: true)` runs EXPLAIN inside the one statement; only a VOLATILE function may, so each connection
#: gets this one in its own temporary schema (dropped with the session).
COUNT_ESTIMATE_FUNCTION = """\
create function pg_temp.svc_count_estimate(query text) returns integer language plpgsql volatile as $$
declare
  plan json;
begin
  execute 'explain (format json) ' || query into plan;
  return (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::int;
end $$"""

#: `groupedAggregates` over `limits.groups` groups raise TOO_MANY_GROUPS from inside the statement, before their JSON
#: is built (svc/sql/_aggregates.py), with this SQLSTATE and the limit and actual count as JSON in the detail.
TOO_MANY_GROUPS_STATE = "SVCG1"
TOO_MANY_GROUPS_FUNCTION = """\
create function pg_temp.svc_too_many_groups(actual bigint, "limit" bigint) returns json language plpgsql
volatile as $$
begin
  raise exception using errcode = 'SVCG1', message = format('%s groups, more than %s', actual, "limit"),
    detail = json_build_object('limit', "limit", 'actual', actual)::text;
end $$"""

_SETUP_QUERY = """\
select
  (select setting::bigint from pg_settings where name = 'statement_timeout'),
  coalesce(array(
    select distinct n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace
    where n.nspname not in ('pg_catalog', 'information_schema') order by n.nspname), '{}'),
  pg_is_in_recovery()"""


@attrs.frozen
class ConnectionSettings:
    """What every new connection of a pool is set up with."""

    statement_timeout_ms: int | None = None
    schemas: tuple[str, ...] = ()
    statement_cache: int = 0
    connect_timeout: float = 5.0
    application_name: str = "svc"


@attrs.frozen
class PoolStats:
    name: str
    size: int
    idle: int
    used: int
    pending: int


class Pool:
    """Connections to one server; use `open_pool` to get one with its background tasks running."""

    def __init__(self, conninfo: str, settings: ConnectionSettings, *, size: int, name: str = "primary") -> None:
        self.name = name
        self.size = size
        self._conninfo = conninfo
        self._settings = settings
        self._slots = trio.Semaphore(size)
        self._idle: list[tuple[Connection, float]] = []  # a stack: the most recently used is handed out first
        self._used = 0
        self._pending = 0
        self._nursery: trio.Nursery | None = None

    @property
    def conninfo(self) -> str:
        """Where the pool connects (a postgres_fdw server that names no host is read on the same one)."""
        return self._conninfo

    def stats(self) -> PoolStats:
        return PoolStats(self.name, self.size, len(self._idle), self._used, self._pending)

    @asynccontextmanager
    async def connection(self) -> AsyncGenerator[Connection, None]:
        """A connection for this task alone until the block ends; opened (and set up) when none is idle."""
        self._pending += 1
        try:
            await self._slots.acquire()
        finally:
            self._pending -= 1
        self._used += 1
        conn: Connection | None = None
        try:
            conn = await self._checkout()
            yield conn
        finally:
            self._used -= 1
            if conn is not None:
                await self._checkin(conn)
            self._slots.release()

    async def check(self) -> None:
        """Ping idle connections unused for `HEALTH_CHECK_INTERVAL`; close those that do not answer."""
        now = time.monotonic()
        stale = [entry for entry in self._idle if now - entry[1] >= HEALTH_CHECK_INTERVAL]
        for conn, last_used in stale:
            try:
                self._slots.acquire_nowait()
            except trio.WouldBlock:
                return  # the pool is busy, so its connections are in use anyway
            try:
                if (conn, last_used) not in self._idle:
                    continue
                self._idle.remove((conn, last_used))
                if await self._ping(conn):
                    self._idle.append((conn, time.monotonic()))
                else:
                    await self._discard(conn, dead=True)
            finally:
                self._slots.release()

    async def close(self) -> None:
        while self._idle:
            conn, _ = self._idle.pop()
            await conn.close()

    async def _checkout(self) -> Connection:
        while self._idle:
            conn, _ = self._idle.pop()
            if conn.looks_alive():
                return conn
            await self._discard(conn, dead=True)
        return await self._open()

    async def _checkin(self, conn: Connection) -> None:
        if conn.interrupted:
            return  # its cancel-and-close runs in the pool's nursery
        status = pq.TransactionStatus.UNKNOWN if conn.closed else conn.pgconn.transaction_status
        if status == pq.TransactionStatus.IDLE:
            self._idle.append((conn, time.monotonic()))
        else:
            await self._discard(conn, dead=status == pq.TransactionStatus.UNKNOWN)

    async def _discard(self, conn: Connection, *, dead: bool) -> None:
        with trio.CancelScope(shield=True):
            await conn.close()
            if dead and self._idle:
                log.warning("pool %s: a connection was lost; closing %d idle ones", self.name, len(self._idle))
                await self.close()

    async def _open(self) -> Connection:
        settings = self._settings
        conn = await Connection.connect(
            self._conninfo,
            autocommit=True,
            # Compiled statements are prepared by svc.db._wire, under names of its own; psycopg prepares nothing,
            # so its DEALLOCATE ALL after a rollback never drops them.
            prepare_threshold=None,
            timeout=settings.connect_timeout,
            application_name=settings.application_name,
        )
        try:
            if settings.statement_cache:
                conn.prepared_names = PreparedNames(settings.statement_cache)
            conn.on_interrupt = self._on_interrupt
            await self._setup(conn)
        except BaseException:
            with trio.CancelScope(shield=True):
                await conn.close()
            raise
        return conn

    async def _setup(self, conn: Connection) -> None:
        cursor = await conn.execute(_SETUP_QUERY, prepare=False)
        row = await cursor.fetchone()
        assert row is not None
        current_timeout, extension_schemas, standby = row
        path = [*self._settings.schemas, *(s for s in extension_schemas if s not in self._settings.schemas)]
        # Prepared statements save parsing; a read's plans are made for the values at hand (page sizes and filters
        # change the best plan a lot), which a generic plan would not know. A write's transaction, and a statement
        # of searches, leave the choice to PostgreSQL (svc.db.Transaction, svc.sql.CompiledRead.plans).
        statements: list[sql.Composable] = [sql.SQL("set plan_cache_mode = force_custom_plan")]
        # A standby creates nothing, temporary functions included: statements calling them read on the primary
        # (`svc.sql.CompiledRead.primary_only`).
        if not standby:
            statements += [sql.SQL(COUNT_ESTIMATE_FUNCTION), sql.SQL(TOO_MANY_GROUPS_FUNCTION)]
        if path:
            statements.append(sql.SQL("set search_path to {}").format(sql.SQL(", ").join(map(sql.Identifier, path))))
        wanted = self._settings.statement_timeout_ms
        # SPEC "Limits": a role's own lower statement_timeout applies first.
        if wanted is not None and not (0 < current_timeout <= wanted):
            statements.append(sql.SQL("set statement_timeout = {}").format(sql.Literal(wanted)))
        await conn.execute(sql.SQL("; ").join(statements), prepare=False)

    async def _ping(self, conn: Connection) -> bool:
        with trio.move_on_after(_PING_TIMEOUT):
            try:
                await conn.execute("select 1", prepare=False)
                return True
            except (psycopg.Error, OSError):
                return False
        return False

    def _on_interrupt(self, conn: Connection) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(conn.cancel_and_close)
        else:
            trio.lowlevel.spawn_system_task(conn.cancel_and_close)

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[Self, None]:
        """This pool, its health check and cancel requests running in a nursery of their own; closed on exit."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(_health_check, self)
            try:
                yield self
            finally:
                nursery.cancel_scope.cancel()
                self._nursery = None
                with trio.CancelScope(shield=True):
                    await self.close()


@asynccontextmanager
async def open_pool(
    conninfo: str, settings: ConnectionSettings, *, size: int, name: str = "primary"
) -> AsyncGenerator[Pool, None]:
    """A pool whose health check and cancel requests run in a nursery of their own; closed on exit."""
    try:
        async with Pool(conninfo, settings, size=size, name=name).running() as pool:
            yield pool
    except BaseExceptionGroup as group:
        # The pool's own tasks never raise, so a group holds only what the block raised: hand that back as it was,
        # so callers catch `SvcError` and the like without unwrapping groups.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _health_check(pool: Pool) -> None:
    while True:
        await trio.sleep(HEALTH_CHECK_INTERVAL / 2)
        await pool.check()
