"""The request and response values the ASGI app hands to route handlers and sends back.

A request takes the current snapshot once, when it arrives (ARCHITECTURE.md, "Snapshot"), and keeps it to the end.
Its body is read only on demand and never beyond `limits.request_body_bytes` (SPEC "Limits": 413).
"""

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from svc.auth import Principal
from svc.db import Session
from svc.errors import Code, SvcError
from svc.snapshot import Snapshot

Receive = Callable[[], Awaitable[Mapping[str, Any]]]


@attrs.define
class Request:
    method: str
    path: str
    query_string: bytes
    headers: Mapping[str, str]  # lower-case names; repeated headers joined with ", "
    request_id: str
    snapshot: Snapshot | None
    client: tuple[str, int] | None
    receive: Receive
    #: Headers the app adds to whatever answers the request (the rate limiter's `RateLimit-*`).
    response_headers: list[tuple[str, str]] = attrs.field(factory=list)
    #: Who sent an API route's request (None on routes that take no token).
    principal: Principal | None = None
    #: The path as sent, still percent-encoded (empty: the same as `path`).
    raw_path: str = ""

    @property
    def claims(self) -> Mapping[str, Any] | None:
        """The verified token's claims (None: anonymous, or a route that takes no token)."""
        return self.principal.claims if self.principal is not None else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def role(self) -> str | None:
        """The database role the request runs as, when configured (None: the connecting role)."""
        return self.principal.role if self.principal is not None else None

    def session(self) -> Session | None:
        """The database role and session settings the request runs with (None: the connecting role's own)."""
        principal = self.principal
        if principal is None or (principal.role is None and not principal.settings):
            return None
        return Session(principal.role, principal.settings)

    async def body(self, limit: int | None) -> bytes:
        """The whole body; SvcError PAYLOAD_TOO_LARGE as soon as it is known to exceed `limit` bytes."""
        declared = self.header("content-length")
        if limit is not None and declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(limit, int(declared))
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if limit is not None and size > limit:
                raise _too_large(limit, None)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _too_large(limit: int, actual: int | None) -> SvcError:
    extensions: dict[str, int] = {"limit": limit}
    if actual is not None:
        extensions["actual"] = actual
    return SvcError(Code.PAYLOAD_TOO_LARGE, f"the request body exceeds {limit} bytes", extensions=extensions)


#: Writes a streamed response's body: called with a function sending one chunk; the response ends when it returns.
Stream = Callable[[Callable[[bytes], Awaitable[None]]], Awaitable[None]]


@attrs.frozen
class Response:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: Sequence[tuple[str, str]] = ()
    #: A body sent as it is written (subscriptions), instead of `body`; cancelled when the client goes away.
    stream: Stream | None = None

    @classmethod
    def streaming(
        cls, stream: Stream, content_type: str, headers: Sequence[tuple[str, str]] = (), status: int = 200
    ) -> "Response":
        return cls(status, b"", content_type, headers, stream)

    @classmethod
    def json(cls, value: Any, status: int = 200, *, headers: Sequence[tuple[str, str]] = ()) -> "Response":
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        return cls(status, body, "application/json", headers)

    @classmethod
    def empty(cls, status: int = 204, *, headers: Sequence[tuple[str, str]] = ()) -> "Response":
        return cls(status, b"", None, headers)
