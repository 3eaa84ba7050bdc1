"""Schema reload without a restart (SPEC "Operations", "States and transitions"): on NOTIFY and on SIGHUP, a new
snapshot is built off to the side and swapped in atomically; a request in flight finishes on the snapshot it
started with; a failed rebuild keeps the previous snapshot serving and logs why; the listener's connection is
supervised (a crash restarts it)."""

import logging
import os
import signal

import psycopg
import trio

from svc.http import Request, Response, Route
from tests.support.postgres import notify
from tests.support.service import running_service, wait_until

DATABASE_FIXTURES = ["basic.sql", "reload_extra.sql"]


class Gate:
    """A route that reports the snapshot generation its request started with, once the test opens the gate."""

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.open = trio.Event()

    async def handler(self, request: Request) -> Response:
        held = request.snapshot
        assert held is not None
        self.entered.set()
        await self.open.wait()
        return Response.json({"generation": held.generation})

    def route(self) -> Route:
        return Route("/held", frozenset({"GET"}), self.handler)


async def generation(client) -> int:
    return (await client.get("/health")).json()["schema"]["generation"]


async def test_notify_swaps_the_snapshot_and_a_request_in_flight_finishes_on_the_old_one(tmp_path, database_url):
    gate = Gate()
    async with running_service(tmp_path, database_url, routes=[gate.route()]) as service:
        assert await generation(service.client) == 1
        async with trio.open_nursery() as nursery:
            answers = []

            async def held_request() -> None:
                answers.append((await service.client.get("/held")).json())

            nursery.start_soon(held_request)
            await gate.entered.wait()
            notify(database_url)
            await wait_until(lambda: _is(service.client, 2))
            gate.open.set()
        assert answers == [{"generation": 1}]
        assert await generation(service.client) == 2


async def _is(client, expected: int) -> bool:
    return await generation(client) == expected


async def test_notifications_on_another_channel(tmp_path, database_url):
    async with running_service(tmp_path, database_url, {"reload": {"channel": "schema changed"}}) as service:
        notify(database_url)  # the default channel: not listened to
        notify(database_url, "schema changed")
        await wait_until(lambda: _is(service.client, 2))
        await trio.sleep(0.3)
        assert await generation(service.client) == 2


async def test_reload_disabled_ignores_notifications(tmp_path, database_url):
    async with running_service(tmp_path, database_url, {"reload": {"enabled": False}}) as service:
        notify(database_url)
        await trio.sleep(0.5)
        assert await generation(service.client) == 1


async def test_sighup_reloads(tmp_path, database_url):
    async with running_service(tmp_path, database_url) as service:
        os.kill(os.getpid(), signal.SIGHUP)
        await wait_until(lambda: _is(service.client, 2))


async def test_failed_reload_keeps_the_old_snapshot_serving(tmp_path, database_url, caplog):
    settings = {"database": {"schemas": ["app_public", "reload_extra"]}}
    async with running_service(tmp_path, database_url, settings) as service:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("alter schema reload_extra rename to reload_gone")
        try:
            notify(database_url)
            await wait_until(lambda: _logged(caplog, "schema reload (notification on svc_reload) failed"))
            failure = next(r for r in caplog.records if "failed" in r.getMessage() and r.name == "svc.reload")
            assert "still serving generation 1" in failure.getMessage()
            assert "schema 'reload_extra' does not exist" in failure.getMessage()
            assert (await service.client.get("/ready")).status_code == 200
            assert await generation(service.client) == 1
        finally:
            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute("alter schema reload_gone rename to reload_extra")
        notify(database_url)
        await wait_until(lambda: _is(service.client, 2))


async def _logged(caplog, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def test_a_lost_listener_reconnects_and_reloads(tmp_path, database_url, caplog):
    caplog.set_level(logging.INFO, logger="svc")
    async with running_service(tmp_path, database_url) as service:
        with psycopg.connect(database_url, autocommit=True) as conn:
            killed = conn.execute(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = current_database() "
                "and query ilike %s",
                ["listen%svc_reload%"],
            ).fetchone()[0]
        assert killed == 1
        await wait_until(lambda: _logged(caplog, "listener on svc_reload: "))
        # Notifications sent while the listener was away are missed, so the restarted listener reloads once.
        await wait_until(lambda: _is(service.client, 2), timeout=10)
        notify(database_url)
        await wait_until(lambda: _is(service.client, 3))
