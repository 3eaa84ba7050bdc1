"""psycopg's AsyncConnection driven by Trio instead of asyncio.

psycopg does its protocol work in generators that yield "wait for this socket to be readable/writable"; its async
connection consumes them with asyncio. This subclass consumes them with `trio.lowlevel.wait_readable/writable`,
connects over `_connect_gen` the same way, and swaps the asyncio lock for a Trio one.

Cancellation (ARCHITECTURE.md, "Database driver"): psycopg's interrupt handling does not know `trio.Cancelled`. When a
task is cancelled while a statement runs, the connection is marked `interrupted` (its protocol state is unknown, so
it must be discarded, never reused) and the server is asked to cancel the statement, so the backend does not run on.
The cancel request is handed to `on_interrupt` when set (the pool sends it from its own nursery); otherwise it is
sent from a Trio system task. Either way the cancelled task is not held up by it.
"""

import contextlib
from collections.abc import Callable
from typing import Any, Self

import psycopg
import trio
from psycopg import errors as e
from psycopg import pq
from psycopg._conninfo_attempts import conninfo_attempts
from psycopg.abc import Buffer, PQGen, PQGenConn, Transformer
from psycopg.adapt import AdaptersMap, Loader
from psycopg.adapt import Transformer as MakeTransformer
from psycopg.conninfo import conninfo_to_dict, make_conninfo, timeout_from_conninfo
from psycopg.waiting import Ready, Wait

from svc.sockets import ready_now

from ._wire import PreparedNames, ready_either

#: Longest wait for the server to acknowledge a cancel request.
CANCEL_TIMEOUT = 5.0

_READY_BY_WAIT = {Wait.R: Ready.R, Wait.W: Ready.W}


class Connection(psycopg.AsyncConnection[Any]):
    """A psycopg connection for Trio tasks. Never share one between tasks: the pool hands it to one at a time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lock = trio.Lock()
        #: A statement was abandoned mid-flight: the protocol state is unknown, discard the connection.
        self.interrupted = False
        #: Called with this connection when it is interrupted; it must send the cancel and close it.
        self.on_interrupt: Callable[[Connection], None] | None = None
        #: The compiled statements prepared on this connection by `svc.db._wire` (None: none are prepared).
        self.prepared_names: PreparedNames | None = None
        self._raw: Transformer | None = None

    @property
    def raw(self) -> Transformer:
        """The transformer of compiled statements: their values dumped as psycopg would, their text and JSON
        columns loaded as the bytes the server sent (response bodies are forwarded, never decoded)."""
        if self._raw is None:
            self._raw = MakeTransformer(_RawContext(self))
        return self._raw

    @classmethod
    # Not psycopg's signature: a timeout in seconds of its own (psycopg's reads `connect_timeout` among the conninfo
    # keywords), and no row, cursor or adaptation factories, which the pool never sets.
    async def connect(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        conninfo: str = "",
        *,
        autocommit: bool = False,
        prepare_threshold: int | None = 5,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Self:
        """Open a connection, trying each host of `conninfo` in turn, each within `timeout` seconds.

        `timeout` defaults to the conninfo's `connect_timeout` (psycopg's rules).
        """
        params = conninfo_to_dict(conninfo, **kwargs)
        if timeout is None:
            timeout = timeout_from_conninfo(params)
        # Host names are resolved with the blocking resolver, so do that in a worker thread.
        attempts = await trio.to_thread.run_sync(conninfo_attempts, params)
        errors: list[e.Error] = []
        for attempt in attempts:
            try:
                with trio.fail_after(timeout):
                    conn = await _wait_conn(cls._connect_gen(make_conninfo("", **attempt)))
            except trio.TooSlowError:
                errors.append(e.ConnectionTimeout("connection timeout expired"))
            except e.Error as exc:
                errors.append(exc)
            else:
                conn._autocommit = autocommit
                conn.prepare_threshold = prepare_threshold
                return conn
        raise errors[-1].with_traceback(None)

    async def wait(self, gen: PQGen[Any], interval: float | None = None, timeout: float | None = None) -> Any:
        """Run a psycopg protocol generator to completion, waiting on the socket with Trio."""
        fileno = self.pgconn.socket
        try:
            if timeout is None:
                return await _wait(gen, fileno)
            with trio.move_on_after(timeout):
                return await _wait(gen, fileno)
            # What psycopg's notifies() expects to end its wait: a private class, with no public one for it.
            raise e._WaitTimeout("wait timeout expired")  # pyright: ignore[reportPrivateUsage]
        except BaseException:
            # Cancelled (or failed) mid-way: the generator is closed now, while the connection is still open, rather
            # than when it is collected, after the connection closed (psycopg's pipeline exit would fail then).
            with contextlib.suppress(Exception):
                gen.close()
            if self.pgconn.transaction_status == pq.TransactionStatus.ACTIVE and not self.interrupted:
                self.interrupt()
            raise

    def interrupt(self) -> None:
        """A statement was abandoned mid-flight: mark the connection for discarding and have the server cancel it."""
        self.interrupted = True
        if self.on_interrupt is not None:
            self.on_interrupt(self)
            return
        trio.lowlevel.spawn_system_task(self.cancel_and_close)

    async def cancel_and_close(self) -> None:
        """Ask the server to cancel the running statement (bounded), then close the connection. Never raises."""
        try:
            with trio.move_on_after(CANCEL_TIMEOUT):
                await _wait_conn(self._cancel_gen())
        except (e.Error, OSError):
            pass  # the server is gone or refused: closing is all that is left
        finally:
            await self.close()

    async def cancel_safe(self, *, timeout: float = 30.0) -> None:
        """psycopg's cancel, driven by Trio."""
        with trio.fail_after(timeout):
            await _wait_conn(self._cancel_gen())

    async def close(self) -> None:
        if not self.closed and (fileno := self._fileno()) >= 0:
            trio.lowlevel.notify_closing(fileno)
        await super().close()

    def _fileno(self) -> int:
        try:
            return self.pgconn.socket
        except e.OperationalError:  # the connection is already bad
            return -1

    def looks_alive(self) -> bool:
        """Cheap check of an idle connection, without a round trip: status OK and nothing waiting on its socket.

        Nothing arrives unasked on an idle pooled connection, except the error a server sends when it shuts down
        or terminates the backend, just before it closes the socket. So a readable idle socket means a dead one.
        """
        if self.closed or self.interrupted or self.pgconn.status != pq.ConnStatus.OK:
            return False
        if self.pgconn.transaction_status != pq.TransactionStatus.IDLE or (fileno := self._fileno()) < 0:
            return False
        readable, _ = ready_now(fileno)
        return not readable


