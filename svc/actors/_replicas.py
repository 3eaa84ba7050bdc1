"""The replica health checker actor: every replica checked each `database.replicas.health_interval`, and at once when a
request could not reach one (SPEC "Limits": every 10 s by default).

A check finds a replica reachable and in recovery, and how far behind the primary it is (bytes of WAL, and seconds
since the last transaction it replayed while it has more to replay). Down, promoted, or further behind than
`max_lag` / `max_lag_bytes`: out of the rotation until a check finds it healthy again; reads then go to the other
replicas, or to the primary when none is left. Each transition is logged once, and so is the whole set leaving or
rejoining the rotation.
"""

import logging

import trio

from svc.config import ReplicasConfig
from svc.db import Pool, ReplicaHealth, Replicas, ReplicaState

log = logging.getLogger("svc.replicas")


class ReplicaChecker:
    def __init__(self, replicas: Replicas, primary: Pool, config: ReplicasConfig) -> None:
        self._replicas = replicas
        self._primary = primary
        self._config = config
        self._any_in_rotation: bool | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await self.check()
            with trio.move_on_after(self._config.health_interval.seconds):
                await self._replicas.check_wanted()

    async def check(self) -> None:
        """One round: every replica checked, transitions logged."""
        before = {replica.name: replica.health for replica in self._replicas.all}
        await self._replicas.check(self._primary, self._config.max_lag.seconds, self._config.max_lag_bytes)
        for replica in self._replicas.all:
            _log_transition(replica.name, before[replica.name], replica.health)
        any_in_rotation = any(replica.health.in_rotation for replica in self._replicas.all)
        if any_in_rotation != self._any_in_rotation:
            if not any_in_rotation:
                log.warning("no replica is in the rotation: reads go to the primary")
            elif self._any_in_rotation is False:
                log.info("replicas are back in the rotation")
            self._any_in_rotation = any_in_rotation


def _log_transition(name: str, before: ReplicaHealth, after: ReplicaHealth) -> None:
    if before.state is after.state:
        return
    if after.in_rotation:
        again = "" if before.state is ReplicaState.UNCHECKED else f" again (it was {before.state.value})"
        log.info("replica %s is in the rotation%s", name, again)
    else:
        log.warning("replica %s is out of the rotation: %s (%s)", name, after.state.value, after.error)
