"""Run one unit of database work in a transaction of its own: session, statement comments, retries, errors.

ARCHITECTURE.md ("Authorization is the database's"): the transaction starts by setting the configured role and the
mapped claims with `set_config(..., true)`, so they end with it. SPEC "Errors": serialization failures (40001) and
deadlocks (40P01) are retried up to 10 times with jittered backoff, since the unit owns its transaction; lost
connections become `DATABASE_UNAVAILABLE`. SPEC "Telemetry": statements carry a structured comment naming the
operation or resource (never a trace id), when `database.sql_comments` is on. Each statement a unit sends is a
database operation of the request's record (`svc.telemetry`), timed with its SQLSTATE when it fails; BEGIN, COMMIT
and the session's settings are not.

SPEC "Operations" (read replicas): a read the caller allows on a replica (`replica=True`: the pipeline's reads) runs
on the next replica in the rotation that has replayed what the request asks for (`svc.db._positions`), else on the
primary. A read whose replica cannot be reached runs on the primary instead (the replica leaves the rotation), and
so does a read naming what the replica lacks: the snapshot was read from the primary, and the replica may not have
replayed that DDL yet; it is drift only when the primary lacks it too. Everything else runs on the primary. A write
made for a request reports the primary's position after its commit, in the same round trip as the commit. SPEC
"Retryable": a statement naming what the database no longer has raises `SCHEMA_CHANGED` and calls
`on_schema_changed` (the server asks the reloader for a new snapshot).
"""

import functools
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, LiteralString, TypeVar, cast

import attrs
import psycopg
import trio
from psycopg import pq, sql
from psycopg.abc import Params
from psycopg.pq.abc import PGresult

from svc.errors import Code, SvcError
from svc.telemetry import database_operation, statement_plan

from ._connection import Connection, RawText
from ._errors import RETRYABLE_SQLSTATES, map_database_error
from ._pool import Pool
from ._positions import current_positions
from ._replicas import Replicas
from ._wire import Command, command, compiled, failed_command, fetch_ahead, rows, set_failed_command, turn

log = logging.getLogger("svc.db")

T = TypeVar("T")
Isolation = Literal["read committed", "repeatable read", "serializable"]

MAX_RETRIES = 10
_BACKOFF_BASE = 0.01
_BACKOFF_CAP = 1.0
_ROLLBACK_TIMEOUT = 5.0
_COMMENT_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/\-]")
#: How PostgreSQL plans a prepared statement (`plan_cache_mode`): for its values each time (a read's, the connections'
#: setting), as it chooses (a generic plan once five custom ones show it costs no more), or once.
PlanCacheMode = Literal["force_custom_plan", "auto", "force_generic_plan"]
CUSTOM_PLANS: PlanCacheMode = "force_custom_plan"

_BEGIN: Mapping[tuple[Isolation, bool], LiteralString] = {
    ("read committed", False): "begin isolation level read committed",
    ("read committed", True): "begin isolation level read committed read only",
    ("repeatable read", False): "begin isolation level repeatable read",
    ("repeatable read", True): "begin isolation level repeatable read read only",
    ("serializable", False): "begin isolation level serializable",
    ("serializable", True): "begin isolation level serializable read only",
}


@attrs.frozen
class Session:
    """Who a transaction runs as: the configured role (None keeps the connecting one) and setting values."""

    role: str | None = None
    settings: Mapping[str, str] = attrs.field(factory=dict[str, str])


@attrs.define
class StatementCounter:
    """Statements sent for units of work: a request's own statements, not BEGIN, COMMIT or session settings."""

    sent: int = 0