class RawText(Loader):
    """Text and JSON columns as the bytes the server sent."""

    def load(self, data: Buffer) -> bytes:
        return bytes(data)


class _RawContext:
    """The adaptation context of `Connection.raw`: the connection's adapters, with `RawText` for text and JSON."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.adapters = AdaptersMap(connection.adapters)
        self.adapters.register_loader("text", RawText)
        self.adapters.register_loader("json", RawText)


async def _wait(gen: PQGen[Any], fileno: int) -> Any:
    """Drive a generator that waits on one socket."""
    try:
        waiting = next(gen)
        while True:
            ready = await _ready(fileno, waiting)
            waiting = gen.send(ready)
    except StopIteration as stop:
        await trio.lowlevel.checkpoint_if_cancelled()
        return stop.value
    except OSError as exc:
        raise e.OperationalError("connection socket closed") from exc


async def _wait_conn(gen: PQGenConn[Any]) -> Any:
    """Drive a generator that names its socket at each step (connect, cancel)."""
    try:
        fileno, waiting = next(gen)
        while True:
            ready = await _ready(fileno, waiting)
            fileno, waiting = gen.send(ready)
    except StopIteration as stop:
        return stop.value
    except OSError as exc:
        raise e.OperationalError("connection socket closed") from exc


async def _ready(fileno: int, waiting: int) -> Ready:
    if waiting == Wait.RW:
        return await ready_either(fileno)
    if waiting == Wait.R:
        await trio.lowlevel.wait_readable(fileno)
    elif waiting == Wait.W:
        await trio.lowlevel.wait_writable(fileno)
    else:
        raise e.InternalError(f"bad poll status: {waiting}")
    return _READY_BY_WAIT[Wait(waiting)]
