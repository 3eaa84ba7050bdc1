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

import collections
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
import psycopg
import trio

from svc.config import Config
from svc.db import Executor
from svc.errors import RETRYABLE, SvcError
from svc.events import (
    Claimed,
    Delivery,
    H11Transport,
    Outcome,
    claim,
    enqueue_slot,
    purge,
    record,
    release,
    signature,
)
from svc.version import VERSION

from ._listener import listen

log = logging.getLogger("svc.events")

#: Longest a shutdown waits to give leases back before the process goes anyway (their expiry frees them then).
_RELEASE_TIMEOUT = 2.0
#: Longest time between two purges of delivered events.
_PURGE_INTERVAL = 60.0
#: Most attempts recorded in one statement.
_RECORD_BATCH = 500


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
        #: Deliveries sending now (at most `events.concurrency`).
        self._sending = 0
        #: Events claimed whose attempt is not recorded yet: the leases a stopping dispatcher gives back.
        self._unrecorded: set[str] = set()
        self._next_slot: datetime | None = None
        #: When the soonest retry this instance scheduled falls due (trio clock).
        self._next_retry: float | None = None
        self._next_purge = 0.0
        #: Set once the dispatcher has stopped: in-flight deliveries done or given back.
        self.stopped = trio.Event()
        #: Attempts so far by (trigger, outcome) (`svc_event_deliveries_total`).
        self.deliveries: collections.Counter[tuple[str, str]] = collections.Counter()

    def wake(self) -> None:
        self._wake.set()

    async def capture_ready(self, _snapshot: object) -> None:
        """Called after each snapshot swap: the capture is installed (or checked), so delivering can start."""
        self._ready.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        if not await self._until_ready():
            self.stopped.set()
            return
        headers = {"user-agent": f"svc/{VERSION}"}
        outcomes_in, outcomes = trio.open_memory_channel[Outcome](math.inf)
        # At most `events.concurrency` requests are in flight, so at most that many connections per target.
        transport = H11Transport()
        async with httpx.AsyncClient(transport=transport, follow_redirects=False, headers=headers) as client:
            try:
                async with trio.open_nursery() as background:
                    await background.start(self._listen)
                    background.start_soon(self._wake_when_stopping)
                    recorded = trio.Event()
                    background.start_soon(self._record, outcomes, recorded)
                    async with trio.open_nursery() as deliveries:
                        await self._dispatch(client, deliveries, outcomes_in)
                        with trio.move_on_after(self._shutdown_timeout):
                            while self._sending:
                                self._wake = trio.Event()
                                await self._sleep(math.inf)
                        deliveries.cancel_scope.cancel()
                    await outcomes_in.aclose()  # the recorder records what is left, then returns
                    with trio.move_on_after(_RELEASE_TIMEOUT):
                        await recorded.wait()
                    background.cancel_scope.cancel()
            finally:
                await self._give_back()
                if self._stopping.is_set():
                    self.stopped.set()

    async def _until_ready(self) -> bool:
        """Wait for the capture to be in place; False when the service stops first (the database never came)."""
        async with trio.open_nursery() as nursery:

            async def stop() -> None:
                await self._stopping.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(stop)
            await self._ready.wait()
            nursery.cancel_scope.cancel()
        return self._ready.is_set()

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

    async def _dispatch(
        self, client: httpx.AsyncClient, deliveries: trio.Nursery, outcomes: trio.MemorySendChannel[Outcome]
    ) -> None:
        """Claim and start deliveries until stopping; between rounds sleep until woken or something falls due.

        Claims are batched: with deliveries in flight, the next claim waits until half the places are free, so a
        busy outbox costs one claim per several events, not one per event."""
        poll = self._events.poll_interval.seconds
        most = self._events.concurrency
        unavailable = False
        while not self._stopping.is_set():
            self._wake = trio.Event()  # a notification from now on wakes the next sleep
            wait = poll
            try:
                next_slot = await self._enqueue_schedules()
                if next_slot is not None:
                    wait = min(wait, next_slot)
                await self._purge()
                free = most - self._sending
                if free > 0 and (free * 2 >= most or not self._sending):
                    claimed = await self._executor.run(
                        functools.partial(claim, instance=self.instance, limit=free, lease=self._events.lease.seconds)
                    )
                    for event in claimed:
                        self._unrecorded.add(event.id)
                        self._sending += 1
                        deliveries.start_soon(self._deliver, client, event, outcomes)
                unavailable = False
            except SvcError as exc:
                if exc.code not in RETRYABLE:
                    raise
                if not unavailable:  # once per outage; the poll tries again
                    log.warning("event dispatcher: %s", exc)
                unavailable = True
            if self._next_retry is not None:
                wait = min(wait, max(self._next_retry - trio.current_time(), 0.0))
                if self._next_retry <= trio.current_time():
                    self._next_retry = None
            await self._sleep(wait)

    async def _purge(self) -> None:
        """Delete delivered events past `events.retention`, checked at most once a minute (or once a retention)."""
        retention = self._events.retention
        if retention is None or trio.current_time() < self._next_purge:
            return
        self._next_purge = trio.current_time() + min(retention.seconds, _PURGE_INTERVAL)
        gone = await self._executor.run(functools.partial(purge, keep=retention.seconds))
        if gone:
            log.info("deleted %d delivered events older than %s", gone, retention)

    def _retry_at(self, gap: float | None) -> None:
        """Wake in `gap` seconds for a retry this instance scheduled. Retries other instances scheduled are theirs
        to wake for; the poll finds them if their instance went away."""
        if gap is None:
            return
        due = trio.current_time() + gap
        if self._next_retry is None or due < self._next_retry:
            self._next_retry = due
            self.wake()

    async def _sleep(self, seconds: float) -> None:
        with trio.move_on_after(seconds):
            await self._wake.wait()

    async def _wake_when_stopping(self) -> None:
        await self._stopping.wait()
        self.wake()

    async def _deliver(
        self, client: httpx.AsyncClient, event: Claimed, outcomes: trio.MemorySendChannel[Outcome]
    ) -> None:
        started = datetime.now(UTC)
        target = self._events.targets.get(event.target)
        try:
            if target is None:
                outcome = Outcome(
                    event, Delivery.DEAD, started, error=f"no webhook target {event.target!r} is configured"
                )
            elif event.target_stopped:
                outcome = Outcome(
                    event, Delivery.DEAD, started, error="the target answered 410 Gone: delivery to it stopped"
                )
            else:
                outcome = await self._send(client, event, target.url, target.timeout.seconds, started)
            if outcome.outcome.again:
                if event.attempt >= self._events.retry.attempts:
                    outcome = attrs.evolve(outcome, outcome=Delivery.DEAD)
                else:
                    gap = retry_gap(event.attempt, initial=self._events.retry.initial.seconds,
                                    longest=self._events.retry.max.seconds)  # fmt: skip
                    outcome = attrs.evolve(outcome, next_gap=gap)
            if outcome.outcome is not Delivery.DELIVERED:
                because = f" ({outcome.error})" if outcome.error else ""
                log.info("event %s (%s) attempt %d: %s%s", event.id, event.trigger, event.attempt,
                         outcome.outcome.value, because)  # fmt: skip
            self.deliveries[event.trigger, outcome.outcome.value] += 1
            outcomes.send_nowait(outcome)
        finally:
            self._sending -= 1
            self.wake()

    async def _record(self, outcomes: trio.MemoryReceiveChannel[Outcome], recorded: trio.Event) -> None:
        """Record outcomes as they come, all that are waiting in one statement; return once the channel closes.

        An outcome that cannot be recorded (the database is away) is dropped: its lease expires and the event is
        delivered again, which at-least-once allows."""
        async for first in outcomes:
            batch = [first]
            while len(batch) < _RECORD_BATCH:
                try:
                    batch.append(outcomes.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            stopped = {o.event.target: self._events.targets[o.event.target].url for o in batch if o.status == 410}
            try:
                moved = await self._executor.run(
                    functools.partial(record, instance=self.instance, outcomes=batch, stopped=stopped)
                )
                self._retry_at(min((o.next_gap for o in batch if o.outcome.again), default=None))
                if moved < len(batch):
                    log.warning("%d events: their leases passed to another instance before the attempt was recorded",
                                len(batch) - moved)  # fmt: skip
            except (SvcError, psycopg.Error) as exc:
                log.warning("could not record %d delivery attempts (delivered again later): %s", len(batch), exc)
            finally:
                self._unrecorded.difference_update(o.event.id for o in batch)
        recorded.set()

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
            return Outcome(event, Delivery.RETRY, started, error=f"not sent: {_describe(exc)}")
        except httpx.HTTPError as exc:
            return Outcome(event, Delivery.UNKNOWN, started, error=f"sent, no answer: {_describe(exc)}")
        status = response.status_code
        if 200 <= status < 300:
            return Outcome(event, Delivery.DELIVERED, started, status=status)
        if status == 410:
            return Outcome(
                event, Delivery.DEAD, started, status=status, error="410 Gone: delivery to this target stopped"
            )
        return Outcome(event, Delivery.RETRY, started, status=status, error=f"answered {status}")

    async def _enqueue_schedules(self) -> float | None:
        """Enqueue the latest due slot of each schedule (once across instances) when one has come; seconds until
        the next slot."""
        if not self._events.schedules:
            return None
        now = datetime.now(UTC)
        if self._next_slot is None or now >= self._next_slot:
            for name, schedule in self._events.schedules.items():
                latest = croniter.croniter(schedule.cron, now).get_prev(datetime)
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
            self._next_slot = min(
                croniter.croniter(s.cron, now).get_next(datetime) for s in self._events.schedules.values()
            )
        return max((self._next_slot - datetime.now(UTC)).total_seconds(), 0.0)

    async def _give_back(self) -> None:
        """Release the leases of events still in flight, so another instance delivers them without waiting."""
        if not self._unrecorded:
            return
        ids = sorted(self._unrecorded)
        with trio.CancelScope(shield=True), trio.move_on_after(_RELEASE_TIMEOUT):
            try:
                await self._executor.run(lambda tx: release(tx, instance=self.instance, ids=ids))
                log.info("gave back the leases of %d events in flight", len(ids))
            except Exception as exc:  # the database may be what is failing: their leases expire anyway
                log.warning("could not give back %d leases (they expire instead): %s", len(ids), exc)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