class Transaction:
    """The open transaction a unit of work runs its statements in (`kind`: the operation it serves, `query` or
    `mutation`).

    The unit's own transaction (`open`) starts with BEGIN and the session's settings queued, not sent: they go with
    the unit's first statement in one pipeline turn (`svc.db._wire`), and the statement a unit marks `last` goes with
    the COMMIT (and the position query); several statements may go in one turn (`fetch_each`: a write and its
    payload read), so a create with its payload read costs one round trip, and so does a read as a role. A
    statement's error is raised by the call that sent it. Statements sent through psycopg (`execute`,
    `stream`, `copy_in`: savepoints, imports, the events' own statements) send what is queued first."""

    def __init__(
        self,
        conn: Connection,
        comment: str | None,
        counter: StatementCounter,
        kind: str = "mutation",
        *,
        report_position: bool = False,
        explain: bool = False,
    ) -> None:
        self.connection = conn
        self._comment = comment
        self._explain = explain
        self._counter = counter
        self._kind = kind
        self._report_position = report_position
        #: What goes with the next statement: BEGIN and the session's settings, until the first is sent.
        self._queued: list[Command] = []
        #: Whether the transaction was started on the server (its BEGIN sent).
        self._begun = False
        #: Whether the unit's `last` statement committed the transaction.
        self.committed = False
        #: The primary's WAL position after the commit, when asked for (`report_position`).
        self.position: int | None = None

    async def open(
        self, begin: LiteralString, session: Session | None, *, readonly: bool, plans: PlanCacheMode = CUSTOM_PLANS
    ) -> None:
        """Start the unit's own transaction: BEGIN and the session wait for the first statement.

        A reading unit's statements are planned as `plans` says (the connection's custom plan every time unless the
        statement says otherwise, `svc.sql.CompiledRead.plans`). A writing unit's are planned as PostgreSQL chooses
        by default (`plan_cache_mode = auto`: a generic plan once five custom ones show it costs no more): a write's
        values come as JSON row sets, which no custom plan knows better (planning was half of the database's time on
        a create)."""
        self._queued = [Command(begin.encode(), prepare=True)]
        mode = plans if readonly else "auto"
        if mode != CUSTOM_PLANS:
            self._queued.append(_PLANS[mode])
        if session is not None and (session.role or session.settings):
            self._queued.append(_session_command(self.connection, session))

    async def commit(self) -> None:
        """Commit the unit's own transaction (when its last statement did not); nothing to do when nothing was
        sent."""
        if not self._begun:
            self._queued = []
            self.committed = True
            return
        await self._turn([], closing=True)

    async def abandon(self, error: BaseException) -> None:
        """Drop what is queued after `error`; the caller rolls back."""
        self._queued = []

    async def execute(
        self, query: LiteralString | bytes | sql.SQL | sql.Composed, params: Params | None = None
    ) -> psycopg.AsyncCursor[Any]:
        """Execute one statement through psycopg (tagged with the unit's comment) and return its cursor; never
        prepared (psycopg prepares nothing on the pool's connections: compiled statements go by `fetch_raw`).

        `query` is what psycopg's guard accepts: composed pieces, a literal string, or bytes (a file of ours)."""
        if self._comment is not None:
            if isinstance(query, bytes):
                query += self._comment.encode()
            else:
                # The comment's text is sql_comment's, made of the code's keys and quoted, reduced values.
                comment = sql.SQL(cast(LiteralString, self._comment))
                query = sql.Composed([sql.SQL(query) if isinstance(query, str) else query, comment])
        self._counter.sent += 1
        return await _recorded(self._kind, query, self._executed(query, params))

    async def _executed(self, query: Any, params: Params | None) -> psycopg.AsyncCursor[Any]:
        await self._send_queued()
        return await self.connection.execute(query, params)

    async def fetch_raw(
        self, statement: str, params: Mapping[str, Any], *, last: bool = False
    ) -> tuple[bytes | None, ...]:
        """The one row of a compiled statement, its text columns as raw bytes (prepared: its text is its shape).
        `last`: the unit's last statement, sent with the commit."""
        self._counter.sent += 1
        text = _tagged(statement, self._comment)
        (result,) = await _recorded(self._kind, text, self._sent([(text, params)], last=last))
        return _loaded(self.connection, result, one=True)[0]

    async def fetch_each(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]], *, last: bool = False
    ) -> list[tuple[bytes | None, ...]]:
        """The one row of each compiled statement, sent together in one turn (`fetch_raw` each, without waiting
        for one's answer to send the next: a later one cannot take values from an earlier one's answer, only from
        what it left in the transaction). The first failure is raised, the later statements not run. `last` as
        `fetch_raw`."""
        self._counter.sent += len(statements)
        texts = [_tagged(statement, self._comment) for statement, _ in statements]
        started = time.perf_counter()
        try:
            results = await self._sent(
                [(text, params) for text, (_, params) in zip(texts, statements, strict=True)], last=last
            )
        except psycopg.Error as exc:
            # Each ran for the whole turn, up to the one that failed; those after it did not run. A failure of none
            # of them (the BEGIN or session before them, the COMMIT after) is each one's, as with `fetch_raw`.
            failed = failed_command(exc)
            for position, text in enumerate(texts[: None if failed is None else failed + 1]):
                sqlstate = (exc.sqlstate or "") if failed is None or position == failed else None
                database_operation(self._kind, text, started, sqlstate)
            raise
        for text in texts:
            database_operation(self._kind, text, started)
        return [_loaded(self.connection, result, one=True)[0] for result in results]

    async def fetch_rows(
        self, statement: str, params: Mapping[str, Any], *, last: bool = False
    ) -> list[tuple[bytes | None, ...]]:
        """Every row of a compiled statement, text columns as raw bytes; `last` as `fetch_raw`."""
        self._counter.sent += 1
        text = _tagged(statement, self._comment)
        (result,) = await _recorded(self._kind, text, self._sent([(text, params)], last=last))
        return _loaded(self.connection, result, one=False)

    async def stream(
        self,
        statement: str,
        params: Mapping[str, Any],
        each: Callable[[list[bytes | None]], Awaitable[None]],
        *,
        size: int,
    ) -> int:
        """Every row of a compiled statement with one text column, as raw bytes, handed to `each` `size` rows at a
        time through a server-side cursor: the rows not fetched yet wait in the database, so a slow `each` holds the
        cursor, not memory; the next rows are fetched while `each` takes these (`fetch_ahead`). The rows' count."""
        await self._send_queued()
        self._counter.sent += 1
        text = _tagged(statement, self._comment)
        conn = self.connection
        declare = compiled(conn.raw, "declare svc_rows no scroll cursor for " + text, params, prepare=False)
        fetch = command(conn.raw, b"fetch forward " + str(size).encode() + b" from svc_rows", ())
        count = 0

        async def handed(result: PGresult) -> None:
            nonlocal count
            rows = _loaded(conn, result, one=False)
            count += len(rows)
            await each([row[0] for row in rows])

        async def fetched() -> int:
            await self._turn([declare])
            await fetch_ahead(conn, fetch, size, handed)
            return count

        return await _recorded(self._kind, text, fetched())

    async def copy_in(self, statement: str, rows: Iterable[Sequence[Any]]) -> int:
        """`COPY ... FROM STDIN` of `rows`, each a record of values in the text COPY reads (psycopg's text dumpers:
        strings as they are, numbers as Python writes them, None as NULL), sent as they are taken, in messages of
        psycopg's size (the database reads one while the next is made; a row is formatted where it is taken, by
        psycopg's formatter, without a wait per row). The rows the database wrote (a trigger may have kept some
        out)."""
        await self._send_queued()
        self._counter.sent += 1

        async def copied() -> int:
            cursor = self.connection.cursor()
            # A statement of ours from the model's names (svc.sql.ImportStatements), as in `_execute`.
            async with cursor.copy(statement) as copy:  # pyright: ignore[reportArgumentType]
                formatter = copy.formatter
                for row in rows:
                    if data := formatter.write_row(row):
                        await copy.write(data)
            return cursor.rowcount

        return await _recorded(self._kind, statement, copied())

    async def _sent(self, statements: Sequence[tuple[str, Mapping[str, Any]]], *, last: bool) -> list[PGresult]:
        """Compiled statements (tagged texts and their values) sent in one turn, the COMMIT with them when `last`:
        each one's result. With `debug.explain`, each one's plan is asked for first."""
        if self._explain:
            await self._send_queued()
            for text, params in statements:
                await _explain(self.connection, text, params)
        conn = self.connection
        return await self._turn([compiled(conn.raw, text, params) for text, params in statements], closing=last)

    async def _send_queued(self) -> None:
        if self._queued:
            await self._turn([])

    async def _turn(self, commands: list[Command], *, closing: bool = False) -> list[PGresult]:
        """Send what is queued and `commands` in one turn, with the COMMIT (and the position query) when
        `closing`; the results of `commands`."""
        queued, self._queued = self._queued, []
        self._begun = True
        closing_commands = [_COMMIT, *([_POSITION] if self._report_position else [])] if closing else []
        try:
            results = await turn(self.connection, [*queued, *commands, *closing_commands])
        except psycopg.Error as exc:
            if closing:
                _raise_if_lost_while_committing(exc)
            failed = failed_command(exc)
            if failed is not None:  # counted among `commands` (None: the queued ones' or the closing ones')
                failed -= len(queued)
                set_failed_command(exc, failed if 0 <= failed < len(commands) else None)
            raise
        mine = results[len(queued) :]
        if closing:
            self.committed = True
            if self._report_position:
                (row,) = rows(self.connection.raw, mine[-1])
                self.position = int(row[0]) if row[0] is not None else None
        return mine[: len(commands)]


