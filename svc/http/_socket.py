"""GraphQL over WebSocket with the `graphql-transport-ws` subprotocol (the graphql-ws protocol), at the GraphQL path.

The client sends `connection_init` first (within `subscriptions.init_timeout`, else close 4408), carrying its token
in the payload (`Authorization: "Bearer ..."`, `authorization`, or `token`), or in the upgrade request's
`Authorization` header; a refused token closes with 4403, a valid one is acknowledged (`connection_ack`). Then:

- `subscribe {id, payload}`: a subscription streams `next` messages until it or the client completes it; a query
  or a mutation is one `next` then `complete`; a refusal (parse, validation, limits, rate limit, too many
  subscriptions) is one `error` message with the errors. Each subscribe counts as a request for rate limits.
- `complete {id}` stops an operation; `ping` is answered with `pong`.
- Protocol violations close the socket: 4400 for a malformed message, 4401 for subscribing before the
  acknowledgement, 4409 for an id already in use, 4429 for a second `connection_init`, 4406 when the client did not
  offer the subprotocol. When the token expires the socket closes with 4403, ending every subscription on it; when
  the service shuts down, with 1001.
"""

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import trio

from svc.actors import Subscription
from svc.auth import Authenticator, Principal, Unauthenticated
from svc.config import Config
from svc.errors import Code, SvcError
from svc.graphql import GraphqlRequest
from svc.snapshot import SnapshotHolder

from ._graphql import graphql_request
from ._live import Live, Once
from ._messages import Request
from ._problem import graphql_error_entry

log = logging.getLogger("svc.http")

SUBPROTOCOL = "graphql-transport-ws"
Send = Callable[[Mapping[str, Any]], Any]
Receive = Callable[[], Any]
#: What rate limiting says about one more request of this client: None (go on) or the refusal.
Limit = Callable[[Request], SvcError | None]


_NO_SNAPSHOT = SvcError(Code.DATABASE_UNAVAILABLE, "the schema has not been read from the database yet")


class _Close(Exception):
    """End the connection with this WebSocket close code and reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class GraphqlSocket:
    """Serves graphql-transport-ws connections (one `serve` per WebSocket)."""

    def __init__(
        self, config: Config, live: Live, holder: SnapshotHolder, authenticator: Authenticator, limit: Limit
    ) -> None:
        self._live = live
        self._holder = holder
        self._authenticator = authenticator
        self._limit = limit
        self._init_timeout = config.subscriptions.init_timeout.seconds

    async def serve(self, request: Request, subprotocols: list[str], receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        if SUBPROTOCOL not in subprotocols:
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": 4406, "reason": "Subprotocol not acceptable"})
            return
        await send({"type": "websocket.accept", "subprotocol": SUBPROTOCOL})
        await _Connection(self, request, receive, send).run()


class _Connection:
    def __init__(self, socket: GraphqlSocket, request: Request, receive: Receive, send: Send) -> None:
        self.socket = socket
        self.request = request
        self._receive = receive
        self._send = send
        self._sending = trio.Lock()
        self.initialised = False
        self.acknowledged = False
        self.operations: dict[str, trio.CancelScope] = {}

    async def run(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                nursery.start_soon(self._init_deadline)
                nursery.start_soon(self._going_away)
                while True:
                    message = await self._receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    await self._on(message)
                nursery.cancel_scope.cancel()
        except* _Close as group:
            close = group.exceptions[0]
            assert isinstance(close, _Close)
            await self._send({"type": "websocket.close", "code": close.code, "reason": close.reason})

    async def _going_away(self) -> None:
        assert self.socket._live.poller is not None
        await self.socket._live.poller.stopping.wait()
        raise _Close(1001, "Going away")

    async def _init_deadline(self) -> None:
        await trio.sleep(self.socket._init_timeout)
        if not self.initialised:
            raise _Close(4408, "Connection initialisation timeout")

    async def _on(self, message: Mapping[str, Any]) -> None:
        text = message.get("text")
        if text is None:
            raw = message.get("bytes") or b""
            try:
                text = raw.decode()
            except UnicodeDecodeError:
                raise _Close(4400, "Invalid message received") from None
        try:
            parsed = json.loads(text)
        except ValueError:
            raise _Close(4400, "Invalid message received") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("type"), str):
            raise _Close(4400, "Invalid message received")
        kind = parsed["type"]
        if kind == "connection_init":
            await self._init(parsed.get("payload"))
        elif kind == "ping":
            await self._write({"type": "pong", **({"payload": parsed["payload"]} if "payload" in parsed else {})})
        elif kind == "pong":
            pass
        elif kind == "subscribe":
            self._subscribe(parsed)
        elif kind == "complete":
            operation_id = parsed.get("id")
            if not isinstance(operation_id, str):
                raise _Close(4400, "Invalid message received")
            scope = self.operations.pop(operation_id, None)
            if scope is not None:
                scope.cancel()
        else:
            raise _Close(4400, f"Unexpected message of type {kind} received")

    async def _init(self, payload: Any) -> None:
        if self.initialised:
            raise _Close(4429, "Too many initialisation requests")
        self.initialised = True
        if payload is not None and not isinstance(payload, dict):
            raise _Close(4400, "Invalid message received")
        authorization = _authorization(payload or {}) or self.request.header("authorization")
        try:
            principal = await self.socket._authenticator.authenticate(authorization)
        except Unauthenticated as refused:
            raise _Close(4403, f"Forbidden: {refused.message}") from None
        self.request.principal = principal
        self.acknowledged = True
        await self._write({"type": "connection_ack"})
        self.nursery.start_soon(self._expire, principal)

    async def _expire(self, principal: Principal | None) -> None:
        await trio.sleep_until(self.socket._live.expiry(principal))
        raise _Close(4403, "Forbidden: the token has expired")

    def _subscribe(self, message: Mapping[str, Any]) -> None:
        operation_id, payload = message.get("id"), message.get("payload")
        if not isinstance(operation_id, str) or not operation_id or not isinstance(payload, dict):
            raise _Close(4400, "Invalid message received")
        if not self.acknowledged:
            raise _Close(4401, "Unauthorized")
        if operation_id in self.operations:
            raise _Close(4409, f"Subscriber for {operation_id} already exists")
        try:
            graphql = graphql_request(payload, self.request)
        except SvcError:
            raise _Close(4400, "Invalid message received") from None
        scope = trio.CancelScope()
        self.operations[operation_id] = scope
        self.nursery.start_soon(self._operation, operation_id, graphql, scope)

    async def _operation(self, operation_id: str, graphql: GraphqlRequest, scope: trio.CancelScope) -> None:
        request_id = str(uuid.uuid4())
        with scope:
            try:
                refused = self.socket._limit(self.request)
                snapshot = self.socket._holder.current
                if refused is not None or snapshot is None:
                    error = refused or _NO_SNAPSHOT
                    await self._error(operation_id, [graphql_error_entry(error, request_id)])
                    return
                opened = await self.socket._live.open(snapshot, self.request, graphql, request_id)
                if isinstance(opened, Once):
                    await self._once(operation_id, opened)
                else:
                    await self._stream(operation_id, opened)
            finally:
                if self.operations.get(operation_id) is scope:
                    del self.operations[operation_id]

    async def _once(self, operation_id: str, once: Once) -> None:
        response = once.response
        if response.status >= 400:  # refused before it ran: parse, validation, limits
            await self._error(operation_id, list(response.errors))
            return
        await self._next(operation_id, response.body)
        await self._write({"id": operation_id, "type": "complete"})

    async def _stream(self, operation_id: str, subscription: Subscription) -> None:
        try:
            async for result in subscription.results:
                if result.final:  # it ended with errors (it no longer validates after a reload)
                    await self._error(operation_id, json.loads(result.body).get("errors") or [])
                    return
                await self._next(operation_id, result.body)
            await self._write({"id": operation_id, "type": "complete"})
        finally:
            subscription.close()

    async def _next(self, operation_id: str, body: bytes) -> None:
        head = json.dumps({"id": operation_id, "type": "next"}, separators=(",", ":"))
        await self._write_text(head[:-1] + ',"payload":' + body.decode() + "}")

    async def _error(self, operation_id: str, errors: list[Any]) -> None:
        await self._write({"id": operation_id, "type": "error", "payload": errors})

    async def _write(self, message: Mapping[str, Any]) -> None:
        await self._write_text(json.dumps(message, separators=(",", ":"), ensure_ascii=False))

    async def _write_text(self, text: str) -> None:
        async with self._sending:
            await self._send({"type": "websocket.send", "text": text})


def _authorization(payload: Mapping[str, Any]) -> str | None:
    """The token a connection_init payload carries: `Authorization`/`authorization` (with its scheme), a `headers`
    object holding one (as Apollo clients send it), or a bare `token`."""
    headers = payload.get("headers")
    for source in (payload, headers if isinstance(headers, dict) else {}):
        for name, value in source.items():
            if isinstance(name, str) and name.lower() == "authorization" and isinstance(value, str):
                return value
    token = payload.get("token")
    return f"Bearer {token}" if isinstance(token, str) else None
