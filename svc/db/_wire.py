"""A unit's statements sent in one turn of libpq's pipeline mode, driven by Trio: its BEGIN and session, a compiled
statement, its COMMIT, written into libpq's buffer together, flushed in one send and answered by one sync.

ARCHITECTURE.md ("Database driver"): psycopg's own pipeline sends and flushes one command per turn of its generator
and builds a cursor per statement; a create with its payload read sent seven packets and spent most of its time
there (issue 22). Here a turn is a list of `Command`s: each is sent with `send_query_params`, or prepared once per
connection under a name of ours (`svc_<n>`, at most `database.statement_cache` of them, the oldest closed) and
sent with `send_query_prepared`; a turn waits for the socket only when the kernel has to (flush, then the answer).

A turn's answer is one result per command, in order; the first failed command raises its error, as psycopg would
(the ones after it were skipped by the server until the sync), and `failed_command` tells which it was. A turn cut
short (cancelled, or failed in a way the protocol state cannot be known after) interrupts the connection: the
backend is asked to cancel and the connection is discarded, as with psycopg's own waits (`Connection.wait`).
"""

import functools
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import trio
from psycopg import errors as e
from psycopg import pq
from psycopg.abc import Buffer, Transformer
from psycopg.adapt import PyFormat
from psycopg.pq.abc import PGconn, PGresult
from psycopg.waiting import Ready

from svc.sockets import ready_now

if TYPE_CHECKING:
    from ._connection import Connection

_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)
_PLACEHOLDER = re.compile(rb"%%|%\((\w+)\)s|%")
#: SQLSTATEs after which a prepared name is not used again: the plan's result type changed under it (0A000), or the
#: statement is gone (26000, a DISCARD or DEALLOCATE of someone else's).
_STALE = frozenset({"0A000", "26000"})
#: The attribute of an error `turn` raises naming the command that failed (`failed_command`).
_FAILED_COMMAND = "svc_failed_command"


@attrs.frozen
class Command:
    """One statement of a turn: its text with `$n` parameters, their values as sent, their types and formats, and
    whether it is prepared (a compiled statement: its text is its shape)."""

    query: bytes
    params: Sequence[Buffer | None] | None = None
    types: Sequence[int] | None = None
    formats: Sequence[pq.Format] | None = None
    prepare: bool = False


@functools.lru_cache(maxsize=2048)
def _numbered(text: str) -> tuple[bytes, tuple[str, ...]]:
    """A compiled statement with `%(name)s` placeholders as libpq's `$n`, and the names in parameter order (a name
    used twice binds once); `%%` is a percent sign. Statements repeat by shape: each text is converted once."""
    names: dict[str, int] = {}

    def number(match: re.Match[bytes]) -> bytes:
        if match.group(0) == b"%%":
            return b"%"
        if match.group(1) is None:
            raise e.ProgrammingError(f"only %(name)s placeholders are allowed in a compiled statement: {text[:80]!r}")
        name = match.group(1).decode()
        return b"$%d" % names.setdefault(name, len(names) + 1)

    query = _PLACEHOLDER.sub(number, text.encode())
    return query, tuple(names)


def compiled(transformer: Transformer, text: str, params: Mapping[str, Any], *, prepare: bool = True) -> Command:
    """The command of a compiled statement with its named values: prepared, its text being its shape (when the
    connection prepares any: `turn`)."""
    query, names = _numbered(text)
    return command(transformer, query, [params[name] for name in names], prepare=prepare)


def command(transformer: Transformer, query: bytes, values: Sequence[Any], *, prepare: bool = False) -> Command:
    """The command of `query` (`$n` parameters) with `values`, dumped by `transformer` as psycopg would."""
    dumped = transformer.dump_sequence(values, [PyFormat.AUTO] * len(values))
    return Command(query, dumped, transformer.types, transformer.formats, prepare)


