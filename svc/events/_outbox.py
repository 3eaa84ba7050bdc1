"""The dispatcher's statements on the outbox: claim due events under a lease, record attempts' outcomes, release
leases, and enqueue a schedule's slot once across instances.

A claim takes due, unleased (or lease-expired) events with `FOR UPDATE SKIP LOCKED`, so instances claiming at once
take different events, and counts the attempt as it claims: an instance killed mid-delivery has used that attempt.
The request body is built in the claim, as JSON text: the dispatcher only encodes it to send (the rows are never
decoded into Python objects and written again).
"""

import enum
import json
from collections.abc import Sequence
from datetime import datetime

import attrs
from psycopg import sql

from svc.config import Json
from svc.db import Transaction


class Delivery(enum.Enum):
    """What one delivery attempt came to (SPEC "States and transitions"; the `svc_event_outcome` label values)."""

    DELIVERED = "delivered"
    RETRY = "retry"
    DEAD = "dead"
    #: Sent, but no answer came (a timeout, a connection closed mid-answer): retried like RETRY.
    UNKNOWN = "unknown"

    @property
    def again(self) -> bool:
        """Tried again (unless the attempts are used up)."""
        return self in (Delivery.RETRY, Delivery.UNKNOWN)


@attrs.frozen
class Claimed:
    """An event this instance holds the lease of, ready to send."""

    id: str
    target: str
    trigger: str
    #: This attempt's number (1 for the first).
    attempt: int
    body: bytes
    #: Its target answered 410 Gone before: nothing is sent to it until `svc_events.resume_target`.
    target_stopped: bool


@attrs.frozen
class Outcome:
    """What one attempt came to, and (for `retry` and `unknown`) how long until the next."""

    event: Claimed
    outcome: Delivery
    started_at: datetime
    status: int | None = None
    error: str | None = None
    next_gap: float = 0.0


_CLAIM = """
with due as (
    select id from svc_events.outbox
     where state = 'pending' and next_attempt_at <= clock_timestamp()
       and (lease_expires_at is null or lease_expires_at <= clock_timestamp())
     order by next_attempt_at
     limit %(limit)s
     for update skip locked
)
update svc_events.outbox as o
   set lease_holder = %(instance)s,
       lease_expires_at = clock_timestamp() + %(lease)s * interval '1 second',
       attempts = o.attempts + 1
  from due
 where o.id = due.id
returning o.id::text, o.target, o.trigger, o.attempts,
       case when o.op is null
            then json_build_object('id', o.id, 'createdAt', o.created_at, 'schedule', o.schedule,
                                   'scheduledAt', o.slot, 'payload', o.payload)
            else json_build_object('id', o.id, 'createdAt', o.created_at, 'table', o."table", 'op', o.op,
                                   'old', o.old, 'new', o.new)
       end::text,
       exists (select from svc_events.stopped_targets s where s.target = o.target)
"""

_RECORD = """
with outcome as (
    select * from unnest(%(ids)s::uuid[], %(attempts)s::integer[], %(outcomes)s::text[], %(statuses)s::integer[],
                         %(errors)s::text[], %(started)s::timestamptz[], %(gaps)s::float8[])
           as t(id, attempt, outcome, status, error, started_at, gap)
), logged as (
    insert into svc_events.attempts (event_id, attempt, instance, started_at, finished_at, outcome, status, error)
    select id, attempt, %(instance)s, started_at, clock_timestamp(), outcome, status, error from outcome
)
update svc_events.outbox as o
   set state = case outcome.outcome when 'delivered' then 'delivered' when 'dead' then 'dead' else 'pending' end,
       next_attempt_at = case when outcome.outcome in ('retry', 'unknown')
                              then clock_timestamp() + outcome.gap * interval '1 second'
                              else o.next_attempt_at end,
       lease_holder = null,
       lease_expires_at = null,
       last_outcome = outcome.outcome,
       last_status = outcome.status,
       last_error = outcome.error,
       finished_at = case when outcome.outcome in ('delivered', 'dead') then clock_timestamp() end
  from outcome
 where o.id = outcome.id and o.lease_holder = %(instance)s
"""

