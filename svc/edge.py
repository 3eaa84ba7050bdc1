"""The HTTP edge: who turns bytes on the API port into ASGI calls (ARCHITECTURE.md, "The edge").

Both edges accept connections the same way (one listener loop, one task per connection, the same shutdown); what
serves a connection is chosen by `server.http`:

- `fast` (the default): cleartext HTTP/1.1 served by a Trio protocol on `httptools` (llhttp), the connection's task
  running its requests one after the other (pipelined requests are answered in order), no task, channel or timer per
  request. A connection that asks for something else is handed to hypercorn's per-connection server, the bytes read so
  far replayed to it: a WebSocket upgrade (a GET), an `Upgrade: h2c` request (both without a body) and the HTTP/2
  preface. Any other `Upgrade` is ignored (RFC 9110 7.8). A method llhttp does not know (an extension method, RFC
  9110 9.1) is passed to the app, which answers it (405), when it begins what the connection sent; one pipelined
  behind another request in the same read is refused by llhttp (400).
- `hypercorn`: hypercorn's per-connection server serves every connection (h11, HTTP/2, WebSocket), behind the fast
  edge's parser (`_Guarded`): h11 reads the requests llhttp read, written again, so the limits and refusals below
  hold on both edges. A connection hypercorn fails on is closed and logged; it does not end the service. Its
  shutdown is ours too (`_HandedOver`): each connection is told to end only once it has nothing left to answer, and
  responses started after shutdown carry `connection: close`.

Limits (both edges): a request target over 8 KiB is 414, a head over 16 KiB or with more than 100 fields 431 (an
incomplete head as soon as it cannot become one within the limits), anything llhttp refuses (smuggling shapes such
as Content-Length with Transfer-Encoding or two Content-Lengths, bad chunk sizes, invalid bytes) 400, a
Transfer-Encoding other than exactly `chunked` (or any in HTTP/1.0) 400, a request line without a version (HTTP/0.9)
400 and a version above 1.1 505, each answered with `connection: close` and the connection closed. A head must
arrive within `server.header_timeout` of its first byte, and each wait for more of a body is bounded the same way; an
idle keep-alive connection is closed after `server.keep_alive_timeout`. The body limit is the app's
(`limits.request_body_bytes`, 413): a response sent while the request's body is still unread closes the connection
rather than reading the rest.

Graceful shutdown (SIGTERM, the `shutdown` event): the listeners close (new connections are refused), idle
connections close at once, unless the bytes of a request are already waiting in them, and every request whose head
was read is answered with `connection: close`; `serve_http` returns as soon as no connection is left, at the latest
after `server.shutdown_timeout` (then what is left is cancelled).
"""

import logging
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Literal
from urllib.parse import unquote

import attrs
import h11
import httptools
import hypercorn.config
import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState

from svc.sockets import ready_now

log = logging.getLogger("svc.edge")

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]

MAX_TARGET = 8 * 1024
#: How often shutdown looks again for connections that became idle.
_SHUTDOWN_POLL = 0.05
MAX_HEAD = 16 * 1024
MAX_FIELDS = 100
#: An incomplete head longer than this cannot become one within the limits (its fields, its target, the rest of its
#: request line): refused before its end is seen.
MAX_RAW_HEAD = MAX_HEAD + MAX_TARGET + 256
#: The longest extension method read (a method llhttp does not know, RFC 9110 9.1).
MAX_METHOD = 32
READ_SIZE = 64 * 1024
#: The first bytes of an HTTP/2 connection with prior knowledge (RFC 9113, 3.4).
H2_PREFACE = b"PRI * HTTP/2.0\r\n"


@attrs.frozen
class EdgeSettings:
    http: Literal["fast", "hypercorn"] = "fast"
    host: str = "127.0.0.1"
    port: int = 4000
    keep_alive_timeout: float = 5.0
    header_timeout: float = 10.0
    shutdown_timeout: float = 20.0


