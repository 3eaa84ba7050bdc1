"""Subscriptions over plain HTTP responses that stay open (SPEC "Subscriptions"):

- GraphQL over server-sent events, the graphql-sse protocol's distinct-connections mode, at `/graphql/stream`: a
  POST (JSON body as for `/graphql`) or a GET (URL parameters) with `Accept: text/event-stream`; every result is an
  `event: next` with the execution result as data, the end an `event: complete`. Queries and mutations are answered
  the same way with one `next`, and so is an operation refused before it runs (parse, validation, limits), as the
  protocol's reference handler answers it; only too many subscriptions is a plain JSON response, status 429.
- Multipart HTTP subscriptions as Apollo clients send them: a POST to the GraphQL path with
  `Accept: multipart/mixed;subscriptionSpec=1.0`; each result is a part `{"payload": <execution result>}`, a part
  `{}` is a heartbeat, and the end the closing delimiter. A failure of the transport itself (the token expired) is
  `{"payload": null, "errors": [...]}` before the end.

Both send a heartbeat every `subscriptions.keepalive` while nothing changes (a comment line, an empty part), end
the subscription when the client goes away, and end it when the token expires.

Incremental delivery of a query with `@defer`/`@stream` (any client accepting `multipart/mixed`, Apollo's
`deferSpec=20220824` among them) is a multipart/mixed body too: one part per payload, boundary `-`.
"""

import json
from collections.abc import Awaitable, Callable

import trio

from svc.actors import Subscription
from svc.config import Config
from svc.errors import Code, SvcError

from ._live import EXPIRED, Live, Once
from ._messages import Request, Response
from ._problem import graphql_error_entry

Write = Callable[[bytes], Awaitable[None]]

EVENT_STREAM = "text/event-stream; charset=utf-8"
MULTIPART = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"'
_PART = b"\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n"
_END = b"\r\n--graphql--\r\n"
_STREAM_HEADERS = [("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]


#: Incremental delivery (`@defer`, `@stream`): the boundary graphql-js, Apollo and meros use in their examples.
INCREMENTAL = 'multipart/mixed; boundary="-"; deferSpec=20220824'
_INCREMENTAL_PART = b"\r\n---\r\ncontent-type: application/json; charset=utf-8\r\n\r\n"
_INCREMENTAL_END = b"\r\n-----\r\n"


def incremental_response(payloads: list[bytes]) -> Response:
    """The payloads of an incremental result as one multipart/mixed body (all read by one statement already)."""
    body = b"".join(_INCREMENTAL_PART + payload for payload in payloads) + _INCREMENTAL_END
    return Response(200, body, INCREMENTAL, _STREAM_HEADERS)


def wants_multipart(request: Request) -> bool:
    """Whether the client asks for Apollo's multipart subscription protocol."""
    accept = (request.header("accept") or "").lower()
    return "multipart/mixed" in accept and "subscriptionspec" in accept.replace(" ", "")


class Streams:
    def __init__(self, config: Config, live: Live) -> None:
        self._live = live
        self._keepalive = config.subscriptions.keepalive.seconds

    async def event_stream(self, request: Request, opened: Subscription | Once) -> Response:
        if isinstance(opened, Once):
            response = opened.response
            if response.status == Code.TOO_MANY_SUBSCRIPTIONS.status:
                return Response(response.status, response.body, "application/json")

            async def once(write: Write) -> None:
                await write(_event("next", response.body) + _event("complete", None))

            return Response.streaming(once, EVENT_STREAM, _STREAM_HEADERS)
        deadline = self._live.expiry(request.principal)

        async def events(write: Write) -> None:
            async def send(body: bytes) -> None:
                await write(_event("next", body))

            ended = await self._relay(opened, deadline, send, lambda: write(b":\n\n"))
            if ended is not None:
                await write(_event("next", _errors_body(ended, request.request_id)))
            await write(_event("complete", None))

        return Response.streaming(events, EVENT_STREAM, _STREAM_HEADERS)

    async def multipart(self, request: Request, opened: Subscription | Once) -> Response:
        if isinstance(opened, Once):
            response = opened.response
            return Response(response.status, response.body, "application/json")
        deadline = self._live.expiry(request.principal)

        async def parts(write: Write) -> None:
            async def send(body: bytes) -> None:
                await write(_PART + b'{"payload":' + body + b"}")

            ended = await self._relay(opened, deadline, send, lambda: write(_PART + b"{}"))
            if ended is not None:
                await write(_PART + b'{"payload":null,' + _errors_body(ended, request.request_id)[1:])
            await write(_END)

        return Response.streaming(parts, MULTIPART, _STREAM_HEADERS)

    async def _relay(
        self,
        subscription: Subscription,
        deadline: float,
        send: Callable[[bytes], Awaitable[None]],
        heartbeat: Callable[[], Awaitable[None]],
    ) -> SvcError | None:
        """Pass the subscription's results on until it ends (None) or the token expires (the error to send)."""
        try:
            with trio.move_on_at(deadline):
                while True:
                    result = None
                    with trio.move_on_after(self._keepalive):
                        try:
                            result = await subscription.results.receive()
                        except trio.EndOfChannel:
                            return None
                    if result is None:
                        await heartbeat()
                        continue
                    await send(result.body)
                    if result.final:
                        return None
            return EXPIRED
        finally:
            subscription.close()


def _event(name: str, data: bytes | None) -> bytes:
    """One server-sent event; the data is one line (JSON text has no raw line breaks)."""
    return b"event: " + name.encode() + b"\ndata:" + (b" " + data if data is not None else b"") + b"\n\n"


def _errors_body(error: SvcError, request_id: str) -> bytes:
    return json.dumps({"errors": [graphql_error_entry(error, request_id)]}, separators=(",", ":")).encode()