# The unit's own commands repeat on every connection: prepared like compiled statements (parsed once per connection).
_COMMIT = Command(b"commit", prepare=True)
#: Each plan choice other than the connection's, until the transaction ends: the unit's, or a read's implicit one (its
#: turn, up to the sync), where `set local` would warn that it needs a transaction block.
_PLANS: Mapping[PlanCacheMode, Command] = {
    mode: Command(b"select set_config('plan_cache_mode', '%s', true)" % mode.encode(), prepare=True)
    for mode in ("auto", "force_generic_plan")
}
#: The insert position is past the commit record whatever `synchronous_commit` says, so a replica that has replayed
#: it has the write.
_POSITION = Command(b"select pg_current_wal_insert_lsn() - '0/0'::pg_lsn", prepare=True)


def _session_command(conn: Connection, session: Session) -> Command:
    """`select set_config(...)` of the session's role and settings, for the transaction only."""
    names = ["role"] if session.role else []
    values = [session.role] if session.role else []
    names += session.settings
    values += session.settings.values()
    calls = ", ".join(f"set_config(${2 * n + 1}, ${2 * n + 2}, true)" for n in range(len(names)))
    pairs = [item for pair in zip(names, values, strict=True) for item in pair]
    return command(conn.raw, f"select {calls}".encode(), pairs)


