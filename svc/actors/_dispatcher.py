"""The event dispatcher actor: claims due events from the outbox under leases, delivers them signed per Standard
Webhooks, records each attempt, retries with backoff and full jitter, dead-letters, and enqueues cron slots.

SPEC "Events" -> "Change events and schedules"; ARCHITECTURE.md "Actors and the database as coordinator": everything
shared lives in PostgreSQL, so any number of instances share the outbox and a killed one loses nothing (its leases
expire and another instance takes the events). Woken by LISTEN on `events.channel`, with a poll as a safety net and
a timer for the next retry or schedule slot. One httpx AsyncClient serves every delivery, at most
`events.concurrency` in flight.

Outcomes of an attempt: a 2xx answer is `delivered`; 410 Gone is `dead` and stops delivery to that target until
`svc_events.resume_target(name)`; any other answer, or a connection that could not be made, is `retry`; a request
sent whose answer never came (a timeout, a connection closed mid-answer) is `unknown`, retried like `retry`. When the
attempts are used up, the outcome is `dead`; `svc_events.redrive()` delivers dead events again.

On shutdown (the `stopping` event) it stops claiming, lets deliveries in flight finish within the shutdown timeout,
and gives back the leases of those that did not, so another instance delivers them at once.
"""

import functools
import logging
import math
import os
import random
import socket
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

import attrs
import croniter
import httpx
import trio

from svc.config import Config
from svc.db import Executor
from svc.events import (
    DEAD,
    DELIVERED,
    RETRY,
    UNKNOWN,
    Claimed,
    Outcome,
    claim,
    enqueue_slot,
    record,
    release,
    seconds_to_next_due,
    signature,
)
from svc.version import VERSION

from ._listener import listen

log = logging.getLogger("svc.events")

#: Longest a shutdown waits to give leases back before the process goes anyway (their expiry frees them then).
_RELEASE_TIMEOUT = 2.0


def retry_gap(attempt: int, *, initial: float, longest: float) -> float:
    """Seconds before the attempt after `attempt` (1-based): full jitter, random in [0, min(longest, initial *
    2^(attempt-1))], so retries of many events spread out instead of arriving together."""
    return random.uniform(0, min(longest, initial * 2 ** (attempt - 1)))