@attrs.define
class PreparedNames:
    """The statements prepared on one connection, by text and parameter types, the least recently used first: at
    most `limit` of them once a turn is answered, the ones put out closed with the next turn."""

    limit: int
    names: OrderedDict[tuple[bytes, tuple[int, ...]], bytes] = attrs.field(
        factory=OrderedDict[tuple[bytes, tuple[int, ...]], bytes]
    )
    #: The names the server answered the preparation of (a name in `names` but not here is being prepared).
    confirmed: set[bytes] = attrs.field(factory=set[bytes])
    #: Names put out of `names` whose closing has not been answered yet: sent at the start of the next turn.
    doomed: list[bytes] = attrs.field(factory=list[bytes])
    counter: int = 0

    def name(self, key: tuple[bytes, tuple[int, ...]]) -> tuple[bytes, bool]:
        """The name `key` is prepared under, and whether it must be prepared in this turn first."""
        name = self.names.get(key)
        if name is not None:
            self.names.move_to_end(key)
            return name, False
        self.counter += 1
        name = self.names[key] = b"svc_%d" % self.counter
        return name, True

    def answered(self, key: tuple[bytes, tuple[int, ...]], name: bytes, ok: bool) -> None:
        """The server answered the preparation of `name`: kept when it succeeded, forgotten when not."""
        if ok:
            self.confirmed.add(name)
        elif self.names.get(key) == name:
            del self.names[key]

    def stale(self, key: tuple[bytes, tuple[int, ...]]) -> None:
        """The statement under `key` cannot be used again: it is closed with the next turn and prepared anew."""
        if (name := self.names.pop(key, None)) is not None:
            self._put_out(name)

    def trim(self) -> None:
        while len(self.names) > self.limit:
            self._put_out(self.names.popitem(last=False)[1])

    def _put_out(self, name: bytes) -> None:
        if name in self.confirmed:
            self.confirmed.discard(name)
            self.doomed.append(name)


@attrs.frozen
class _Sent:
    """What one libpq command of a turn was: which `Command` it answers (None: a closing), and for a
    preparation or a prepared execution, its key and name."""

    command: int | None
    key: tuple[bytes, tuple[int, ...]] | None = None
    name: bytes | None = None
    preparing: bool = False


class _Exchange:
    """libpq's pipeline mode for one exchange (`done` once every answer is in): cut short (cancelled, or failed in a
    way the protocol state cannot be known after), it interrupts the connection; a lost socket is OperationalError.
    A class, not a generator's context manager: a turn is on every request's path."""

    __slots__ = ("conn", "finished")

    def __init__(self, conn: "Connection") -> None:
        self.conn = conn
        self.finished = False

    def __enter__(self) -> "_Exchange":
        self.conn.pgconn.enter_pipeline_mode()
        return self

    def done(self) -> None:
        self.conn.pgconn.exit_pipeline_mode()
        self.finished = True

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: object) -> None:
        conn = self.conn
        if not self.finished and conn.pgconn.status == pq.ConnStatus.OK and not conn.interrupted:
            conn.interrupt()
        if isinstance(error, OSError):
            raise e.OperationalError("connection socket closed") from error


async def turn(conn: "Connection", commands: Sequence[Command]) -> list[PGresult]:
    """Send `commands` in one pipeline with one sync and return each one's result, raising the first error."""
    pgconn = conn.pgconn
    prepared = conn.prepared_names
    fileno = pgconn.socket
    sent: list[_Sent] = []
    doomed = list(prepared.doomed) if prepared is not None else []
    with _Exchange(conn) as exchange:
        for name in doomed:
            pgconn.send_close_prepared(name)  # closing a statement that is not there is not an error
            sent.append(_Sent(None, name=name))
        for index, command in enumerate(commands):
            if command.prepare and prepared is not None:
                key = (command.query, tuple(command.types or ()))
                name, preparing = prepared.name(key)
                if preparing:
                    pgconn.send_prepare(name, command.query, param_types=command.types)
                    sent.append(_Sent(index, key, name, preparing=True))
                pgconn.send_query_prepared(name, command.params, param_formats=command.formats)
                sent.append(_Sent(index, key, name))
            else:
                pgconn.send_query_params(
                    command.query, command.params, param_formats=command.formats, param_types=command.types
                )
                sent.append(_Sent(index))
        pgconn.pipeline_sync()
        await _flush(pgconn, fileno)
        answers = await _answers(pgconn, fileno, len(sent))
        exchange.done()
    return _results(conn, commands, sent, answers)


async def fetch_ahead(
    conn: "Connection", fetch: Command, size: int, each: Callable[[PGresult], Awaitable[None]]
) -> None:
    """Run `fetch` (a FETCH of `size` rows from an open cursor) until it answers fewer, handing each answer with
    rows to `each`; the next FETCH is sent before an answer is handed on, so the server reads the next rows while
    `each` writes these (one ahead: a slow `each` holds the cursor and at most one answer more, not memory). A
    failure, or a cut, leaves the connection interrupted (the FETCH ahead is still unanswered), as a turn cut short
    does."""
    pgconn = conn.pgconn
    fileno = pgconn.socket
    with _Exchange(conn) as exchange:
        _send_fetch(pgconn, fetch)
        await _flush(pgconn, fileno)
        more = True
        while more:
            _send_fetch(pgconn, fetch)
            await _flush(pgconn, fileno)
            answer = await _fetched(conn, fileno)
            more = answer.ntuples == size
            if answer.ntuples:
                await each(answer)
        await _fetched(conn, fileno)  # the FETCH ahead, past the end: none
        exchange.done()


