"""The rate limiter actor: drops the buckets that are full again, so memory follows the clients seen lately.

SPEC "Limits" -> rate limits keeps one token bucket per client in memory, at most `limits.rate_limit.max_clients`.
A full bucket answers exactly like a missing one, so dropping it changes no answer. The buckets belong to the HTTP
layer's limiter (`svc/http/_ratelimit.py`), which checks them synchronously on the Trio thread; this actor holds only
the limiter's `sweep` callable, so it needs nothing from `svc.http` (a higher layer), and a sweep never interleaves
with a check.
"""

import logging
from collections.abc import Callable

import trio

log = logging.getLogger("svc.ratelimit")

#: Seconds between two sweeps.
SWEEP_INTERVAL = 10.0


class BucketSweeper:
    """Calls `sweep()` (which returns the number of buckets dropped) every `interval` seconds."""

    def __init__(self, sweep: Callable[[], int], *, interval: float = SWEEP_INTERVAL) -> None:
        self._sweep = sweep
        self._interval = interval

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(self._interval)
            dropped = self._sweep()
            if dropped:
                log.debug("rate limiter: dropped %d full buckets", dropped)
