"""HTTP/1.1 on the wire for the edge tests: requests as bytes, a response reader that follows the framing
(Content-Length, chunked, read-to-close, HEAD, 1xx), and bounded waits for the server to close."""

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import attrs
import trio

from tests.support.service import Service, running_service

EDGES = ["fast", "hypercorn"]
#: How long any single network wait may take before the test fails (CI runs on two cores).
WAIT = 5.0

TYPENAME = b'{"query":"{__typename}"}'
TYPENAME_ANSWER = {"data": {"__typename": "Query"}}


def edge_settings(edge: str, settings: Mapping[str, Any] | None = None, **server: Any) -> dict[str, Any]:
    """The service's settings on `edge`, with more `server` keys and other sections."""
    merged = dict(settings or {})
    merged["server"] = {**merged.get("server", {}), "http": edge, **server}
    return merged


@asynccontextmanager
async def edge_service(
    tmp_path: Any, database_url: str, edge: str, settings: Mapping[str, Any] | None = None, **server: Any
) -> AsyncIterator[Service]:
    async with running_service(tmp_path, database_url, edge_settings(edge, settings, **server)) as service:
        yield service


def port_of(service: Service) -> int:
    port = urlsplit(service.url).port
    assert port is not None
    return port


def request(
    method: str = "GET",
    target: str = "/live",
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    version: str = "HTTP/1.1",
    length: bool = True,
) -> bytes:
    """One request's bytes: a Host header, the given headers, and a Content-Length for a body (unless `length` is
    false or the headers already frame it)."""
    lines = [f"{method} {target} {version}", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers]
    framed = any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers)
    if body and length and not framed:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def graphql_post(body: bytes = TYPENAME, headers: Sequence[tuple[str, str]] = ()) -> bytes:
    return request("POST", "/graphql", [("Content-Type", "application/json"), *headers], body)


def chunked(*parts: bytes, extension: bytes = b"") -> bytes:
    """A chunked body of `parts` and its last chunk."""
    return b"".join(b"%x%s\r\n%s\r\n" % (len(part), extension, part) for part in parts if part) + b"0\r\n\r\n"


@attrs.define
class Response:
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    #: How the body was framed: "content-length", "chunked", "close" or "none".
    framing: str = "none"
    head: bytes = b""

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name.lower()]

    def header(self, name: str) -> str | None:
        values = self.values(name)
        assert len(values) <= 1, f"{name} repeated: {self.headers}"
        return values[0] if values else None

    @property
    def closes(self) -> bool:
        return any("close" in value.lower() for value in self.values("connection"))

    def __str__(self) -> str:
        return f"{self.version} {self.status} {self.reason} {self.headers} body={self.body[:300]!r}"


class ProtocolViolation(AssertionError):
    pass


