"""What the event tests share: the configuration of a target and events on the fixture's tables, and reads of the
outbox (the service's own tables, read with plain psycopg as an operator would)."""

import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import trio
from psycopg.rows import dict_row

from tests.support.receiver import Answer, Received, Receiver, running_receiver
from tests.support.service import Service, running_service

SECRET = "whsec_" + base64.b64encode(b"events-test-secret-key").decode()
ENVIRON = {"HOOK_SECRET": SECRET}


def settings(url: str, **events: Any) -> dict[str, Any]:
    """Events on orders (every operation) and tags (insert only) to the target `default` at `url`; `events` are
    merged into the `events:` block (retry, schedules, install...). Metrics are on (`svc_event_deliveries_total`)."""
    return {
        "telemetry": {"metrics": {"enabled": True}},
        "events": {
            "poll_interval": "1s",
            "retry": {"attempts": 3, "initial": "200ms", "max": "1s"},
            "targets": {"default": {"url": url, "secret_env": "HOOK_SECRET", "timeout": "2s"}},
            **events,
        },
        "entities": {
            "orders": {"columns": {"secret_note": {"omit": True}}, "events": {"description": "Order changes."}},
            "tags": {"events": {"operations": ["insert"]}},
        },
    }


def outbox(database_url: str, where: str = "true") -> list[dict[str, Any]]:
    with psycopg.connect(database_url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(f"select * from svc_events.outbox where {where} order by created_at, id").fetchall()


def sql(database_url: str, statement: str, params: Any = None) -> list[Any]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


async def until(predicate: Callable[[], bool], *, timeout: float = 10.0) -> None:
    """Poll a plain predicate (a read of the outbox) until it holds; fail the test after `timeout` seconds."""
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.05)


@asynccontextmanager
async def served(
    directory: Path, database_url: str, answer: Callable[[Received], Answer] = lambda _: 200
) -> AsyncIterator[tuple[Receiver, Service]]:
    """A receiver answering with `answer`, and the service sending it the events of `settings`."""
    async with running_receiver(answer) as receiver:
        async with running_service(directory, database_url, settings(receiver.url), environ=ENVIRON) as service:
            yield receiver, service
