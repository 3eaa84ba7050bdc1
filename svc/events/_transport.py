"""The connections webhook deliveries go over: an httpx transport speaking HTTP/1.1 with h11 on Trio streams.

httpx stays the client (requests, timeouts, errors are httpx's), but its default transport, httpcore over anyio, costs
about 1 ms of CPU per request under Trio here, five times what the rest of a delivery costs (README "Events",
bench/events.py); this one writes each request in one send and reads the answer with h11, the HTTP/1.1 engine
httpcore itself uses. Connections are kept alive per origin and reused one request at a time; a kept connection the
receiver closed while idle is replaced once, transparently, when it fails before any answer byte arrived.
"""

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import h11
import httpx
import trio

_READ_SIZE = 65536


@attrs.define
class _Connection:
    stream: trio.abc.Stream
    h11: h11.Connection
    #: Served a request before: a failure before any answer byte may just mean the receiver closed it while idle.
    reused: bool = False


class _Stale(Exception):
    """A reused connection failed before any answer byte: the request is sent again on a new one."""


class H11Transport(httpx.AsyncBaseTransport):
    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._ssl = ssl_context
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        body = request.content  # deliveries send bytes: the body is already read
        for _ in range(2):
            async with self._connection(request.url, timeouts.get("connect")) as conn:
                try:
                    return await self._exchange(conn, request, body, timeouts)
                except _Stale:
                    continue
        raise httpx.RemoteProtocolError("the connection closed before an answer", request=request)

    async def aclose(self) -> None:
        self._closed = True
        idle = [conn for conns in self._idle.values() for conn in conns]
        self._idle.clear()
        for conn in idle:
            await conn.stream.aclose()

    @asynccontextmanager
    async def _connection(self, url: httpx.URL, timeout: float | None) -> AsyncIterator[_Connection]:
        """A kept connection to the URL's origin or a new one; kept again afterwards when both sides allow it."""
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        idle = self._idle.setdefault(origin, [])
        conn = idle.pop() if idle else await self._connect(origin, timeout)
        keep = False
        try:
            yield conn
            keep = conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE and not self._closed
            if keep:
                conn.h11.start_next_cycle()
                conn.reused = True
                self._idle.setdefault(origin, []).append(conn)
        finally:
            if not keep:
                with trio.CancelScope(shield=True):
                    await conn.stream.aclose()

    async def _connect(self, origin: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = origin
        try:
            with trio.fail_after(timeout if timeout is not None else float("inf")):
                stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
                if scheme == "https":
                    self._ssl = self._ssl or ssl.create_default_context()
                    tls = trio.SSLStream(stream, self._ssl, server_hostname=host, https_compatible=True)
                    await tls.do_handshake()
                    stream = tls
        except trio.TooSlowError as exc:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} within {timeout}s") from exc
        except (OSError, trio.BrokenResourceError, ssl.SSLError) as exc:
            reason = exc.__cause__ if isinstance(exc, trio.BrokenResourceError) and exc.__cause__ else exc
            raise httpx.ConnectError(f"{host}:{port}: {reason or type(reason).__name__}") from exc
        return _Connection(stream, h11.Connection(h11.CLIENT))

    async def _exchange(
        self, conn: _Connection, request: httpx.Request, body: bytes, timeouts: dict[str, float | None]
    ) -> httpx.Response:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() not in (b"content-length", b"transfer-encoding")]
        headers.append((b"content-length", str(len(body)).encode()))
        target = request.url.raw_path
        data = conn.h11.send(h11.Request(method=request.method, target=target, headers=headers))
        data = (data or b"") + (conn.h11.send(h11.Data(data=body)) or b"") + (conn.h11.send(h11.EndOfMessage()) or b"")
        write, read = timeouts.get("write"), timeouts.get("read")
        try:
            with trio.fail_after(write if write is not None else float("inf")):
                await conn.stream.send_all(data)
        except trio.TooSlowError as exc:
            raise httpx.WriteTimeout("the request was not written in time", request=request) from exc
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            if conn.reused:
                raise _Stale from exc
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from exc
        return await self._answer(conn, request, read)

    async def _answer(self, conn: _Connection, request: httpx.Request, timeout: float | None) -> httpx.Response:
        status, headers, content, received = 0, list[tuple[bytes, bytes]](), b"", False
        try:
            with trio.fail_after(timeout if timeout is not None else float("inf")):
                while True:
                    event = conn.h11.next_event()
                    if event is h11.NEED_DATA:
                        chunk = await conn.stream.receive_some(_READ_SIZE)
                        if not chunk and not received and conn.reused:
                            raise _Stale
                        received = received or bool(chunk)
                        conn.h11.receive_data(bytes(chunk))
                    elif isinstance(event, h11.Response):
                        status, headers = event.status_code, list(event.headers)
                    elif isinstance(event, h11.Data):
                        content += bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage):
                        return httpx.Response(status, headers=headers, content=content, request=request)
                    elif isinstance(event, h11.ConnectionClosed):
                        raise httpx.RemoteProtocolError("the connection closed mid-answer", request=request)
        except trio.TooSlowError as exc:
            raise httpx.ReadTimeout(f"no answer within {timeout}s", request=request) from exc
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            if conn.reused and not received:
                raise _Stale from exc
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc
