"""The ASGI application: request ids, routing (404/405/OPTIONS/HEAD), CORS, security headers, typed errors.

SPEC "Endpoints" -> service-level: every response echoes the incoming `X-Request-Id` or carries a generated UUID v4;
in dev mode responses carry `Server-Timing`: the stages the request's record holds and `total;dur=<ms>`. SPEC
"Telemetry": each request has a record (`svc.telemetry`) its stages and statements are timed into; when the request
is answered, the metrics and spans read it (`Telemetry.end`). SPEC "Operations": security headers per
`headers.preset`; read-your-writes with read replicas: a request's `X-Min-WAL-Position` is the least a replica must
have replayed to serve it (400 `BAD_USER_INPUT` when it is no WAL position), and the answer to a request whose write
committed carries the primary's position after it, `X-WAL-Position`. Errors a handler raises as `SvcError` become
RFC 9457 problem documents; anything else is logged under the request id and answered 500, masked unless
`errors.detail: full`.

A request takes the current snapshot once, when it arrives, and finishes on it (ARCHITECTURE.md, "Snapshot").
"""

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import trio

from svc.auth import Authenticator, Unauthenticated
from svc.config import Config
from svc.db import Positions, format_lsn, parse_lsn, track_positions
from svc.errors import Code, SvcError
from svc.snapshot import SnapshotHolder
from svc.telemetry import Record, record_var

from ._cors import CorsPolicy
from ._debug import DebugHeaders
from ._messages import Receive, Request, Response, Stream
from ._problem import internal_error, problem
from ._ratelimit import Decision, RateLimiter
from ._routing import Route, Router
from ._security import SecurityHeaders

if TYPE_CHECKING:  # the SDK is imported by the server, which makes the exporters
    from svc.telemetry.export import Telemetry

log = logging.getLogger("svc.http")

Send = Any  # the ASGI send callable
#: Serves one WebSocket connection: (the upgrade request, the subprotocols offered, receive, send).
SocketHandler = Callable[[Request, list[str], Receive, Send], Awaitable[None]]

#: An incoming request id is echoed when it is short printable ASCII; anything else is replaced by a new one.
_REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,200}$")


class App:
    """The ASGI callable the HTTP edge serves (svc.edge): HTTP requests and WebSocket connections."""

    def __init__(
        self,
        config: Config,
        holder: SnapshotHolder,
        routes: Iterable[Route],
        *,
        authenticator: Authenticator,
        telemetry: "Telemetry | None" = None,
        debug: DebugHeaders | None = None,
    ) -> None:
        self._router = Router(routes)
        self._telemetry = telemetry
        self._authenticator = authenticator
        self._holder = holder
        self._dev = config.mode == "dev"
        #: `debug.sql`, `debug.explain` (dev): the `X-Debug-SQL` and `X-Debug-Explain` headers of every answer.
        self._debug = debug
        self._full_detail = config.errors.detail == "full"
        self._cors = CorsPolicy(config.server.cors)
        self._security = SecurityHeaders(config.headers)
        rate_limit = config.limits.rate_limit
        #: The buckets of API routes (None when `limits.rate_limit.enabled` is off); the server runs their sweeper.
        self.rate_limiter = RateLimiter(rate_limit) if rate_limit.enabled else None
        self._sockets: dict[str, SocketHandler] = {}

    async def __call__(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)

    def add_socket(self, path: str, handler: SocketHandler) -> None:
        """Serve WebSocket connections at `path` (subscriptions); other paths refuse the upgrade."""
        self._sockets[path] = handler

    def limit(self, request: Request) -> SvcError | None:
        """Rate limiting of one more request of this client sent over a WebSocket: None, or the refusal."""
        decision = self.rate_limiter.check(request) if self.rate_limiter is not None else None
        return None if decision is None or decision.allowed else _rate_limited(decision)

    async def _websocket(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        handler = self._sockets.get(scope["path"])
        if handler is None:
            await send({"type": "websocket.close", "code": 1008})  # refused before the upgrade: HTTP 403
            return
        headers = _headers(scope)
        incoming = headers.get("x-request-id")
        request = Request(
            method="GET",
            path=scope["path"],
            raw_path=_raw_path(scope),
            query_string=scope.get("query_string", b""),
            headers=headers,
            request_id=incoming if incoming and _REQUEST_ID.match(incoming) else str(uuid.uuid4()),
            snapshot=self._holder.current,
            client=scope.get("client"),
            receive=receive,
        )
        try:
            await handler(request, list(scope.get("subprotocols") or ()), receive, send)
        except Exception as exc:
            log.error("unhandled error on the WebSocket at %s", request.path, exc_info=exc)
            await send({"type": "websocket.close", "code": 4500, "reason": "Internal server error"})

    async def _http(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        incoming = headers.get("x-request-id")
        record = Record(incoming if incoming and _REQUEST_ID.match(incoming) else str(uuid.uuid4()))
        token = record_var.set(record)
        route = self._router.find(scope["path"])
        record.route = route.template if route is not None else ""
        telemetry = self._telemetry
        method = scope["method"]
        if telemetry is not None:
            telemetry.begin(record, method, headers)
        status = 500  # unless an answer is sent
        try:
            request = Request(
                method=method,
                path=scope["path"],
                raw_path=_raw_path(scope),
                query_string=scope.get("query_string", b""),
                headers=headers,
                request_id=record.request_id,
                snapshot=self._holder.current,
                client=scope.get("client"),
                receive=receive,
            )
            origin = request.header("origin")
            # The request's positions cover its streamed body too (the later parts of an incremental answer).
            with track_positions() as positions:
                if route is not None and self._cors.is_preflight(
                    request.method, origin, request.header("access-control-request-method")
                ):
                    assert origin is not None
                    response, cors = Response.empty(204, headers=self._cors.preflight_headers(origin)), []
                else:
                    response = await self._respond(request, route, positions)
                    if positions.written is not None:
                        request.response_headers.append(("X-WAL-Position", format_lsn(positions.written)))
                    cors = self._cors.response_headers(origin)
                status = response.status
                await self._send(send, request, route, response, cors=cors, record=record)
        finally:
            if telemetry is not None:
                telemetry.end(record, method, status, time.perf_counter())
            record_var.reset(token)

    async def _respond(self, request: Request, route: Route | None, positions: Positions) -> Response:
        try:
            if route is None:
                raise SvcError(Code.NOT_FOUND, f"no resource at {request.path}")
            minimum = request.header("x-min-wal-position")
            if minimum is not None:
                try:
                    positions.minimum = parse_lsn(minimum)
                except ValueError as exc:
                    raise SvcError(Code.BAD_USER_INPUT, f"X-Min-WAL-Position: {exc}") from exc
            if request.method == "OPTIONS" and not route.own_methods:
                return Response.empty(204, headers=[("Allow", ", ".join(route.allowed()))])
            method = "GET" if request.method == "HEAD" else request.method
            if method not in route.methods and not route.own_methods:
                error = SvcError(Code.METHOD_NOT_ALLOWED, f"{request.method} is not allowed on {request.path}")
                return problem(error, request, headers=(("Allow", ", ".join(route.allowed())),))
            if route.needs_snapshot and request.snapshot is None:
                raise SvcError(Code.DATABASE_UNAVAILABLE, "the schema has not been read from the database yet")
            authorization = request.header("authorization")
            if route.api or (route.identify and authorization is not None):
                request.principal = await self._authenticator.authenticate(authorization)
            if route.api and (refusal := self._limit(request, route)) is not None:
                return refusal
            return await route.handler(request)
        except Unauthenticated as error:
            # A refused token counts too, by address (SPEC "Authentication": all but a verified token).
            if route is not None and route.api and (refusal := self._limit(request, route)) is not None:
                return refusal
            return (route.render_error if route else problem)(
                error, request, headers=(("WWW-Authenticate", error.challenge),)
            )
        except SvcError as error:
            return (route.render_error if route else problem)(error, request)
        except Exception as exc:
            log.error("unhandled error in %s %s", request.method, request.path, exc_info=exc)
            return internal_error(request, exc, full_detail=self._full_detail)

    def _limit(self, request: Request, route: Route) -> Response | None:
        """Count an API request against its client's bucket, before the handler reads the body (SPEC "Limits").

        Runs once the token is verified (the client is known by its claims) or refused (counted by address), and
        records the `RateLimit-*` headers every answer to the request carries. A refusal is 429 `RATE_LIMITED` with
        `Retry-After` and `retryAfter`, answered the route's way (a GraphQL response on /graphql, a problem
        elsewhere); it uses nothing up.
        """
        decision = self.rate_limiter.check(request) if self.rate_limiter is not None else None
        if decision is None:
            return None
        request.response_headers.extend(decision.headers())
        if decision.allowed:
            return None
        return route.render_error(_rate_limited(decision), request)

    async def _send(
        self,
        send: Send,
        request: Request,
        route: Route | None,
        response: Response,
        *,
        cors: list[tuple[str, str]],
        record: Record,
    ) -> None:
        headers: list[tuple[str, str]] = [("X-Request-Id", request.request_id)]
        if response.content_type is not None:
            headers.append(("Content-Type", response.content_type))
        if response.status not in (204, 304) and response.stream is None:
            headers.append(("Content-Length", str(len(response.body))))
        headers += response.headers
        headers += request.response_headers
        # A header the response sets itself (a binary column's `nosniff`) is not repeated by the preset.
        own = {name.lower() for name, _ in response.headers}
        security = self._security.ui if route is not None and route.ui else self._security.api
        headers += [(name, value) for name, value in security if name.lower() not in own]
        headers += cors
        if self._dev:
            headers.append(("Server-Timing", _server_timing(record)))
        if self._debug is not None:
            headers += self._debug.headers(record)
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers],
            }
        )
        if response.stream is not None and request.method != "HEAD":
            await _stream(send, request.receive, response.stream)
            return
        body = b"" if request.method == "HEAD" else response.body
        await send({"type": "http.response.body", "body": body})