async def serve_http(
    app: ASGIApp,
    settings: EdgeSettings,
    shutdown: trio.Event,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` on `settings.host:port` until `shutdown` is set and what was in flight is answered; report the
    bound addresses (`http://host:port`) once listening."""
    await _Edge(app, settings, _hypercorn_config(settings)).serve(shutdown, task_status)


def _hypercorn_config(settings: EdgeSettings) -> hypercorn.config.Config:
    hc = hypercorn.config.Config()
    host = settings.host
    hc.bind = [f"[{host}]:{settings.port}" if ":" in host and not host.startswith("[") else f"{host}:{settings.port}"]
    hc.graceful_timeout = settings.shutdown_timeout
    hc.keep_alive_timeout = settings.keep_alive_timeout
    hc.h11_max_incomplete_size = MAX_HEAD
    hc.include_server_header = False
    hc.accesslog = None
    hc.errorlog = logging.getLogger("hypercorn.error")  # configured with ours (svc.telemetry)
    return hc


class _Refused(Exception):
    """A request the edge answers itself with `status` and closes on (raised from the parser's callbacks)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Date:
    """The `date` header's value, formatted at most once a second."""

    def __init__(self) -> None:
        self._second = 0
        self._value = b""

    def value(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._value = formatdate(now, usegmt=True).encode()
        return self._value


class _Edge:
    def __init__(self, app: ASGIApp, settings: EdgeSettings, hc: hypercorn.config.Config) -> None:
        self.app = app
        self.settings = settings
        self.hc = hc
        self.date = _Date()
        #: Set on shutdown: no connection is kept alive after its current request.
        self.closing = False
        self.connections: set[_Connection] = set()

    async def serve(self, shutdown: trio.Event, task_status: trio.TaskStatus[list[str]]) -> None:
        host = self.settings.host
        listeners = await trio.open_tcp_listeners(self.settings.port, host=host.strip("[]") or None)
        binds = [_url(listener.socket.getsockname()) for listener in listeners]
        async with trio.open_nursery() as connections:
            async with trio.open_nursery() as accepting:
                for listener in listeners:
                    accepting.start_soon(self._accept, listener, connections)
                task_status.started(binds)
                await shutdown.wait()
                accepting.cancel_scope.cancel()
            for listener in listeners:
                await listener.aclose()
            self.closing = True
            connections.cancel_scope.deadline = trio.current_time() + self.settings.shutdown_timeout
            # Asked again until they end: a connection busy now (a request in flight) may be idle later.
            while self.connections:
                for connection in list(self.connections):
                    await connection.shutdown()
                await trio.sleep(_SHUTDOWN_POLL)

    async def _accept(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:  # out of file descriptors or memory: wait for some to be freed
                log.error("cannot accept a connection: %s", exc)
                await trio.sleep(0.1)
                continue
            nursery.start_soon(_Connection(self, stream).run)


def _url(address: Any) -> str:
    host, port = address[0], address[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Message:
    """One request as the parser reads it: its head, then its body as it arrives."""

    __slots__ = ("target", "headers", "head_size", "method", "version", "keep_alive", "expect_continue", "body",
                 "complete", "upgrade")  # fmt: skip

    def __init__(self) -> None:
        self.target = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_size = 0
        self.method = "GET"
        self.version = "1.1"
        self.keep_alive = True
        self.expect_continue = False
        self.body: list[bytes] = []
        self.complete = False
        self.upgrade = False


class _Connection:
    """One client connection: its parser, the requests read and not yet answered (in order), the one running."""

    def __init__(self, edge: _Edge, stream: trio.SocketStream) -> None:
        self.edge = edge
        self.stream = stream
        self.parser = httptools.HttpRequestParser(self)
        #: Requests whose head is read, oldest first; the first is the one being answered.
        self.pending: deque[_Message] = deque()
        #: The request whose head is being read (None between requests).
        self.parsing: _Message | None = None
        self.head_started = 0.0
        self.head_bytes = 0  # bytes fed since the head began, while it is incomplete
        #: The request the parser's body callbacks belong to.
        self.receiving: _Message | None = None
        self.eof = False
        #: A status to answer once the requests before it are answered, then close (a request that cannot be read).
        self.refusal: int | None = None
        #: Bytes after an upgrade request's head (they belong to the protocol it is handed to).
        self.upgrade_tail = b""
        self.first = True  # nothing told yet of what the connection speaks
        self.sniffed = b""
        #: Whether closing should first read what the client still sends (after an answer that ends the connection).
        self.lingering = False
        self.idle_at = trio.current_time()
        #: The wait for the next request, cancelled by shutdown while the connection is idle.
        self.waiting: trio.CancelScope | None = None
        socket = stream.socket
        self.client = _address(socket.getpeername())
        self.server = _address(socket.getsockname())
        #: The request line's method when llhttp does not know it (an extension method, parsed as GET).
        self.method: str | None = None
        #: The start of a request line held until its method is told (it arrived in pieces).
        self.held = b""
        self.began = False  # whether the head being read began during the current feed
        self.completed = 0  # requests read whole so far
        #: What hypercorn serving the connection is doing, once it is handed over.
        self.handed: _HandedOver | None = None

    # --- the parser's callbacks --------------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.parsing = _Message()
        self.head_started = trio.current_time()
        self.head_bytes = 0
        self.began = True

    def on_url(self, url: bytes) -> None:
        message = self.parsing
        assert message is not None
        message.target += url
        if len(message.target) > MAX_TARGET:
            raise _Refused(414)

    def on_header(self, name: bytes, value: bytes) -> None:
        message = self.parsing
        if message is None:  # a trailer field of a chunked body: dropped (the size of the body bounds them)
            return
        message.head_size += len(name) + len(value) + 4
        message.headers.append((name.lower(), value))
        if message.head_size > MAX_HEAD or len(message.headers) > MAX_FIELDS:
            raise _Refused(431)

    def on_headers_complete(self) -> None:
        message = self.parsing
        assert message is not None
        parser = self.parser
        message.method = self.method or parser.get_method().decode("ascii")
        self.method = None
        message.version = version = parser.get_http_version()
        if version not in ("1.1", "1.0"):
            raise _Refused(505 if version > "1.1" else 400)  # HTTP/0.9 has no head to answer with
        message.keep_alive = parser.should_keep_alive()
        protocols = ()
        bodied = False
        for name, value in message.headers:
            if name == b"expect" and value.lower() == b"100-continue":
                message.expect_continue = True
            elif name == b"transfer-encoding":
                if version == "1.0" or value.strip().lower() != b"chunked":
                    # Codings the edge cannot undo, or one hiding behind another: the body cannot be told apart
                    # from the next request (RFC 9112 6.1; llhttp lets `identity, chunked` through).
                    raise _Refused(400)
                bodied = True
            elif name == b"content-length":
                bodied = bodied or value.strip() != b"0"
            elif name == b"upgrade":
                protocols = [protocol.strip().lower() for protocol in value.split(b",")]
        # Upgrades hypercorn serves (subscriptions over WebSocket, HTTP/2), asked without a body (hypercorn would
        # read a body as frames of the new protocol); any other is ignored (RFC 9110 7.8).
        message.upgrade = (
            parser.should_upgrade()
            and not bodied
            and (b"h2c" in protocols or (b"websocket" in protocols and message.method == "GET"))
        )
        self.pending.append(message)
        self.receiving = message
        self.parsing = None

    def on_body(self, body: bytes) -> None:
        assert self.receiving is not None
        self.receiving.body.append(body)

    def on_message_complete(self) -> None:
        assert self.receiving is not None
        self.receiving.complete = True
        self.receiving = None
        self.completed += 1

    # --- reading -----------------------------------------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        """Parse `data`; a request that cannot be read becomes `refusal` (answered after those before it)."""
        if not data:
            self.eof = True
            return
        at_boundary = self.parsing is None and self.receiving is None
        if self.held or (at_boundary and not data.startswith(_COMMON_METHODS)):
            data = self._told_method(self.held + data)
            if not data:
                return
        completed = self.completed
        self.began = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            tail = data[upgrade.args[0] :]
            if self.pending[-1].upgrade:
                self.upgrade_tail = tail
            else:  # llhttp stops at any Upgrade: read the request again without it, as an ordinary one
                self._read_again(self.pending.pop(), tail)
        except httptools.HttpParserCallbackError as error:
            refused = error.__context__
            self.refusal = refused.status if isinstance(refused, _Refused) else 400
        except httptools.HttpParserError:
            self.refusal = 400
        else:
            if self.parsing is not None:  # a head is incomplete: count its bytes
                if not self.began:
                    self.head_bytes += len(data)
                elif at_boundary and self.completed == completed:
                    self.head_bytes = len(data)  # it began at the start of `data`
                # else it began after other requests in `data`: counted from the next read on
                if self.head_bytes > MAX_RAW_HEAD:
                    self.refusal = 431

    def _told_method(self, data: bytes) -> bytes:
        """`data` beginning a request whose method llhttp may not know: an extension method (RFC 9110 9.1) is
        kept for the app and the request parsed as GET; a request line still without its method is held."""
        space = data.find(b" ", 0, MAX_METHOD + 1)
        if space < 0:
            self.held = data if len(data) <= MAX_METHOD and _TOKEN.fullmatch(data) else b""
            return b"" if self.held else data
        self.held = b""
        method = data[:space]
        if data.startswith(_COMMON_METHODS) or not _TOKEN.fullmatch(method):
            return data  # a method llhttp reads, or not a method at all (llhttp refuses it)
        self.method = method.decode("ascii")
        return b"GET" + data[space:]

    def _read_again(self, message: _Message, tail: bytes) -> None:
        """Parse an upgrade request the edge does not hand over again, with a new parser and its `Upgrade` header
        dropped, followed by the bytes after it."""
        message.headers = [field for field in message.headers if field[0] != b"upgrade"]
        self.parser = httptools.HttpRequestParser(self)
        self._feed(_replayed(message) + tail)

    def _deadline(self) -> float:
        """When the wait for more of the next request ends: its head's deadline once it began, else idleness."""
        settings = self.edge.settings
        if self.parsing is not None or self.first:
            started = self.head_started if self.parsing is not None else self.idle_at
            return started + settings.header_timeout
        return self.idle_at + settings.keep_alive_timeout

    async def _next(self) -> _Message | None:
        """The next request to answer, once its head is read; None when the connection is to be closed."""
        while not self.pending:
            if self.refusal is not None:
                await self._refuse(self.refusal)
                return None
            if self.eof or self.upgrade_tail:
                return None
            deadline = self._deadline()
            if self.edge.closing and self.parsing is None:
                if not self._readable():
                    return None
                deadline = math.inf  # a request's bytes are waiting: the read returns at once
            data = b""
            with trio.CancelScope(deadline=deadline) as scope:
                self.waiting = scope
                data = await self.stream.receive_some(READ_SIZE)
            self.waiting = None
            if scope.cancelled_caught:  # timed out, or the shutdown found the connection idle
                if self.edge.closing and self.parsing is None:
                    continue  # closed unless a request is waiting in it (looked at above)
                return None
            if self.first and data:
                # HTTP/2 with prior knowledge goes to hypercorn: read until the preface is told from HTTP/1.1.
                self.sniffed += data
                if H2_PREFACE.startswith(self.sniffed[: len(H2_PREFACE)]):
                    if len(self.sniffed) >= len(H2_PREFACE):
                        await self._hand_over(self.sniffed)
                        return None
                    continue
                data, self.sniffed, self.first = self.sniffed, b"", False
            self._feed(data)
        return self.pending[0]

    def _readable(self) -> bool:
        """Whether bytes (or the end of the stream) are waiting to be read, without waiting for them."""
        readable, _ = ready_now(self.stream.socket.fileno())  # a closed socket's -1 is never ready
        return readable

    async def shutdown(self) -> None:
        """The service is stopping: an idle connection stops waiting for its next request (one hypercorn serves is
        told to end once it has nothing left to answer)."""
        if self.handed is not None:
            await self.handed.shutdown(self._readable())
        elif self.waiting is not None and self.parsing is None and not self.pending:
            self.waiting.cancel()

    # --- answering ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        self.edge.connections.add(self)
        try:
            if self.edge.settings.http == "hypercorn":
                await self._serve_guarded()
                return
            while (message := await self._next()) is not None:
                if message.upgrade:
                    await self._hand_over(_replayed(message) + self.upgrade_tail)
                    return
                if not await self._answer(message):
                    return
                self.pending.popleft()
                self.idle_at = trio.current_time()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away
        finally:
            self.edge.connections.discard(self)
            await self._close()

    async def _answer(self, message: _Message) -> bool:
        """Run the app for `message`; whether the connection may carry another request."""
        target = message.target
        if target[:1] == b"/":
            raw_path, _, query = target.partition(b"?")
        else:  # absolute form (a proxy's), or the asterisk of OPTIONS *
            try:
                url = httptools.parse_url(target)
            except httptools.HttpParserInvalidURLError:
                url = None
            if target == b"*" or url is None:
                await self._refuse(400 if url is None and target != b"*" else 404)
                return False
            raw_path, query = url.path or b"/", url.query or b""
        try:
            path = unquote(raw_path.decode("ascii"))
        except UnicodeDecodeError:
            await self._refuse(400)
            return False
        scope = {
            "type": "http",
            "asgi": _ASGI,
            "http_version": message.version,
            "method": message.method,
            "scheme": "http",
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            "headers": message.headers,
            "client": self.client,
            "server": self.server,
        }
        self.status = 0
        self.response_headers: Any = ()
        self.head_sent = self.finished = self.body_done = self.continued = False
        self.keep = self.chunked = self.no_body = False
        try:
            await self.edge.app(scope, self._receive, self._send)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise
        except Exception as exc:
            log.error("unhandled error answering %s %s", message.method, path, exc_info=exc)
        if not self.finished:
            if not self.head_sent:
                await self._refuse(500)
            return False
        return self.keep

    async def _receive(self) -> dict[str, Any]:
        message = self.pending[0]
        while True:
            if message.body:
                body = message.body[0] if len(message.body) == 1 else b"".join(message.body)
                message.body.clear()
                self.body_done = message.complete
                return {"type": "http.request", "body": body, "more_body": not message.complete}
            if message.complete:
                if not self.body_done:
                    self.body_done = True
                    return {"type": "http.request", "body": b"", "more_body": False}
                return await self._disconnected()
            if self.eof or self.refusal is not None:  # the body will not be completed
                return {"type": "http.disconnect"}
            if message.expect_continue and not self.continued and not self.head_sent:
                self.continued = True
                await self.stream.send_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            data = b""
            with trio.move_on_after(self.edge.settings.header_timeout) as scope:
                data = await self.stream.receive_some(READ_SIZE)
            if scope.cancelled_caught:  # the rest of the body is too slow to come
                self.refusal = 408
                return {"type": "http.disconnect"}
            self._feed(data)

    async def _disconnected(self) -> dict[str, Any]:
        """Wait for the client to go away (a streamed answer stops then); reading stops at the next request."""
        while not (self.eof or self.refusal is not None or self.upgrade_tail or len(self.pending) > 1):
            self._feed(await self.stream.receive_some(READ_SIZE))
        if self.eof:
            return {"type": "http.disconnect"}
        await trio.sleep_forever()
        raise AssertionError  # not reached

    async def _send(self, event: MutableMapping[str, Any]) -> None:
        kind = event["type"]
        if kind == "http.response.start":
            self.status = event["status"]
            self.response_headers = event.get("headers", ())
            return
        if kind != "http.response.body" or self.finished or not self.status:
            return
        body = event.get("body", b"")
        more = event.get("more_body", False)
        if not self.head_sent:
            data = self._head(None if more else len(body))
            self.head_sent = True
            if not self.no_body:
                data += _chunk(body) if self.chunked else body
        elif self.no_body:
            data = b""
        else:
            data = _chunk(body) if self.chunked else body
        if not more:
            self.finished = True
            if self.chunked and not self.no_body:
                data += b"0\r\n\r\n"
        if data:
            await self.stream.send_all(data)

    def _head(self, length: int | None) -> bytes:
        """The response's status line and headers; decides its framing and whether the connection stays open."""
        message = self.pending[0]
        status = self.status
        lines = [_STATUS_LINES.get(status) or b"HTTP/1.1 %d \r\n" % status]
        framed = False
        for name, value in self.response_headers:
            if name == b"content-length":
                framed = True
            elif name in (b"connection", b"transfer-encoding"):
                continue  # the edge's to decide
            lines.append(b"%s: %s\r\n" % (name, value))
        bodiless = status < 200 or status in (204, 304)
        self.no_body = bodiless or message.method == "HEAD"
        keep = message.keep_alive and message.complete and not self.edge.closing and not self.eof
        if not framed and not bodiless and message.method != "HEAD":
            if length is not None:
                lines.append(b"content-length: %d\r\n" % length)
            elif message.version == "1.1":
                self.chunked = True
                lines.append(b"transfer-encoding: chunked\r\n")
            else:
                keep = False  # an HTTP/1.0 client reads to the end of the connection
        if not keep:
            lines.append(b"connection: close\r\n")
            self.lingering = True
        elif message.version == "1.0":
            lines.append(b"connection: keep-alive\r\n")
        lines.append(b"date: %s\r\n\r\n" % self.edge.date.value())
        self.keep = keep
        return b"".join(lines)

    async def _refuse(self, status: int) -> None:
        """Answer a request the edge cannot pass on (unreadable, too large, too slow) and close."""
        head = _STATUS_LINES.get(status) or b"HTTP/1.1 %d \r\n" % status
        try:
            await self.stream.send_all(
                head + b"content-length: 0\r\nconnection: close\r\ndate: %s\r\n\r\n" % self.edge.date.value()
            )
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        self.lingering = True

    async def _close(self) -> None:
        """Close the connection; after an answer that may have left bytes unread, read them first (for a while) so
        that the client is not reset before it reads the answer."""
        try:
            if self.lingering and not self.eof:
                await self.stream.send_eof()
                with trio.move_on_after(LINGER):
                    while await self.stream.receive_some(READ_SIZE):
                        pass
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
            pass
        finally:
            await self.stream.aclose()

    async def _hand_over(self, received: bytes) -> None:
        """Let hypercorn serve the connection (WebSocket, HTTP/2), starting with the bytes already read."""
        await self._served_by_hypercorn(_Replayed(self.stream, received))

    async def _serve_guarded(self) -> None:
        """`server.http: hypercorn`: hypercorn serves the connection, reading what this connection's parser read."""
        await self._served_by_hypercorn(_Guarded(self))

    async def _served_by_hypercorn(self, stream: "_HandedStream") -> None:
        handed = self.handed = _HandedOver(self.edge, stream)
        handed.server = TCPServer(handed.app, self.edge.hc, handed.context, ConnectionState({}), stream)  # type: ignore[arg-type]
        try:
            await handed.server
        except Exception as exc:  # one connection's failure in hypercorn (h11 can race its own sends) ends only it
            log.warning("hypercorn failed serving a connection from %s: %r", self.client, exc)


def _address(address: Any) -> tuple[str, int] | None:
    return (address[0], address[1]) if isinstance(address, tuple) else None


def _chunk(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(body), body) if body else b""


def _replayed(message: _Message) -> bytes:
    """An upgrade request's bytes, made again from what was parsed (for hypercorn to read)."""
    head = [b"%s %s HTTP/%s\r\n" % (message.method.encode(), message.target, message.version.encode())]
    head += [b"%s: %s\r\n" % field for field in message.headers]
    return b"".join(head) + b"\r\n" + b"".join(message.body)


class _HandedOver:
    """A connection hypercorn serves, and its graceful shutdown.

    hypercorn's own shutdown (its worker context's `terminated`) closes an HTTP/1.1 keep-alive connection from a
    task of its own that can fire while a request is arriving, or after one was read and run, and answers the
    requests in flight without `connection: close`. So an HTTP/1.1 connection is closed here instead, and only when
    no request it has read is unanswered (`_closable`): a request arriving later is never read, so it cannot have
    run. Every response started after shutdown carries `connection: close`, after which h11 ends the connection
    itself. The edge asks again until the connection ends (`_Edge.serve`). Other protocols (HTTP/2) get hypercorn's
    own shutdown, through a worker context of their own."""

    def __init__(self, edge: _Edge, stream: trio.abc.Stream) -> None:
        self.edge = edge
        self.stream = stream
        self.context = WorkerContext(None)
        self.app = ASGIWrapper(self._app)  # type: ignore[arg-type]
        self.server: TCPServer | None = None

    async def shutdown(self, readable: bool) -> None:
        # hypercorn's server names its protocol only once it runs: until then it has read nothing of its own, and
        # the edge asks again.
        wrapper = getattr(self.server, "protocol", None)
        if wrapper is None:
            return
        protocol = wrapper.protocol
        if not isinstance(protocol, H11Protocol):
            await self.context.terminated.set()
        elif _closable(protocol, readable):
            await self.stream.aclose()
            await self.context.terminated.set()  # ends hypercorn's keep-alive task, which would wait out its timeout

    async def _app(self, scope: MutableMapping[str, Any], receive: Any, send: Callable[[Any], Awaitable[None]]) -> None:
        edge = self.edge
        if scope["type"] != "http":
            await edge.app(scope, receive, send)
            return
        guarded = self.stream if isinstance(self.stream, _Guarded) else None
        # As on the fast edge, a response sent while the rest of a request's body has still to arrive ends the
        # connection (h11 would wait for the rest of a body nobody reads).
        unread = guarded is not None and not guarded.passed_whole() and _has_body(scope["headers"])

        async def receiving() -> Any:
            nonlocal unread
            if guarded is not None:
                await guarded.continue_()
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                unread = False
            return message

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and (edge.closing or unread):
                headers = [*message.get("headers", ()), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await edge.app(scope, receiving, sending)
        finally:
            if guarded is not None:
                guarded.answered()


def _has_body(headers: Any) -> bool:
    return any(
        name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0") for name, value in headers
    )


def _closable(protocol: H11Protocol, readable: bool) -> bool:
    """Whether an HTTP/1.1 connection hypercorn serves can be closed without losing a request it has read: no
    request in hand (no stream, nothing buffered in h11) and either between requests with nothing waiting in the
    socket, or ending anyway (the client closed, or the last response closes)."""
    connection = protocol.connection
    if protocol.stream is not None or not isinstance(connection, h11.Connection) or connection.trailing_data[0]:
        return False
    if connection.their_state in _ENDED or connection.our_state in _ENDED:
        return True
    return connection.their_state is h11.IDLE and not readable


_ENDED = frozenset({h11.MUST_CLOSE, h11.CLOSED, h11.ERROR})


class _HandedStream(trio.abc.HalfCloseableStream):
    """What hypercorn serves a connection through: its socket stream, sent to as it is; what it reads is the
    subclass's."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.socket = stream.socket  # hypercorn reads the addresses from it

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Replayed(_HandedStream):
    """A connection's stream with the bytes the fast edge read from it put back in front."""

    def __init__(self, stream: trio.SocketStream, received: bytes) -> None:
        super().__init__(stream)
        self.received = received

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self.received:
            data, self.received = self.received, b""
            return data
        return await self.stream.receive_some(max_bytes)


class _Guarded(_HandedStream):
    """What hypercorn reads under `server.http: hypercorn`: not the socket's bytes but the requests the connection's
    own parser read from them (`_Connection._feed`: the fast edge's limits and refusals), written again in a form h11
    reads as llhttp did: the head as parsed (without `Expect`, which is answered here), then the body in the framing
    it came in (chunked bodies chunked again, trailers dropped). A request the parser refuses is never passed on: once
    hypercorn has answered every request before it, the refusal is answered here and the connection closed. A head
    must arrive within `server.header_timeout`. The HTTP/2 preface and what follows an upgrade request that is
    handed over (WebSocket, h2c) pass as they are."""

    def __init__(self, connection: _Connection) -> None:
        super().__init__(connection.stream)
        self.connection = connection
        self.ready = bytearray()  # written for hypercorn, not yet read by it
        #: Requests passed on, the one being answered first.
        self.passed: deque[_Passed] = deque()
        self.raw = False  # past an upgrade or the HTTP/2 preface: bytes pass as they are
        self.ended = False  # a request that ends the connection is passed on: nothing more is
        self.headed = 0  # requests at the front of the parser's queue whose head is written

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        connection = self.connection
        while not self.ready:
            if self.raw:
                return await self.stream.receive_some(max_bytes)
            if self.ended:  # what follows a request that ends the connection is nobody's request
                while await self.stream.receive_some(READ_SIZE):
                    pass
                return b""
            if connection.refusal is not None:
                if not self.headed:
                    await self._refuse(connection.refusal)
                return b""  # a request passed on is cut short: hypercorn sees the connection end
            if connection.eof:
                return b""
            # As on the fast edge: a head within `server.header_timeout` of its first byte, each wait for more of a
            # body as long; between requests, hypercorn's keep-alive timeout.
            if connection.parsing is not None or connection.first:
                deadline = connection._deadline()
            elif connection.receiving is not None:
                deadline = trio.current_time() + connection.edge.settings.header_timeout
            else:
                deadline = math.inf
            with trio.move_on_at(deadline):
                self._read(await self.stream.receive_some(READ_SIZE))
                continue
            if connection.receiving is None:  # the head took too long: closed without an answer
                await self._end()
                return b""
            connection.refusal = 408  # the rest of the body is too slow to come
        size = len(self.ready) if max_bytes is None else min(max_bytes, len(self.ready))
        data = bytes(self.ready[:size])
        del self.ready[:size]
        return data

    def _read(self, data: bytes) -> None:
        connection = self.connection
        if connection.first and data:
            connection.sniffed += data
            if H2_PREFACE.startswith(connection.sniffed[: len(H2_PREFACE)]):
                if len(connection.sniffed) >= len(H2_PREFACE):
                    self.ready += connection.sniffed
                    self.raw = True
                return
            data, connection.sniffed, connection.first = connection.sniffed, b"", False
        connection._feed(data)
        self._write()

    def _write(self) -> None:
        """Write what the parser has read since: heads, body parts, ends of bodies (each request once)."""
        pending = self.connection.pending
        while pending:
            message = pending[0]
            if not self.headed:
                # A chunked body is held until it is whole, so that one that cannot be read (a bad chunk) refuses
                # the request before hypercorn sees it; passed on as it comes past `_STREAMED` (a body not limited
                # in size) or when the client waits for 100 Continue. A body of a given length cannot be malformed:
                # its head goes at once (the app may refuse it by its length).
                held = _is_chunked(message) and sum(map(len, message.body)) < _STREAMED
                if held and not (message.complete or message.expect_continue):
                    return
                self._head(message)
                self.headed = 1
            body = b"".join(message.body)
            message.body.clear()
            chunked = _is_chunked(message)
            if body:
                self.ready += _chunk(body) if chunked else body
            if message.upgrade:  # bodyless; the new protocol's bytes follow: hypercorn reads them as they come
                pending.popleft()
                self.ready += self.connection.upgrade_tail
                self.raw = True
                return
            if not message.complete:
                return
            if chunked:
                self.ready += b"0\r\n\r\n"
            pending.popleft()
            self.headed = 0
            if not message.keep_alive:
                self.ended = True
                pending.clear()
                return

    def _head(self, message: _Message) -> None:
        lines = [b"%s %s HTTP/%s\r\n" % (message.method.encode(), message.target, message.version.encode())]
        lines += [b"%s: %s\r\n" % field for field in message.headers if field[0] != b"expect"]
        self.ready += b"".join(lines) + b"\r\n"
        # 100 Continue only for a body still to come (a client may send it without waiting).
        self.passed.append(_Passed(message.expect_continue and not message.complete, message.complete))

    async def continue_(self) -> None:
        """Answer 100 Continue for the request being answered when it asked for it (its app reads the body)."""
        if self.passed and self.passed[0].expect_continue:
            self.passed[0].expect_continue = False
            await self.stream.send_all(b"HTTP/1.1 100 Continue\r\n\r\n")

    def passed_whole(self) -> bool:
        """Whether the request being answered was passed on with its whole body (none left to arrive)."""
        return not self.passed or self.passed[0].whole

    def answered(self) -> None:
        """The request being answered has its response: the next one is."""
        if self.passed:
            self.passed.popleft()

    async def _refuse(self, status: int) -> None:
        """Once hypercorn has answered every request passed on, answer the refused one and close."""
        handed = self.connection.handed
        while True:
            wrapper = getattr(handed.server, "protocol", None) if handed is not None else None
            protocol = getattr(wrapper, "protocol", None)
            if not isinstance(protocol, H11Protocol) or _closable(protocol, readable=False):
                break
            await trio.sleep(_SHUTDOWN_POLL)
        await self.connection._refuse(status)
        await self._end()

    async def _end(self) -> None:
        """Close the connection now, and end hypercorn's wait for a next request on it."""
        await self.connection._close()
        handed = self.connection.handed
        if handed is not None:
            await handed.context.terminated.set()

    async def aclose(self) -> None:
        """Closed as the fast edge closes: what the client still sends is read for a while first, so that the last
        answer is not lost to a reset (a response that left a body unread ends the connection)."""
        self.connection.lingering = True
        await self.connection._close()


@attrs.define
class _Passed:
    """A request `_Guarded` passed on to hypercorn."""

    expect_continue: bool  # it asked for 100 Continue, not answered yet
    whole: bool  # its body had arrived whole when it was passed on


#: A request body held back longer than this is passed on to hypercorn as it comes.
_STREAMED = 64 * 1024


def _is_chunked(message: _Message) -> bool:
    return any(name == b"transfer-encoding" for name, _ in message.headers)


_ASGI = {"version": "3.0", "spec_version": "2.3"}
#: How most requests begin; any other beginning is looked at for an extension method first.
_COMMON_METHODS = (b"GET ", b"POST ", b"PUT ", b"PATCH ", b"DELETE ", b"HEAD ", b"OPTIONS ")
#: A method is a token (RFC 9110 5.6.2).
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_STATUS_LINES = {status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode()) for status in HTTPStatus}
#: How long a connection closed after an answer reads what the client still sends, so that the answer is not lost.
LINGER = 1.0