def _loaded(conn: Connection, result: PGresult, *, one: bool) -> list[tuple[bytes | None, ...]]:
    loaded = rows(conn.raw, result)
    if one:
        assert loaded, "a compiled statement answers one row"
        return loaded[:1]
    return loaded


def _raise_if_lost_while_committing(exc: psycopg.Error) -> None:
    """SPEC "Retryable": when the connection is lost while committing, whether the work took effect is unknown."""
    mapped = map_database_error(exc)
    if mapped is not None and mapped.code is Code.DATABASE_UNAVAILABLE:
        raise SvcError(
            Code.DATABASE_UNAVAILABLE,
            "the database connection was lost while committing: whether the write took effect is unknown,"
            " so a retried write should be idempotent",
        ) from exc


def sql_comment(tags: Mapping[LiteralString, str]) -> sql.Composable:
    """`/* api='rest',method='GET',resource='users' */`: keys sorted, values reduced to a safe alphabet.

    Keys are the code's own names; values come from requests. The alphabet has no `*`, `%`, quote or backslash, so
    no value can end the comment, look like a placeholder, or change how its quoted literal is written.
    """
    pairs = sql.SQL(",").join(
        sql.SQL("{}={}").format(sql.SQL(key), sql.Literal(_COMMENT_UNSAFE.sub("_", value)))
        for key, value in sorted(tags.items())
    )
    return sql.SQL(" /* {} */").format(pairs)


