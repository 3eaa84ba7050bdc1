"""The subscription poller: owns the live subscriptions of this instance and re-reads them every
`subscriptions.interval`, sending a result only when it changed (SPEC "Subscriptions").

- Transports ask to `open` a planned live query and to close it over the actor's memory channel; the actor keeps
  the registry and the per-instance and per-client limits (`TOO_MANY_SUBSCRIPTIONS` past either).
- Opening reads the first result at once, in the opener's task, exactly as a query would be read: a subscriber
  has its data without waiting for a round, and a live query whose first read fails is refused like a query.
- A round groups the subscriptions by compiled shape, snapshot API and session (role and claims: different claims
  never share a statement) and reads each group with ONE statement, its subscribers' values passed side by side
  (`Pipeline.read_batch`); subscribers with equal values share a row. Each result is hashed; only a changed one is
  sent. Rounds never overlap: the next starts an interval after the last one started, or at once when it ran late.
- A failing group does not touch the others. When its statement fails because of what some subscriber's values
  read, each distinct set of values is read alone, so only the subscribers whose read fails get the error (as a
  result with `data: null`; they stay subscribed and get data again once it reads). When the database is
  unavailable, subscribers wait: nothing is sent until it answers, then whatever changed meanwhile is.
- After a schema reload each subscription is planned again on the new snapshot; one that no longer validates ends
  with its errors.
- A subscriber that does not keep up (its few queued results unread) is sent its latest result when it catches up,
  never a backlog.

The metrics `svc_subscription_active`, `svc_subscription_round_duration_seconds` and
`svc_subscription_results_total` read `stats` (also shown by `/health`); each round's duration goes to its
`round_observers` as it ends.
"""

import hashlib
import itertools
import logging
import math
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import trio

from svc.errors import Code, SvcError
from svc.graphql import GraphqlRequest, GraphqlResponse, LiveQuery
from svc.pipeline import Pipeline
from svc.snapshot import Snapshot, SnapshotHolder
from svc.telemetry import Record, record_var

log = logging.getLogger("svc.subscriptions")

#: Results queued for a subscriber that has not read them yet; past it, it is sent its latest one when it catches up.
QUEUED_RESULTS = 4
#: Round durations kept for the percentiles `/health` reports.
ROUND_HISTORY = 1000


@attrs.frozen
class Result:
    """One execution result to send (JSON bytes); `final`: the subscription ends after it (its errors)."""

    body: bytes
    final: bool = False


@attrs.define
class Stats:
    """What the subscription metrics will export: live subscriptions, rounds and their durations, results sent."""

    active: int = 0
    rounds: int = 0
    results: int = 0
    #: Statements the last round sent (one per group).
    statements: int = 0
    #: The latest rounds' durations in seconds.
    durations: deque[float] = attrs.field(factory=lambda: deque[float](maxlen=ROUND_HISTORY))
    #: Called with each round's record (its statements, timed) and duration in seconds (the round duration
    #: histogram, the round's span).
    round_observers: list[Callable[[Record, float], None]] = attrs.field(factory=list)

    def round_done(self, record: Record, seconds: float, statements: int) -> None:
        self.rounds += 1
        self.statements = statements
        self.durations.append(seconds)
        for observe in self.round_observers:
            observe(record, seconds)

    def report(self) -> dict[str, Any]:
        """The counts, and the latest rounds' durations (p50, p99, last) in milliseconds."""
        ordered = sorted(self.durations)

        def ms(seconds: float) -> float:
            return round(seconds * 1000, 2)

        def percentile(share: float) -> float | None:
            return ms(ordered[max(0, math.ceil(share * len(ordered)) - 1)]) if ordered else None

        return {
            "active": self.active,
            "rounds": self.rounds,
            "results": self.results,
            "lastRoundStatements": self.statements,
            "roundMs": {
                "p50": percentile(0.5),
                "p99": percentile(0.99),
                "last": ms(self.durations[-1]) if self.durations else None,
            },
        }


class Subscription:
    """One live query of one subscriber: the transport reads `results` until it closes; `close()` ends it."""

    _ids = itertools.count(1)

    def __init__(
        self, poller: "Poller", request: GraphqlRequest, role: str | None, live: LiveQuery, client: Hashable
    ) -> None:
        self.id = next(self._ids)
        self.request = request
        self.role = role
        self.live = live
        #: Which statement answers it each round, and its values as that statement takes them (computed when it is
        #: planned, not every round); subscribers with equal texts share a row.
        self.group = _group(live)
        self.texts = poller.pipeline.batch_texts(live.params.values)
        self.client = client
        self.generation = 0
        self.digest: bytes | None = None
        self._poller = poller
        self._send, self.results = trio.open_memory_channel[Result](QUEUED_RESULTS)

    def deliver(self, digest: bytes, body: Callable[[], bytes]) -> bool:
        """Queue the result `body()` writes when its `digest` differs from the last result's (a result is written
        only then: most rounds change nothing); whether it was sent."""
        if digest == self.digest:
            return False
        try:
            self._send.send_nowait(Result(body()))
        except trio.WouldBlock:
            self.digest = None  # not sent: the next round sends whatever is latest then
            return False
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return False
        self.digest = digest
        return True

    def end(self, body: bytes | None) -> None:
        """The last result (errors), if any, then the end of `results`."""
        if body is not None:
            try:
                self._send.send_nowait(Result(body, final=True))
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        self._send.close()

    def close(self) -> None:
        """The subscriber is gone or done: leave the registry (safe in a `finally`, even when cancelled)."""
        self._poller.remove(self)