def _server_timing(record: Record) -> str:
    """`graphql.parse;dur=0.1, ..., total;dur=2.5`: the recorded stages in milliseconds, then the whole request."""
    entries = [f"{name};dur={(end - start) * 1000:.1f}" for name, start, end in record.stages]
    entries.append(f"total;dur={(time.perf_counter() - record.started) * 1000:.1f}")
    return ", ".join(entries)


async def _stream(send: Send, receive: Receive, stream: Stream) -> None:
    """A streamed body, chunk by chunk, ended when the stream returns or stopped when the client goes away."""
    gone = trio.Event()

    async def write(chunk: bytes) -> None:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})

    async def until_gone(scope: trio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass  # what the handler left of the request's body; then the client going away
        gone.set()
        scope.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(until_gone, nursery.cancel_scope)
        await stream(write)
        nursery.cancel_scope.cancel()
    if not gone.is_set():
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _rate_limited(decision: Decision) -> SvcError:
    seconds = decision.retry_after_seconds
    return SvcError(Code.RATE_LIMITED, f"too many requests; retry in {seconds} s", extensions={"retryAfter": seconds})


def _raw_path(scope: Mapping[str, Any]) -> str:
    """The path as sent, still percent-encoded (REST keys are split at commas before they are decoded)."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        return raw.decode("latin-1").split("?", 1)[0]
    return quote(scope["path"], safe="/:@!$&'()*+,;=-._~")


def _headers(scope: Mapping[str, Any]) -> dict[str, str]:
    """Lower-case names; a repeated header's values joined with ", " (RFC 9110 field combination)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers
