"""What the subscription tests share: the service with subscriptions on over the auth fixture (notes under
row-level security by the `sub` claim, public posts), tokens, plain SQL, and a raw graphql-transport-ws client on
trio-websocket for what the reference clients cannot send (malformed messages, many subscriptions on one socket)."""

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jwt
import psycopg
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from tests.support.service import Service, merge, running_service

SECRET = "a-shared-secret-of-at-least-32-bytes!"
INTERVAL = 0.2

SETTINGS: dict[str, Any] = {
    "database": {"schemas": ["app"]},
    "subscriptions": {"enabled": True, "interval": f"{int(INTERVAL * 1000)}ms", "keepalive": "1s"},
    "auth": {
        "roles": {"authenticated": "svc_test_member", "anonymous": "svc_test_visitor"},
        "claims": {"sub": "app.user_id"},
        "leeway": "0s",
    },
}

NOTES = "subscription { notes(orderBy: PRIMARY_KEY_ASC) { body } }"


def token(sub: str, *, lifetime: float = 300) -> str:
    now = int(time.time())
    return jwt.encode({"sub": sub, "iat": now, "exp": now + lifetime}, SECRET, algorithm="HS256")


def bodies(payload: dict) -> list[str]:
    return [note["body"] for note in payload["data"]["notes"]]


def sql(database_url: str, statement: str, params: Any = None) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(statement, params)


@asynccontextmanager
async def subscriptions_service(directory: Path, database_url: str, **settings: Any) -> AsyncIterator[Service]:
    async with running_service(
        directory, database_url, merge(SETTINGS, settings), environ={"AUTH_JWT_SECRET": SECRET}
    ) as service:
        yield service


def ws_url(service: Service) -> str:
    return service.url.replace("http://", "ws://") + "/graphql"


async def health(service: Service) -> dict:
    return (await service.client.get("/health")).json()


class RawSocket:
    """graphql-transport-ws by hand: send any message, read the next one as JSON."""

    def __init__(self, socket: WebSocketConnection) -> None:
        self.socket = socket

    async def send(self, message: Any) -> None:
        await self.socket.send_message(message if isinstance(message, str) else json.dumps(message))

    async def receive(self, timeout: float = 5) -> dict:
        with trio.fail_after(timeout):
            return json.loads(await self.socket.get_message())

    async def init(self, payload: dict | None = None) -> None:
        await self.send({"type": "connection_init", **({"payload": payload} if payload is not None else {})})
        assert await self.receive() == {"type": "connection_ack"}


@asynccontextmanager
async def raw_socket(service: Service, subprotocols: tuple[str, ...] = ("graphql-transport-ws",)):
    async with open_websocket_url(ws_url(service), subprotocols=list(subprotocols)) as socket:
        yield RawSocket(socket)


async def closed_with(socket: RawSocket, timeout: float = 5) -> tuple[int, str | None]:
    """The close code and reason the service ended the socket with (messages before it are skipped)."""
    with trio.fail_after(timeout):
        try:
            while True:
                await socket.socket.get_message()
        except ConnectionClosed as closed:
            return closed.reason.code, closed.reason.reason
