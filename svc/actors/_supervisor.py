"""A small supervisor: run an actor, restart it with jittered backoff when it crashes, log every crash.

ARCHITECTURE.md ("Actors"): long-lived tasks in the root nursery, each restarted with backoff and logged when it
crashes, never taking the process down silently. An actor is an async callable taking `task_status`; it reports
readiness once with `task_status.started()`, and the supervisor reports its own start on the actor's first one.
`Fatal` (alone or inside an exception group) is not restarted: it stops the service.
"""

import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import trio

log = logging.getLogger("svc.actors")

BACKOFF_MIN = 0.1
BACKOFF_MAX = 10.0
#: An actor that ran this long before crashing starts its backoff afresh.
STABLE_AFTER = 30.0


class Fatal(Exception):
    """An actor failure the service cannot continue after (a startup check that failed, say)."""


class _FirstStart:
    """Passes an actor's first `started()` on to the supervisor's own task status; later ones are no-ops."""

    def __init__(self, parent: trio.TaskStatus[None] | None) -> None:
        self._parent = parent

    def started(self, value: Any = None) -> None:
        if self._parent is not None:
            parent, self._parent = self._parent, None
            parent.started()


def _fatal_in(exc: BaseException) -> BaseException | None:
    if isinstance(exc, Fatal):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(Fatal)
    return None


def backoff(failures: int) -> float:
    """Exponential from BACKOFF_MIN to BACKOFF_MAX seconds, with jitter (half to all of it)."""
    return min(BACKOFF_MAX, BACKOFF_MIN * 2 ** max(0, failures - 1)) * random.uniform(0.5, 1.0)


async def supervise(
    name: str, actor: Callable[..., Awaitable[None]], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run `actor` until it returns; restart it after each crash."""
    status = _FirstStart(task_status)
    failures = 0
    while True:
        began = trio.current_time()
        try:
            await actor(task_status=status)
        except Exception as exc:
            if (fatal := _fatal_in(exc)) is not None:
                log.error("actor %s failed and cannot be restarted: %s", name, fatal)
                raise
            if trio.current_time() - began >= STABLE_AFTER:
                failures = 0
            failures += 1
            delay = backoff(failures)
            log.error("actor %s crashed (%s: %s); restarting in %.2fs", name, type(exc).__name__, exc, delay,
                      exc_info=failures == 1)  # fmt: skip
            await trio.sleep(delay)
        else:
            log.info("actor %s finished", name)
            return