class Executor:
    """Runs units of work on the primary's connections, or a replica's, one transaction each."""

    def __init__(
        self,
        pool: Pool,
        *,
        replicas: Replicas | None = None,
        sql_comments: bool = True,
        max_retries: int = MAX_RETRIES,
        explain: bool = False,
    ) -> None:
        self.pool = pool
        self.replicas = replicas
        self._sql_comments = sql_comments
        #: `debug.explain` (dev): each compiled statement's plan is asked for (and recorded) just before it is sent.
        self._explain = explain
        self._max_retries = max_retries
        self.counter = StatementCounter()
        #: Called (never awaited) when a statement fails on a schema the database no longer has.
        self.on_schema_changed: Callable[[], None] | None = None

    async def fetch(
        self,
        statement: str,
        params: Mapping[str, Any],
        *,
        tags: Mapping[LiteralString, str] | None = None,
        session: Session | None = None,
        replica: bool = False,
        plans: PlanCacheMode = CUSTOM_PLANS,
    ) -> tuple[bytes | None, ...]:
        """One compiled read statement; its row, text columns as raw bytes (on a replica when `replica` allows).

        A read is one statement and needs no explicit transaction: without a session it runs on its own in one
        round trip; with a role or settings it runs in a read-only transaction that sets them first. It is planned
        for its values each time (the connection's `force_custom_plan`) unless `plans` says otherwise
        (`svc.sql.CompiledRead.plans`), set for the statement alone in the same turn.
        """
        (row,) = await self._rows(statement, params, tags=tags, session=session, replica=replica, one=True, plans=plans)
        return row

    async def fetch_rows(
        self,
        statement: str,
        params: Mapping[str, Any],
        *,
        tags: Mapping[LiteralString, str] | None = None,
        session: Session | None = None,
        replica: bool = False,
    ) -> list[tuple[bytes | None, ...]]:
        """One compiled read statement answering many rows (a batch of live queries); as `fetch`."""
        return await self._rows(
            statement, params, tags=tags, session=session, replica=replica, one=False, plans=CUSTOM_PLANS
        )

    async def _rows(
        self,
        statement: str,
        params: Mapping[str, Any],
        *,
        tags: Mapping[LiteralString, str] | None,
        session: Session | None,
        replica: bool,
        one: bool,
        plans: PlanCacheMode,
    ) -> list[tuple[bytes | None, ...]]:
        if session is not None and (session.role or session.settings):
            return await self.run(
                lambda tx: tx.fetch_rows(statement, params, last=True),
                tags=tags,
                session=session,
                readonly=True,
                replica=replica,
                plans=plans,
            )
        text = _tagged(statement, self._comment(tags))

        async def once(pool: Pool) -> list[tuple[bytes | None, ...]]:
            async with pool.connection() as conn:
                if self._explain:
                    await _explain(conn, text, params)
                self.counter.sent += 1
                return await _recorded("query", text, _fetch(conn, text, params, one=one, plans=plans))

        return await self._retrying(lambda: self._routed(once, replica))

    async def run(
        self,
        work: Callable[[Transaction], Awaitable[T]],
        *,
        tags: Mapping[LiteralString, str] | None = None,
        session: Session | None = None,
        readonly: bool = False,
        isolation: Isolation = "read committed",
        replica: bool = False,
        retry: bool = True,
        plans: PlanCacheMode = CUSTOM_PLANS,
    ) -> T:
        """Run `work` in a new transaction, committed when it returns and rolled back when it raises (read-only
        work on a replica when `replica` allows; read-only work planned as `plans` says, `Transaction.open`).

        Retries the whole unit on serialization failure or deadlock, unless `retry` is off (work that consumes
        what it cannot read again, a request body); raises `SvcError` for the failures `map_database_error` names
        and the database's own error otherwise.
        """
        comment = self._comment(tags)
        begin = _BEGIN[isolation, readonly]

        async def once(pool: Pool) -> T:
            return await self._run_once(
                pool, work, comment=comment, session=session, begin=begin, readonly=readonly, plans=plans
            )

        return await self._retrying(lambda: self._routed(once, replica and readonly), retry=retry)

    def _comment(self, tags: Mapping[LiteralString, str] | None) -> str | None:
        """The comment the statements of a unit with `tags` carry (None when `database.sql_comments` is off)."""
        return _comment_text(tuple(sorted(tags.items()))) if self._sql_comments and tags else None

    async def _routed(self, attempt: Callable[[Pool], Awaitable[T]], replica: bool) -> T:
        """`attempt` on a replica when allowed and one is in the rotation with what the request asks for, else on the
        primary. On the primary too when the replica cannot be reached (it leaves the rotation), or lacks what the
        statement names: a snapshot is read from the primary, and a replica may not have replayed that DDL yet."""
        if not replica or self.replicas is None:
            return await attempt(self.pool)
        positions = current_positions()
        chosen = await self.replicas.choose(positions.minimum if positions is not None else None)
        if chosen is not None:
            try:
                return await attempt(chosen.pool)
            except psycopg.Error as exc:
                mapped = map_database_error(exc)
                if mapped is None or mapped.code not in (Code.DATABASE_UNAVAILABLE, Code.SCHEMA_CHANGED):
                    raise
                if mapped.code is Code.DATABASE_UNAVAILABLE:
                    self.replicas.failed(chosen, exc)
        return await attempt(self.pool)

    async def _retrying(self, attempt_once: Callable[[], Awaitable[T]], *, retry: bool = True) -> T:
        """Retry on serialization failure or deadlock (jittered backoff) when `retry`; map connection-level
        failures."""
        attempt = 0
        while True:
            try:
                return await attempt_once()
            except psycopg.Error as exc:
                if retry and exc.sqlstate in RETRYABLE_SQLSTATES and attempt < self._max_retries:
                    attempt += 1
                    log.info("retrying after %s (attempt %d of %d)", exc.sqlstate, attempt, self._max_retries)
                    await trio.sleep(random.uniform(0, min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt)))
                    continue
                mapped = map_database_error(exc)
                if mapped is None:
                    raise
                if mapped.code is Code.SCHEMA_CHANGED and self.on_schema_changed is not None:
                    self.on_schema_changed()
                raise mapped from exc

    async def _run_once(
        self,
        pool: Pool,
        work: Callable[[Transaction], Awaitable[T]],
        *,
        comment: str | None,
        session: Session | None,
        begin: LiteralString,
        readonly: bool,
        plans: PlanCacheMode,
    ) -> T:
        async with pool.connection() as conn:
            positions = None if readonly else current_positions()
            kind = "query" if readonly else "mutation"
            tx = Transaction(
                conn, comment, self.counter, kind, report_position=positions is not None, explain=self._explain
            )
            try:
                await tx.open(begin, session, readonly=readonly, plans=plans)
                result = await work(tx)
                if not tx.committed:
                    await tx.commit()
            except BaseException as error:
                await tx.abandon(error)
                await _rollback(conn)
                raise
            if positions is not None and tx.position is not None:
                positions.wrote(tx.position)
            return result