async def _fetched(conn: "Connection", fileno: int) -> PGresult:
    (answer,) = await _answers(conn.pgconn, fileno, 1)
    if answer.status != pq.ExecStatus.TUPLES_OK:
        raise e.error_from_result(answer, encoding=conn.info.encoding)
    return answer


def _send_fetch(pgconn: PGconn, fetch: Command) -> None:
    pgconn.send_query_params(fetch.query, fetch.params, param_formats=fetch.formats, param_types=fetch.types)
    pgconn.pipeline_sync()


async def _flush(pgconn: PGconn, fileno: int) -> None:
    """Send what libpq holds; while the kernel cannot take it all, read what the server answers meanwhile (so
    neither side waits on the other's full buffer)."""
    while pgconn.flush():
        if await ready_either(fileno) & Ready.R:
            pgconn.consume_input()


async def ready_either(fileno: int) -> Ready:
    """Wait for either direction: what is ready now, else whichever comes first.

    What is ready now is answered without a checkpoint: psycopg's pipeline (COPY) asks once per command it sends
    and the socket is nearly always writable, so a write would yield to the scheduler for nothing. Each such answer
    lets the caller make progress (send, flush, read), so its loop ends; every real wait is a checkpoint."""
    readable, writable = ready_now(fileno, write=True)
    if readable or writable:
        return Ready((Ready.R if readable else 0) | (Ready.W if writable else 0))
    first: list[Ready] = []

    async def wait_for(wait: Callable[[int], Any], ready: Ready, scope: trio.CancelScope) -> None:
        await wait(fileno)
        first.append(ready)
        scope.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait_for, trio.lowlevel.wait_readable, Ready.R, nursery.cancel_scope)
        nursery.start_soon(wait_for, trio.lowlevel.wait_writable, Ready.W, nursery.cancel_scope)
    return first[0]


async def _answers(pgconn: PGconn, fileno: int, count: int) -> list[PGresult]:
    """Each sent command's result (its last, or its error), until the sync's."""
    answers: list[PGresult] = []
    current: PGresult | None = None
    while True:
        while pgconn.is_busy():
            await trio.lowlevel.wait_readable(fileno)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            assert current is not None
            answers.append(current)
            current = None
        elif result.status == pq.ExecStatus.PIPELINE_SYNC:
            break
        elif current is None or current.status != pq.ExecStatus.FATAL_ERROR:
            current = result
    if len(answers) != count:
        raise e.InternalError(f"a pipeline turn answered {len(answers)} commands of {count}")
    return answers


def _results(
    conn: "Connection", commands: Sequence[Command], sent: Sequence[_Sent], answers: Sequence[PGresult]
) -> list[PGresult]:
    prepared = conn.prepared_names
    results: list[PGresult | None] = [None] * len(commands)
    error: e.Error | None = None
    for what, answer in zip(sent, answers, strict=True):
        ok = answer.status in _OK
        if what.command is None:  # a closing
            if ok and prepared is not None and what.name in prepared.doomed:
                prepared.doomed.remove(what.name)
            continue
        if what.preparing:
            if prepared is not None and what.key is not None and what.name is not None:
                prepared.answered(what.key, what.name, ok)
            if error is None and answer.status == pq.ExecStatus.FATAL_ERROR:
                error = e.error_from_result(answer, encoding=conn.info.encoding)
            continue
        if not ok and error is None and answer.status == pq.ExecStatus.FATAL_ERROR:
            error = e.error_from_result(answer, encoding=conn.info.encoding)
            set_failed_command(error, what.command)
            if prepared is not None and what.key is not None and error.sqlstate in _STALE:
                prepared.stale(what.key)
        results[what.command] = answer
    if prepared is not None:
        prepared.trim()
    if error is not None:
        raise error
    return [result for result in results if result is not None]


def failed_command(error: e.Error) -> int | None:
    """The position among a turn's commands of the one whose failure `turn` raised (those after it did not run);
    None for an error raised otherwise."""
    return getattr(error, _FAILED_COMMAND, None)


def set_failed_command(error: e.Error, position: int | None) -> None:
    """Say which command of a turn `error` is the failure of (`failed_command`)."""
    setattr(error, _FAILED_COMMAND, position)


def rows(transformer: Transformer, result: PGresult) -> list[tuple[Any, ...]]:
    """A result's rows, loaded by `transformer` (text and JSON columns as raw bytes: `RawText`)."""
    transformer.set_pgresult(result)
    return transformer.load_rows(0, result.ntuples, tuple)
