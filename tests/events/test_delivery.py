"""Delivery (SPEC "Events"; "States and transitions": outcomes delivered, retry, dead, unknown): signed per Standard
Webhooks with the event id as `webhook-id` on every attempt; retried with exponential backoff and full jitter, then
dead-lettered and re-driveable; a hang times out as `unknown`; 410 Gone stops a target; one-off events from SQL and
cron slots. Real receivers on loopback; signatures checked with the `standardwebhooks` package."""

import statistics
from datetime import datetime

import psycopg
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from svc.actors._dispatcher import retry_gap
from tests.events.support import ENVIRON, outbox, served, settings, sql, until
from tests.support.receiver import CLOSE, HANG, running_receiver
from tests.support.service import running_service

DATABASE_FIXTURES = ["events.sql"]
SECRET = ENVIRON["HOOK_SECRET"]


def attempts(database_url: str) -> list[tuple]:
    return sql(database_url, "select attempt, outcome, status from svc_events.attempts order by id")


def failing(times: int, status: int | str = 500):
    """An answer that fails the first `times` requests, then accepts."""

    def answer(_request) -> int | str:
        answer.calls += 1
        return status if answer.calls <= times else 200

    answer.calls = 0
    return answer


def test_retry_gaps_are_full_jitter_under_a_doubling_cap():
    for attempt in range(1, 8):
        cap = min(10.0, 0.5 * 2 ** (attempt - 1))
        gaps = [retry_gap(attempt, initial=0.5, longest=10.0) for _ in range(2000)]
        assert all(0 <= gap <= cap for gap in gaps)
        assert len(set(gaps)) > 1900  # jittered
        assert cap * 0.4 < statistics.mean(gaps) < cap * 0.6  # uniform over [0, cap]


async def test_a_failing_receiver_gets_the_same_id_until_it_accepts(tmp_path, database_url):
    async with served(tmp_path, database_url, failing(2)) as (receiver, service):
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        await receiver.wait_for(lambda received: len(received) == 3)
        (event,) = outbox(database_url)
        assert {r.id for r in receiver.received} == {str(event["id"])}
        assert all(r.verified(SECRET)["new"]["customer"] == "Ada" for r in receiver.received)
        first, second, third = (r.at for r in receiver.received)
        # Gaps below the doubling caps (200ms, 400ms), plus the time a round takes on a busy machine.
        assert second - first < 0.2 + 0.8 and third - second < 0.4 + 0.8
        await until(lambda: outbox(database_url)[0]["state"] == "delivered")
        assert attempts(database_url) == [(1, "retry", 500), (2, "retry", 500), (3, "delivered", 200)]
        # The dispatcher's counts are the metric `svc_event_deliveries_total` (SPEC "Telemetry").
        metrics = (await service.client.get("/metrics")).text
        counted = {
            (sample.labels["svc_event_trigger"], sample.labels["svc_event_outcome"]): sample.value
            for family in text_string_to_metric_families(metrics)
            if family.name == "svc_event_deliveries"
            for sample in family.samples
            if sample.name == "svc_event_deliveries_total"
        }
        assert counted == {(event["trigger"], "retry"): 2, (event["trigger"], "delivered"): 1}


async def test_an_always_failing_receiver_ends_dead_and_redrive_delivers_again(tmp_path, database_url):
    answers = {"status": 503}
    async with served(tmp_path, database_url, lambda _: answers["status"]) as (receiver, _):
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        await until(lambda: outbox(database_url)[0]["state"] == "dead")
        assert len(receiver.received) == 3
        assert attempts(database_url) == [(1, "retry", 503), (2, "retry", 503), (3, "dead", 503)]
        (event,) = outbox(database_url, "state = 'dead'")  # the dead letter stays, queryable
        assert (event["attempts"], event["last_outcome"], event["last_error"]) == (3, "dead", "answered 503")
        answers["status"] = 200
        assert sql(database_url, "select svc_events.redrive()") == [(1,)]
        await receiver.wait_for(lambda received: len(received) == 4)
        await until(lambda: outbox(database_url)[0]["state"] == "delivered")
        assert receiver.received[3].id == str(event["id"])
        assert attempts(database_url)[3:] == [(1, "delivered", 200)]  # counted afresh after the redrive


async def test_a_hang_or_a_dropped_connection_is_unknown_then_retried(tmp_path, database_url):
    answers = iter([HANG, CLOSE])
    config = settings("")
    async with running_receiver(lambda _: next(answers, 200)) as receiver:
        config["events"]["targets"]["default"].update(url=receiver.url, timeout="500ms")
        async with running_service(tmp_path, database_url, config, environ=ENVIRON):
            sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
            await until(lambda: outbox(database_url)[0]["state"] == "delivered", timeout=15)
    assert [outcome for _, outcome, _ in attempts(database_url)] == ["unknown", "unknown", "delivered"]
    assert len({r.id for r in receiver.received}) == 1 and len(receiver.received) == 3


async def test_an_unreachable_receiver_is_retry_not_sent(tmp_path, database_url):
    async with running_service(tmp_path, database_url, settings("http://127.0.0.1:9/hook"), environ=ENVIRON):
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        await until(lambda: outbox(database_url)[0]["state"] == "dead")
    assert [outcome for _, outcome, _ in attempts(database_url)] == ["retry", "retry", "dead"]
    assert outbox(database_url)[0]["last_error"].startswith("not sent: ConnectError")