_STOP_TARGET = """
insert into svc_events.stopped_targets (target, url) values (%(target)s, %(url)s) on conflict (target) do nothing
"""

_RELEASE = """
update svc_events.outbox
   set lease_holder = null, lease_expires_at = null, next_attempt_at = clock_timestamp()
 where lease_holder = %(instance)s and state = 'pending' and id = any (%(ids)s::uuid[])
"""

_PURGE = """
delete from svc_events.outbox
 where id in (select id from svc_events.outbox
               where state = 'delivered' and finished_at < clock_timestamp() - %(keep)s * interval '1 second'
               limit 10000)
"""

_SLOT = """
with known as (
    insert into svc_events.schedules (name, last_slot) values (%(name)s, %(slot)s)
    on conflict (name) do nothing
    returning last_slot
)
select last_slot from svc_events.schedules where name = %(name)s for update
"""

_ENQUEUE_SLOT = """
with enqueued as (
    insert into svc_events.outbox (trigger, target, schedule, slot, payload, next_attempt_at)
    values (%(trigger)s, %(target)s, %(name)s, %(slot)s, %(payload)s::json, clock_timestamp())
    on conflict (schedule, slot) do nothing
    returning 1
)
update svc_events.schedules set last_slot = %(slot)s where name = %(name)s
"""


async def claim(tx: Transaction, *, instance: str, limit: int, lease: float) -> list[Claimed]:
    cursor = await tx.execute(_CLAIM, {"instance": instance, "limit": limit, "lease": lease})
    return [
        Claimed(id_, target, trigger, attempt, body.encode(), stopped)
        for id_, target, trigger, attempt, body, stopped in await cursor.fetchall()
    ]


async def record(tx: Transaction, *, instance: str, outcomes: Sequence[Outcome], stopped: dict[str, str]) -> int:
    """Record the attempts and move each event on; `stopped` holds targets (name to URL) that answered 410 Gone.
    The number of events moved on: an event whose lease another instance took since is left to it."""
    for target, url in stopped.items():
        await tx.execute(_STOP_TARGET, {"target": target, "url": url})
    cursor = await tx.execute(
        _RECORD,
        {
            "instance": instance,
            "ids": [o.event.id for o in outcomes],
            "attempts": [o.event.attempt for o in outcomes],
            "outcomes": [o.outcome.value for o in outcomes],
            "statuses": [o.status for o in outcomes],
            "errors": [o.error for o in outcomes],
            "started": [o.started_at for o in outcomes],
            "gaps": [o.next_gap for o in outcomes],
        },
    )
    return cursor.rowcount


async def release(tx: Transaction, *, instance: str, ids: Sequence[str]) -> None:
    """Give up the leases of events claimed but not finished (the service is stopping): due again at once."""
    await tx.execute(_RELEASE, {"instance": instance, "ids": list(ids)})


async def purge(tx: Transaction, *, keep: float) -> int:
    """Delete delivered events finished more than `keep` seconds ago (their attempts go with them), 10,000 at
    most per call; how many went."""
    cursor = await tx.execute(_PURGE, {"keep": keep})
    return cursor.rowcount


async def enqueue_slot(tx: Transaction, *, name: str, target: str, payload: Json, slot: datetime, channel: str) -> bool:
    """Enqueue `slot` of schedule `name` unless it (or a later one) was: True when this call enqueued it.

    The schedule's row is locked while deciding, and the outbox is unique per schedule and slot, so any number of
    instances enqueue each slot once. A schedule seen for the first time starts at `slot` without enqueueing it.
    """
    cursor = await tx.execute(_SLOT, {"name": name, "slot": slot})
    row = await cursor.fetchone()
    if row is None or row[0] >= slot:
        return False
    await tx.execute(
        _ENQUEUE_SLOT,
        {"trigger": f"schedules.{name}", "target": target, "name": name, "slot": slot,
         "payload": json.dumps(payload)},
    )  # fmt: skip
    await tx.execute(sql.SQL("select pg_notify({}, '')").format(sql.Literal(channel)))
    return True
