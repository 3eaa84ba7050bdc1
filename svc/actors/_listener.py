"""LISTEN on a channel, on a session connection of its own, reconnecting with backoff: what the reloader and the
event dispatcher are woken by.

Readiness is reported after the first attempt, listening or not, so an unreachable database does not hold up the
service's start. `on_listening(again)` is called each time the LISTEN is in place, `again` after a reconnection
(notifications sent meanwhile were missed); `on_notify()` for each notification.
"""

import logging
from collections.abc import Callable

import psycopg
import trio
from psycopg import sql

from svc.db import Connection
from svc.errors import first_line

from ._supervisor import backoff


async def listen(
    conninfo: str,
    channel: str,
    *,
    on_notify: Callable[[], None],
    on_listening: Callable[[bool], None],
    log: logging.Logger,
    connect_timeout: float,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    failures = 0
    listened_before = reported = False
    while True:
        try:
            conn = await Connection.connect(conninfo, autocommit=True, timeout=connect_timeout)
            async with conn:
                await conn.execute(sql.SQL("listen {}").format(sql.Identifier(channel)))
                log.info("listening on %s", channel)
                on_listening(listened_before)
                listened_before, failures = True, 0
                if not reported:
                    reported = True
                    task_status.started()
                async for _ in conn.notifies():
                    on_notify()
        except (psycopg.Error, OSError) as exc:
            failures += 1
            delay = backoff(failures)
            log.warning("listener on %s: %s; reconnecting in %.2fs", channel, first_line(exc), delay)
            if not reported:
                reported = True
                task_status.started()
            await trio.sleep(delay)
