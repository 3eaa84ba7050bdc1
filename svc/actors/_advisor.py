"""The dev statement advisor (SPEC "Dev statement advisor"): every 30 s in dev mode, the service's operations are read
from `pg_stat_statements` (svc.statement_advice, as `svc advise --statements` reads them) and a warning is logged,
once per operation, when its mean time first reaches 100 ms. Without the extension (not installed, or not loaded by
the server) it says so once, at info, and looks again each round: creating the extension later is enough. While
`extensions.integrations.pg_stat_statements` is off (`enabled`, read each round), it does not look.
"""

import logging
from collections.abc import Callable

import psycopg
import trio

from svc.statement_advice import StatisticsUnavailable, operation_costs_at

log = logging.getLogger("svc.advisor")

#: Seconds between two looks at the statistics.
ADVISOR_INTERVAL = 30.0
#: The mean time an operation is warned about.
SLOW_MS = 100.0


class StatementAdvisor:
    def __init__(
        self,
        database_url: str,
        *,
        interval: float | None = None,
        slow_ms: float = SLOW_MS,
        enabled: Callable[[], bool] = lambda: True,
    ) -> None:
        self._url = database_url
        self._enabled = enabled
        self._interval = interval if interval is not None else ADVISOR_INTERVAL
        self._slow_ms = slow_ms
        #: Operations warned about (each once).
        self.warned: set[str] = set()
        self._said_unavailable = False

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(self._interval)
            if self._enabled():
                await self.look()

    async def look(self) -> None:
        try:
            costs = await trio.to_thread.run_sync(operation_costs_at, self._url)
        except StatisticsUnavailable as exc:
            if not self._said_unavailable:
                self._said_unavailable = True
                log.info("dev statement advisor: %s; no operation is timed until it is", exc)
            return
        except (psycopg.Error, OSError) as exc:
            log.debug("dev statement advisor: the statistics could not be read (%s)", exc)
            return
        for cost in costs:
            if cost.mean_ms >= self._slow_ms and cost.operation not in self.warned:
                self.warned.add(cost.operation)
                log.warning(
                    "slow operation %s: %.1f ms on average over %d calls (pg_stat_statements); "
                    "`svc advise --statements` lists the indexes it lacks",
                    cost.operation, cost.mean_ms, cost.calls,
                )  # fmt: skip