@attrs.frozen
class _Open:
    subscription: Subscription
    reply: trio.MemorySendChannel[SvcError | None]


@attrs.frozen
class _Close:
    subscription: Subscription


class Poller:
    """The subscription poller actor (supervised; its registry outlives a restart of its tasks)."""

    def __init__(
        self,
        *,
        pipeline: Pipeline,
        holder: SnapshotHolder,
        interval: float,
        max_active: int,
        max_per_client: int,
        concurrency: int,
        stopping: trio.Event | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.holder = holder
        self.interval = interval
        self.max_active = max_active
        self.max_per_client = max_per_client
        self.stats = Stats()
        self._registry: dict[int, Subscription] = {}
        self._per_client: dict[Hashable, int] = {}
        self._commands, self._inbox = trio.open_memory_channel[_Open | _Close](math.inf)
        self._limiter = trio.CapacityLimiter(max(1, concurrency))
        self._unavailable = False
        #: Set when the service shuts down: every subscription ends (its transport completes it) and none opens.
        self.stopping = stopping if stopping is not None else trio.Event()

    # --- the transports' side ------------------------------------------------------------------------------------

    async def open(
        self, request: GraphqlRequest, role: str | None, live: LiveQuery, client: Hashable
    ) -> Subscription | GraphqlResponse:
        """A registered subscription with its first result queued, or the refusal: the limits, or a first read
        that failed (answered as the query would be)."""
        subscription = Subscription(self, request, role, live, client)
        try:
            texts = await self.pipeline.read(live.statements, live.plan, live.params, live.context)
        except SvcError as error:
            return live.failure(error)
        snapshot = self.holder.current
        subscription.generation = snapshot.generation if snapshot is not None else 0
        reply, answer = trio.open_memory_channel[SvcError | None](1)
        self._commands.send_nowait(_Open(subscription, reply))
        refused = await answer.receive()
        if refused is not None:
            return live.failure(refused)
        subscription.deliver(texts_digest(texts), lambda: live.body(texts))
        return subscription

    def remove(self, subscription: Subscription) -> None:
        self._commands.send_nowait(_Close(subscription))

    # --- the actor ----------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._serve_commands)
            nursery.start_soon(self._end_all_when_stopping)
            task_status.started()
            while True:
                started = trio.current_time()
                if self._registry:
                    await self._round()
                await trio.sleep_until(started + self.interval)

    async def _serve_commands(self) -> None:
        async for command in self._inbox:
            if isinstance(command, _Open):
                command.reply.send_nowait(self._add(command.subscription))
            else:
                self._drop(command.subscription)

    async def _end_all_when_stopping(self) -> None:
        await self.stopping.wait()
        for subscription in list(self._registry.values()):
            self._end(subscription, None)

    def _add(self, subscription: Subscription) -> SvcError | None:
        client = subscription.client
        if self.stopping.is_set():
            return SvcError(Code.DATABASE_UNAVAILABLE, "the service is shutting down")
        if len(self._registry) >= self.max_active:
            return SvcError(
                Code.TOO_MANY_SUBSCRIPTIONS,
                f"this instance serves its most live subscriptions ({self.max_active}, subscriptions.max_active)",
            )
        if self._per_client.get(client, 0) >= self.max_per_client:
            return SvcError(
                Code.TOO_MANY_SUBSCRIPTIONS,
                f"this client has its most live subscriptions ({self.max_per_client}, subscriptions.max_per_client)",
            )
        self._registry[subscription.id] = subscription
        self._per_client[client] = self._per_client.get(client, 0) + 1
        self.stats.active = len(self._registry)
        return None

    def _drop(self, subscription: Subscription) -> None:
        if self._registry.pop(subscription.id, None) is None:
            return
        left = self._per_client[subscription.client] - 1
        if left:
            self._per_client[subscription.client] = left
        else:
            del self._per_client[subscription.client]
        self.stats.active = len(self._registry)

    def _end(self, subscription: Subscription, body: bytes | None) -> None:
        subscription.end(body)
        self._drop(subscription)

    async def _round(self) -> None:
        snapshot = self.holder.current
        if snapshot is None:
            return
        started = trio.current_time()
        groups: dict[Hashable, list[Subscription]] = {}
        for subscription in list(self._registry.values()):
            if subscription.generation != snapshot.generation and not self._replan(subscription, snapshot):
                continue
            groups.setdefault(subscription.group, []).append(subscription)
        sent = self.stats.results
        # The round's statements are timed into a record of its own, as a request's are.
        record = Record(f"subscription-round-{self.stats.rounds + 1}")
        token = record_var.set(record)
        try:
            async with trio.open_nursery() as nursery:
                for members in groups.values():
                    nursery.start_soon(self._isolated, members)
        finally:
            record_var.reset(token)
        self.stats.round_done(record, trio.current_time() - started, len(groups))
        log.debug("round: %d groups, %d results sent", len(groups), self.stats.results - sent)

    def _replan(self, subscription: Subscription, snapshot: Snapshot) -> bool:
        """Plan a subscription again on a new snapshot; False when it ended (it no longer validates)."""
        endpoint = snapshot.api(subscription.role).endpoint
        planned = endpoint.live(subscription.request, subscription.live.context.request_id)
        if not isinstance(planned, LiveQuery):  # refused now (None: the operation is no longer a subscription)
            self._end(subscription, planned.body if planned is not None else None)
            return False
        subscription.live = planned
        subscription.group = _group(planned)
        subscription.texts = self.pipeline.batch_texts(planned.params.values)
        subscription.generation = snapshot.generation
        return True

    async def _isolated(self, members: Sequence[Subscription]) -> None:
        """A group's read; whatever goes wrong in it (a bug) stays in it: its subscribers get the error."""
        try:
            await self._read_group(members)
        except Exception as exc:
            log.exception("a group of %d live queries failed", len(members))
            error = SvcError(Code.INTERNAL_SERVER_ERROR, f"the live query could not be read: {type(exc).__name__}")
            for member in members:
                self._send_failure(member, error)

    async def _read_group(self, members: Sequence[Subscription]) -> None:
        """One statement for the group; subscribers with equal values share its row."""
        live = members[0].live
        rows: dict[tuple[str | None, ...], int] = {}
        sets: list[tuple[str | None, ...]] = []
        for member in members:
            if member.texts not in rows:
                rows[member.texts] = len(sets)
                sets.append(member.texts)
        try:
            async with self._limiter:
                texts = await self.pipeline.read_batch(live.statements, live.plan, sets, live.context)
        except SvcError as error:
            await self._failed(members, rows, sets, error)
            return
        self._recovered()
        digests = [texts_digest(row) for row in texts]  # once per row, however many subscribers share it
        for member in members:
            row = rows[member.texts]
            self._send_texts(member, digests[row], texts[row])

    async def _failed(
        self,
        members: Sequence[Subscription],
        rows: dict[tuple[str | None, ...], int],
        sets: list[tuple[str | None, ...]],
        error: SvcError,
    ) -> None:
        """A group's statement failed: wait for the database, or find whose values fail by reading each alone."""
        if error.code is Code.DATABASE_UNAVAILABLE:
            if not self._unavailable:
                log.warning("live queries wait for the database: %s", error.message)
                self._unavailable = True
            return
        if len(sets) == 1 or error.code is Code.STATEMENT_TIMEOUT:
            for member in members:
                self._send_failure(member, error)
            return
        live = members[0].live
        answers: list[Sequence[bytes | None] | SvcError] = []
        for values in sets:
            try:
                async with self._limiter:
                    (texts,) = await self.pipeline.read_batch(live.statements, live.plan, [values], live.context)
                answers.append(texts)
            except SvcError as alone:
                answers.append(alone)
        for member in members:
            answer = answers[rows[member.texts]]
            if isinstance(answer, SvcError):
                self._send_failure(member, answer)
            else:
                self._send_texts(member, texts_digest(answer), answer)

    def _send_texts(self, member: Subscription, digest: bytes, texts: Sequence[bytes | None]) -> None:
        """A read's result, written only when its texts changed since the last result sent."""
        if member.id in self._registry and member.deliver(digest, lambda: member.live.body(texts)):
            self.stats.results += 1

    def _send_failure(self, member: Subscription, error: SvcError) -> None:
        body = member.live.failure(error).body
        if member.id in self._registry and member.deliver(_failure_digest(body), lambda: body):
            self.stats.results += 1

    def _recovered(self) -> None:
        if self._unavailable:
            log.info("live queries read again")
            self._unavailable = False


def texts_digest(texts: Sequence[bytes | None]) -> bytes:
    """What a read's result is, from its root fields' texts (each length-prefixed, NULL apart): equal digests are
    equal results, without writing the result."""
    digest = hashlib.blake2b(b"data", digest_size=16)
    for text in texts:
        if text is None:
            digest.update(b"\xff")
        else:
            digest.update(len(text).to_bytes(8, "big"))
            digest.update(text)
    return digest.digest()


def _failure_digest(body: bytes) -> bytes:
    return hashlib.blake2b(b"error" + body, digest_size=16).digest()


def _group(live: LiveQuery) -> Hashable:
    """Live queries answered by one statement: the same snapshot API (its compiled statements), the same plan shape
    (its batch statement's text: SQL depends only on the shape, and a string keeps its hash, where a plan tree would
    be hashed and compared whole in every round), and the same session (role and settings: the claims)."""
    session = live.context.session
    claims = (session.role, tuple(sorted(session.settings.items()))) if session is not None else None
    statement = live.statements.batch(live.plan, len(live.params.values)).statement
    return (id(live.statements), statement, claims)