class Reader:
    """Reads responses off one connection, in order."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.eof = False

    async def _more(self) -> None:
        if self.eof:
            raise EOFError("the server closed the connection")
        try:
            data = await self.stream.receive_some(65536)
        except trio.BrokenResourceError:  # reset by the server
            data = b""
        if not data:
            self.eof = True
            raise EOFError("the server closed the connection")
        self.buffer += data

    async def _until(self, delimiter: bytes, limit: int = 1 << 20) -> bytes:
        while (index := self.buffer.find(delimiter)) < 0:
            if len(self.buffer) > limit:
                raise ProtocolViolation(f"no {delimiter!r} in {bytes(self.buffer[:200])!r}...")
            await self._more()
        taken = bytes(self.buffer[:index])
        del self.buffer[: index + len(delimiter)]
        return taken

    async def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            await self._more()
        taken = bytes(self.buffer[:size])
        del self.buffer[:size]
        return taken

    async def response(self, method: str = "GET", *, informational: bool = False) -> Response:
        """The next response; a 1xx is returned when `informational`, else it is a protocol violation."""
        head = await self._until(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status_line = lines[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolViolation(f"not a status line: {status_line!r} (head {head!r})")
        headers = []
        for line in lines[1:]:
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or name != name.strip():
                raise ProtocolViolation(f"bad header line {line!r}")
            headers.append((name.lower(), value.strip()))
        response = Response(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "", headers, head=head)
        if 100 <= response.status < 200:
            if not informational:
                raise ProtocolViolation(f"an unexpected informational response: {status_line!r}")
            return response
        encoding = [value.lower() for value in response.values("transfer-encoding")]
        lengths = response.values("content-length")
        if encoding and lengths:
            raise ProtocolViolation(f"content-length with transfer-encoding: {headers}")
        if method == "HEAD" or response.status in (204, 304):
            response.framing = "none"
        elif encoding:
            if encoding != ["chunked"]:
                raise ProtocolViolation(f"transfer-encoding {encoding}")
            response.framing = "chunked"
            response.body = await self._chunks()
        elif lengths:
            if len(lengths) != 1 or not lengths[0].isdigit():
                raise ProtocolViolation(f"content-length {lengths}")
            response.framing = "content-length"
            response.body = await self._exactly(int(lengths[0]))
        else:
            response.framing = "close"
            chunks = []
            try:
                while True:
                    await self._more()
                    chunks.append(bytes(self.buffer))
                    self.buffer.clear()
            except EOFError:
                chunks.append(bytes(self.buffer))
                self.buffer.clear()
            response.body = b"".join(chunks)
        return response

    async def _chunks(self) -> bytes:
        body = bytearray()
        while True:
            line = await self._until(b"\r\n", limit=4096)
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolViolation(f"bad chunk size line {line!r}") from None
            if size == 0:
                while await self._until(b"\r\n", limit=65536):  # trailers, up to the empty line
                    pass
                return bytes(body)
            body += await self._exactly(size)
            if await self._exactly(2) != b"\r\n":
                raise ProtocolViolation("a chunk not followed by CRLF")

    async def final(self, method: str = "GET") -> tuple[list[Response], Response]:
        """The informational responses and the final response of one request."""
        interim = []
        while True:
            response = await self.response(method, informational=True)
            if response.status >= 200:
                return interim, response
            interim.append(response)

    async def closed(self, timeout: float = WAIT) -> bytes:
        """Wait until the server closes the connection; what it sent meanwhile (b"" when nothing). Fails after
        `timeout` seconds."""
        with trio.fail_after(timeout):
            try:
                while True:
                    await self._more()
            except EOFError:
                pass
        left = bytes(self.buffer)
        self.buffer.clear()
        return left


async def connect(service: Service) -> trio.SocketStream:
    with trio.fail_after(WAIT):
        return await trio.open_tcp_stream("127.0.0.1", port_of(service))


@asynccontextmanager
async def connection(service: Service) -> AsyncIterator[tuple[trio.SocketStream, Reader]]:
    stream = await connect(service)
    try:
        yield stream, Reader(stream)
    finally:
        await stream.aclose()


async def send(stream: trio.SocketStream, data: bytes) -> bool:
    """Send `data`; False when the server has already closed or reset the connection."""
    try:
        with trio.fail_after(WAIT):
            await stream.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return False
    return True


async def exchange(service: Service, data: bytes, method: str = "GET") -> Response:
    """Send one request on a new connection and read its answer."""
    async with connection(service) as (stream, reader):
        await send(stream, data)
        with trio.fail_after(WAIT):
            return await reader.response(method)


@attrs.define
class Outcome:
    """What the server did with some bytes: everything it sent (as responses, when they parse), and whether it
    closed the connection within the bound."""

    sent: bytes
    raw: bytes
    closed: bool
    responses: list[Response]
    unparsed: str | None = None

    def __str__(self) -> str:
        sent = self.sent if len(self.sent) <= 400 else self.sent[:300] + b"..." + self.sent[-60:]
        return (
            f"sent {sent!r} ({len(self.sent)} bytes): got {[r.status for r in self.responses]}, "
            f"{'closed' if self.closed else 'NOT closed'}; raw {self.raw[:600]!r}"
            + (f"; unparsable: {self.unparsed}" if self.unparsed else "")
        )


def parse_all(raw: bytes) -> tuple[list[Response], str | None]:
    """Every response in `raw` (all that a server sent on one connection), and what did not parse, if anything."""
    reader = Reader(None)  # type: ignore[arg-type]
    reader.buffer += raw
    reader.eof = True
    responses: list[Response] = []

    async def parse() -> str | None:
        while reader.buffer:
            try:
                responses.append(await reader.response(informational=True))
            except (EOFError, ProtocolViolation) as error:
                return f"{type(error).__name__}: {error} at {bytes(reader.buffer[:200])!r}"
        return None

    coroutine = parse()
    try:
        coroutine.send(None)  # nothing in it waits: the buffer holds all
    except StopIteration as done:
        return responses, done.value
    raise AssertionError("parse_all waited")


async def attempt(service: Service, data: bytes, *, half_close: bool = False, timeout: float = 1.5) -> Outcome:
    """Send `data` on a new connection (then shut the write side down when `half_close`), and collect what the
    server sends until it closes the connection or `timeout` passes. A service that no longer accepts connections
    is an outcome too (`unparsed` says so)."""
    try:
        stream = await connect(service)
    except OSError as error:
        return Outcome(data, b"", True, [], f"THE SERVICE NO LONGER ACCEPTS CONNECTIONS: {error!r}")
    async with stream:
        reader = Reader(stream)
        if await send(stream, data) and half_close:
            try:
                await stream.send_eof()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        closed = False
        with trio.move_on_after(timeout):
            try:
                while True:
                    await reader._more()
            except EOFError:
                closed = True
        raw = bytes(reader.buffer)
    responses, unparsed = parse_all(raw)
    return Outcome(data, raw, closed, responses, unparsed)