async def test_410_gone_stops_the_target_until_it_is_resumed(tmp_path, database_url):
    answers = {"status": 410}
    async with served(tmp_path, database_url, lambda _: answers["status"]) as (receiver, _):
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        await until(lambda: outbox(database_url)[0]["state"] == "dead")
        assert sql(database_url, "select target, url from svc_events.stopped_targets") == [("default", receiver.url)]
        answers["status"] = 200
        sql(database_url, "insert into app_public.orders (customer) values ('Grace')")
        await until(lambda: all(e["state"] == "dead" for e in outbox(database_url)) and len(outbox(database_url)) == 2)
        assert len(receiver.received) == 1  # nothing sent to a stopped target
        assert outbox(database_url)[1]["last_error"] == "the target answered 410 Gone: delivery to it stopped"
        assert sql(database_url, "select svc_events.resume_target('default')") == [(True,)]
        sql(database_url, "insert into app_public.orders (customer) values ('Edsger')")
        await receiver.wait_for(lambda received: len(received) == 2)
        assert receiver.received[1].verified(SECRET)["new"]["customer"] == "Edsger"


async def test_one_off_events_come_from_sql_in_the_caller_s_transaction(tmp_path, database_url):
    async with served(tmp_path, database_url) as (receiver, _):
        with psycopg.connect(database_url) as conn:
            conn.execute("select svc_events.schedule('default', now(), '{\"lost\": true}')")
            conn.rollback()
            (event_id,) = conn.execute(
                "select svc_events.schedule('default', now() + interval '500 milliseconds', '{\"report\": 1}')"
            ).fetchone()
            conn.commit()
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="no webhook target 'elsewhere'"):
                conn.execute("select svc_events.schedule('elsewhere', now(), null)")
            conn.rollback()
            conn.execute("create role events_caller; grant usage on schema svc_events to events_caller")
            conn.execute("set role events_caller")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):  # not granted: it runs as its owner
                conn.execute("select svc_events.schedule('default', now(), null)")
            conn.rollback()
        await receiver.wait_for(lambda received: len(received) == 1)
        body = receiver.received[0].verified(SECRET)
        assert (body["id"], body["schedule"], body["payload"]) == (str(event_id), None, {"report": 1})
        assert set(body) == {"id", "createdAt", "schedule", "scheduledAt", "payload"}


async def test_a_cron_schedule_delivers_each_slot_once(tmp_path, database_url):
    schedules = {"tick": {"cron": "* * * * * */2", "payload": {"kind": "tick"}}}
    async with (
        running_receiver() as receiver,
        running_service(tmp_path, database_url, settings(receiver.url, schedules=schedules), environ=ENVIRON),
    ):
        await receiver.wait_for(lambda received: len(received) >= 3, timeout=15)
    bodies = [r.verified(SECRET) for r in receiver.received]
    slots = [b["scheduledAt"] for b in bodies]
    assert len(slots) == len(set(slots))  # each slot once
    assert all(b["schedule"] == "tick" and b["payload"] == {"kind": "tick"} for b in bodies)


async def test_slots_missed_while_every_instance_was_down_are_delivered_once_as_the_latest(tmp_path, database_url):
    schedules = {"hourly": {"cron": "0 * * * *", "payload": None}}
    config = settings("", schedules=schedules)
    async with running_receiver() as receiver:
        config["events"]["targets"]["default"]["url"] = receiver.url
        async with running_service(tmp_path / "a", database_url, config, environ=ENVIRON):
            await until(lambda: sql(database_url, "select count(*) from svc_events.schedules") == [(1,)])
        assert receiver.received == []  # a schedule seen for the first time starts with its next slot
        # Everything was down for five hours: five slots missed.
        sql(database_url, "update svc_events.schedules set last_slot = date_trunc('hour', now()) - interval '5 hours'")
        async with running_service(tmp_path / "b", database_url, config, environ=ENVIRON):
            await receiver.wait_for(lambda received: len(received) == 1)
            await trio.sleep(0.5)
    (body,) = [r.verified(SECRET) for r in receiver.received]
    (latest,) = sql(database_url, "select date_trunc('hour', now())")[0]
    assert datetime.fromisoformat(body["scheduledAt"]) == latest


async def test_events_written_while_the_database_was_unreachable_are_delivered_when_it_is_back(
    tmp_path, database_url, proxied_url, fault_proxy, caplog
):
    async with (
        running_receiver() as receiver,
        running_service(tmp_path, proxied_url, settings(receiver.url), environ=ENVIRON),
    ):
        fault_proxy.down()
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")  # not through the proxy
        await trio.sleep(1.5)  # a poll or two fails meanwhile
        await fault_proxy.up()
        await receiver.wait_for(lambda received: len(received) == 1, timeout=15)
    assert "event dispatcher: the database is unavailable" in caplog.text
    assert "crashed" not in caplog.text


async def test_delivered_events_are_deleted_after_the_retention_and_dead_ones_kept(tmp_path, database_url):
    async with running_receiver(lambda r: 500 if r.json()["new"]["customer"] == "dead" else 200) as receiver:
        config = settings(receiver.url, retention="1s")
        async with running_service(tmp_path, database_url, config, environ=ENVIRON):
            sql(database_url, "insert into app_public.orders (customer) values ('Ada'), ('dead')")
            await until(lambda: [e["state"] for e in outbox(database_url)] == ["dead"], timeout=15)
        assert sql(database_url, "select count(*) from svc_events.attempts") == [(3,)]  # the dead one's
