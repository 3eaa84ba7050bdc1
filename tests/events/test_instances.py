"""Several `svc run` processes share one outbox through PostgreSQL (ARCHITECTURE.md "Actors and the database as
coordinator"): every event delivered and each instance delivers some; an instance killed with SIGKILL while holding
leases loses nothing (another delivers after the lease expires; duplicates only for deliveries in flight, which the
receiver drops by `webhook-id`); SIGTERM lets deliveries in flight finish, then gives back the leases of those that
did not; a cron slot is delivered once across three instances. `svc events sql` applied by psql serves `manual`."""

import os
import shutil
import signal
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import trio
import yaml

from tests.events.support import ENVIRON, outbox, settings, sql, until
from tests.support.process import SVC, run_svc, service_process
from tests.support.receiver import HANG, Slow, running_receiver
from tests.support.service import LOOPBACK, merge

pytestmark = pytest.mark.slow
DATABASE_FIXTURES = ["events.sql"]


def directory(base: Path, name: str, config: dict) -> Path:
    path = base / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "svc.yaml").write_text(yaml.safe_dump(merge(LOOPBACK, config)))
    return path


def instance(base: Path, name: str, config: dict, database_url: str):
    return service_process(
        [SVC, "run"], cwd=directory(base, name, config), env={"DATABASE_URL": database_url, **ENVIRON}
    )


def delivered_by(database_url: str) -> dict[str, int]:
    rows = sql(
        database_url, "select instance, count(*) from svc_events.attempts where outcome = 'delivered' group by 1"
    )
    return dict(rows)


async def test_three_instances_share_the_outbox(tmp_path, database_url):
    async with running_receiver() as receiver, AsyncExitStack() as stack:
        config = settings(receiver.url, concurrency=4)
        for name in "abc":
            await stack.enter_async_context(instance(tmp_path, name, config, database_url))
        for _ in range(30):  # writes spread over time, so every instance gets woken with work to claim
            sql(database_url, "insert into app_public.orders (customer) select 'c' || n from generate_series(1, 10) n")
            await trio.sleep(0.02)
        await receiver.wait_for(lambda received: len({r.id for r in received}) == 300, timeout=60)
        await until(lambda: len(outbox(database_url, "state = 'delivered'")) == 300, timeout=20)
    shares = delivered_by(database_url)
    assert sum(shares.values()) >= 300 and len(shares) == 3, shares


async def test_a_killed_instance_s_leases_are_taken_over(tmp_path, database_url):
    hanging = {"on": True}
    async with running_receiver(lambda _: HANG if hanging["on"] else 200) as receiver:
        config = settings(receiver.url, lease="2s", concurrency=20)
        config["events"]["targets"]["default"]["timeout"] = "30s"
        async with instance(tmp_path, "a", config, database_url) as first:
            sql(database_url, "insert into app_public.orders (customer) select 'c' || n from generate_series(1, 10) n")
            await receiver.wait_for(lambda received: len(received) == 10, timeout=20)  # all in flight, hanging
            first.send_signal(signal.SIGKILL)
            await first.wait()
        held = outbox(database_url, "lease_holder is not null")
        assert len(held) == 10
        hanging["on"] = False
        async with instance(tmp_path, "b", config, database_url):
            await until(lambda: len(outbox(database_url, "state = 'delivered'")) == 10, timeout=30)
    ids = [r.id for r in receiver.received]
    assert len(set(ids)) == 10  # none lost
    assert len(ids) == 20  # each in-flight one twice: the receiver tells them apart by webhook-id


async def test_sigterm_lets_deliveries_finish_and_gives_back_the_rest(tmp_path, database_url):
    def answer(request):
        return Slow(1.0) if request.json()["new"]["customer"] == "slow" else HANG

    async with running_receiver(answer) as receiver:
        config = merge(settings(receiver.url, lease="60s"), {"server": {"shutdown_timeout": "2s"}})
        config["events"]["targets"]["default"]["timeout"] = "30s"
        async with instance(tmp_path, "a", config, database_url) as service:
            sql(database_url, "insert into app_public.orders (customer) values ('slow'), ('hanging')")
            await receiver.wait_for(lambda received: len(received) == 2)  # both in flight
            service.send_signal(signal.SIGTERM)
            assert await service.wait(timeout=15) == 0
        assert "gave back the leases of 1 events in flight" in service.log
    slow, hanging = outbox(database_url)
    assert slow["state"] == "delivered"  # answered within the shutdown timeout, and recorded
    assert (hanging["state"], hanging["lease_holder"]) == ("pending", None)  # due at once, for any instance


async def test_a_cron_slot_is_delivered_once_across_three_instances(tmp_path, database_url):
    schedules = {"tick": {"cron": "* * * * * */2", "payload": {"kind": "tick"}}}
    async with running_receiver() as receiver, AsyncExitStack() as stack:
        config = settings(receiver.url, schedules=schedules)
        for name in "abc":
            await stack.enter_async_context(instance(tmp_path, name, config, database_url))
        await receiver.wait_for(lambda received: len(received) >= 4, timeout=30)
    slots = [r.json()["scheduledAt"] for r in receiver.received]
    assert len(slots) == len(set(slots)), slots


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is the DBA's tool here; the machine has none")
async def test_events_sql_applied_by_psql_serves_manual_install(tmp_path, database_url):
    async with running_receiver() as receiver:
        config = settings(receiver.url, install="manual")
        cwd = directory(tmp_path, "dba", config)
        printed = run_svc("events", "sql", cwd=cwd, env={"DATABASE_URL": database_url, **ENVIRON})
        assert printed.returncode == 0, printed.stderr
        assert "create or replace trigger" in printed.stdout
        script = tmp_path / "events.sql"
        script.write_text(printed.stdout)
        async with instance(tmp_path, "before", config, database_url) as unapplied:
            pass
        assert "events.install is manual and the database lacks the svc_events schema is not installed" in (
            unapplied.log
        )
        applied = subprocess.run(
            ["psql", "-v", "ON_ERROR_STOP=1", "-1", "-q", "-f", str(script), database_url],
            capture_output=True, text=True, timeout=60, check=False, env={**os.environ, "PGCONNECT_TIMEOUT": "10"},
        )  # fmt: skip
        assert applied.returncode == 0, applied.stderr
        async with instance(tmp_path, "after", config, database_url) as served:
            sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
            await receiver.wait_for(lambda received: len(received) == 1, timeout=20)
        assert "events.install is manual" not in served.log
        assert receiver.received[0].verified(ENVIRON["HOOK_SECRET"])["new"]["customer"] == "Ada"