class Dispatcher:
    """One instance's share of the delivery work; `run` under the supervisor."""

    def __init__(
        self,
        *,
        conninfo: str,
        executor: Executor,
        config: Config,
        secrets: Mapping[str, tuple[bytes, ...]],
        stopping: trio.Event,
        instance: str | None = None,
    ) -> None:
        """Delivers from the first snapshot swap (`capture_ready`: the capture is in place) until `stopping`."""
        self._conninfo = conninfo
        self._executor = executor
        self._events = config.events
        self._connect_timeout = config.database.connect_timeout.seconds
        self._shutdown_timeout = config.server.shutdown_timeout.seconds
        self._secrets = secrets
        self._ready = trio.Event()
        self._stopping = stopping
        #: Names this instance in leases and attempts: unique even for two processes with one pid (containers).
        self.instance = instance or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = trio.Event()
        self._in_flight: set[str] = set()
        #: Set once the dispatcher has stopped: in-flight deliveries done or given back.
        self.stopped = trio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def capture_ready(self, _snapshot: object) -> None:
        """Called after each snapshot swap: the capture is installed (or checked), so delivering can start."""
        self._ready.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        most = self._events.concurrency
        limits = httpx.Limits(max_connections=most, max_keepalive_connections=most)
        headers = {"user-agent": f"svc/{VERSION}"}
        async with httpx.AsyncClient(limits=limits, follow_redirects=False, headers=headers) as client:
            await self._ready.wait()
            try:
                async with trio.open_nursery() as listening:
                    await listening.start(self._listen)
                    listening.start_soon(self._wake_when_stopping)
                    async with trio.open_nursery() as deliveries:
                        task_status.started()
                        await self._dispatch(client, deliveries)
                        with trio.move_on_after(self._shutdown_timeout):
                            while self._in_flight:
                                await self._sleep(math.inf)
                        deliveries.cancel_scope.cancel()
                    listening.cancel_scope.cancel()
            finally:
                await self._give_back()
                if self._stopping.is_set():
                    self.stopped.set()

    async def _listen(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        await listen(
            self._conninfo,
            self._events.channel,
            on_notify=self.wake,
            on_listening=lambda again: self.wake(),
            log=log,
            connect_timeout=self._connect_timeout,
            task_status=task_status,
        )

    async def _dispatch(self, client: httpx.AsyncClient, deliveries: trio.Nursery) -> None:
        """Claim and start deliveries until stopping; between rounds sleep until woken or something falls due."""
        poll = self._events.poll_interval.seconds
        while not self._stopping.is_set():
            self._wake = trio.Event()  # a notification from now on wakes the next sleep
            next_slot = await self._enqueue_schedules()
            free = self._events.concurrency - len(self._in_flight)
            wait = poll
            if free > 0:
                claimed = await self._executor.run(
                    functools.partial(claim, instance=self.instance, limit=free, lease=self._events.lease.seconds)
                )
                for event in claimed:
                    self._in_flight.add(event.id)
                    deliveries.start_soon(self._deliver, client, event)
                if len(claimed) == free:
                    continue  # more may be due: claim again once a delivery frees a place
                due = await self._executor.run(seconds_to_next_due)
                if due is not None:
                    wait = min(wait, max(due, 0.0))
            if next_slot is not None:
                wait = min(wait, next_slot)
            if self._in_flight and free <= 0:
                wait = poll
            await self._sleep(wait)

    async def _sleep(self, seconds: float) -> None:
        with trio.move_on_after(seconds):
            await self._wake.wait()

    async def _wake_when_stopping(self) -> None:
        await self._stopping.wait()
        self.wake()

    async def _deliver(self, client: httpx.AsyncClient, event: Claimed) -> None:
        started = datetime.now(UTC)
        target = self._events.targets.get(event.target)
        stopped: dict[str, str] = {}
        cancelled = False
        try:
            if target is None:
                outcome = Outcome(event, DEAD, started, error=f"no webhook target {event.target!r} is configured")
            elif event.target_stopped:
                outcome = Outcome(event, DEAD, started, error="the target answered 410 Gone: delivery to it stopped")
            else:
                outcome = await self._send(client, event, target.url, target.timeout.seconds, started)
                if outcome.status == 410:
                    stopped[event.target] = target.url
            if outcome.outcome in (RETRY, UNKNOWN):
                if event.attempt >= self._events.retry.attempts:
                    outcome = attrs.evolve(outcome, outcome=DEAD)
                else:
                    gap = retry_gap(event.attempt, initial=self._events.retry.initial.seconds,
                                    longest=self._events.retry.max.seconds)  # fmt: skip
                    outcome = attrs.evolve(outcome, next_gap=gap)
            moved = await self._executor.run(
                lambda tx: record(tx, instance=self.instance, outcomes=[outcome], stopped=stopped)
            )
            if not moved:
                log.warning("event %s: its lease passed to another instance before this attempt was recorded", event.id)
            if outcome.outcome != DELIVERED:
                log.info("event %s (%s) attempt %d: %s%s", event.id, event.trigger, event.attempt, outcome.outcome,
                         f" ({outcome.error})" if outcome.error else "")  # fmt: skip
        except trio.Cancelled:
            cancelled = True  # stopping: its lease is given back
            raise
        finally:
            if not cancelled:
                self._in_flight.discard(event.id)
                self.wake()

    async def _send(
        self, client: httpx.AsyncClient, event: Claimed, url: str, timeout: float, started: datetime
    ) -> Outcome:
        sent_at = int(time.time())
        headers = {
            "content-type": "application/json",
            "webhook-id": event.id,
            "webhook-timestamp": str(sent_at),
            "webhook-signature": signature(self._secrets[event.target], event.id, sent_at, event.body),
        }
        try:
            response = await client.post(url, content=event.body, headers=headers, timeout=timeout)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            return Outcome(event, RETRY, started, error=f"not sent: {_describe(exc)}")
        except httpx.HTTPError as exc:
            return Outcome(event, UNKNOWN, started, error=f"sent, no answer: {_describe(exc)}")
        status = response.status_code
        if 200 <= status < 300:
            return Outcome(event, DELIVERED, started, status=status)
        if status == 410:
            return Outcome(event, DEAD, started, status=status, error="410 Gone: delivery to this target stopped")
        return Outcome(event, RETRY, started, status=status, error=f"answered {status}")

    async def _enqueue_schedules(self) -> float | None:
        """Enqueue the latest due slot of each schedule (once across instances); seconds until the next slot."""
        if not self._events.schedules:
            return None
        now = datetime.now(UTC)
        soonest = math.inf
        for name, schedule in self._events.schedules.items():
            slots = croniter.croniter(schedule.cron, now)
            latest = slots.get_prev(datetime)
            await self._executor.run(
                functools.partial(
                    enqueue_slot,
                    name=name,
                    target=schedule.target,
                    payload=schedule.payload,
                    slot=latest,
                    channel=self._events.channel,
                )  # fmt: skip
            )
            following = croniter.croniter(schedule.cron, now).get_next(datetime)
            soonest = min(soonest, (following - now).total_seconds())
        return soonest

    async def _give_back(self) -> None:
        """Release the leases of events still in flight, so another instance delivers them without waiting."""
        if not self._in_flight:
            return
        ids = sorted(self._in_flight)
        with trio.CancelScope(shield=True), trio.move_on_after(_RELEASE_TIMEOUT):
            try:
                await self._executor.run(lambda tx: release(tx, instance=self.instance, ids=ids))
                log.info("gave back the leases of %d events in flight", len(ids))
            except Exception as exc:  # the database may be what is failing: their leases expire anyway
                log.warning("could not give back %d leases (they expire instead): %s", len(ids), exc)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