@functools.lru_cache(maxsize=1024)
def _comment_text(tags: tuple[tuple[LiteralString, str], ...]) -> str:
    """The comment of a read's tags, as text (operations repeat: written once each)."""
    return sql_comment(dict(tags)).as_string(None)


def _tagged(statement: str, comment: str | None) -> str:
    return statement if comment is None else statement + comment


async def _recorded(kind: str, statement: object, sending: Awaitable[T]) -> T:
    """Await one statement (`sending`, not started yet) and record it as a database operation of `kind`, with its
    SQLSTATE when it fails."""
    started = time.perf_counter()
    try:
        result = await sending
    except psycopg.Error as exc:
        database_operation(kind, statement, started, exc.sqlstate or "")
        raise
    database_operation(kind, statement, started)
    return result


async def _fetch(
    conn: Connection, statement: str, params: Mapping[str, Any], *, one: bool, plans: PlanCacheMode
) -> list[tuple[bytes | None, ...]]:
    """A compiled read on its own (no transaction of the unit's), in one turn; planned as `plans` says, set for the
    turn's implicit transaction when it is not the connection's custom plan."""
    read = compiled(conn.raw, statement, params)
    *_, result = await turn(conn, [read] if plans == CUSTOM_PLANS else [_PLANS[plans], read])
    return _loaded(conn, result, one=one)


async def _explain(conn: Connection, statement: str, params: Mapping[str, Any]) -> None:
    """Record the plan the database makes for a compiled statement with these values (EXPLAIN without ANALYZE: it
    plans, never runs; a statement that cannot be planned fails here with the error it would fail with)."""
    cursor = conn.cursor()
    cursor.adapters.register_loader("json", RawText)
    explain = "explain (format json) " + statement
    await cursor.execute(explain, params, prepare=False)  # pyright: ignore[reportArgumentType, reportCallIssue]
    row = await cursor.fetchone()
    assert row is not None
    statement_plan(statement, row[0])


async def _rollback(conn: Connection) -> None:
    if conn.interrupted or conn.closed:
        return
    if conn.pgconn.transaction_status not in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR):
        return
    with trio.CancelScope(shield=True), trio.move_on_after(_ROLLBACK_TIMEOUT):
        try:
            await conn.execute("rollback", prepare=False)
        except (psycopg.Error, OSError):
            pass  # the connection is broken; the pool discards it on checkin
