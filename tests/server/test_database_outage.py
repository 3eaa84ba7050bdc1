"""The database going away and coming back, through the fault proxy (ARCHITECTURE.md "Conventions"): `/ready` answers
503 within two seconds whatever the database does, and 200 again once it is back, without a restart; the pool heals;
a service started while the database is unreachable serves `/live` and builds its first snapshot when it returns;
a connection cut mid-query is `DATABASE_UNAVAILABLE` (503, retryable)."""

import trio

from svc.db import ConnectionSettings, Executor, open_pool
from svc.http import Request, Response, Route
from tests.support.service import running_service, wait_until

READY_BUDGET = 2.0


async def timed_ready(client) -> tuple[int, dict, float]:
    started = trio.current_time()
    response = await client.get("/ready")
    return response.status_code, response.json(), trio.current_time() - started


async def ready_is(client, status: int) -> bool:
    return (await client.get("/ready")).status_code == status


async def test_server_down_then_back(tmp_path, proxied_url, fault_proxy):
    async with running_service(tmp_path, proxied_url) as service:
        assert (await timed_ready(service.client))[0] == 200
        fault_proxy.down()
        status, body, elapsed = await timed_ready(service.client)
        assert (status, body) == (503, {"status": "error", "database": "unreachable"})
        assert elapsed < READY_BUDGET
        assert (await service.client.get("/live")).status_code == 200
        await fault_proxy.up()
        await wait_until(lambda: ready_is(service.client, 200), timeout=READY_BUDGET)
        health = (await service.client.get("/health")).json()
        assert health["status"] == "ok" and health["pool"]["used"] == 0


async def test_a_black_hole_does_not_hang_ready(tmp_path, proxied_url, fault_proxy):
    async with running_service(tmp_path, proxied_url) as service:
        assert (await timed_ready(service.client))[0] == 200
        fault_proxy.set_mode("drop")
        fault_proxy.cut()  # the pooled connection goes; new ones open into the black hole
        for _ in range(2):
            status, body, elapsed = await timed_ready(service.client)
            assert (status, body["database"]) == (503, "unreachable")
            assert elapsed < READY_BUDGET
        fault_proxy.set_mode("pass")
        await wait_until(lambda: ready_is(service.client, 200), timeout=5)


async def test_started_while_the_database_is_unreachable(tmp_path, proxied_url, fault_proxy):
    fault_proxy.down()
    async with running_service(tmp_path, proxied_url) as service:
        assert (await service.client.get("/live")).status_code == 200
        status, body, elapsed = await timed_ready(service.client)
        assert (status, body) == (503, {"status": "error", "database": "unreachable"})
        health = (await service.client.get("/health")).json()
        assert (health["status"], health["schema"]) == ("error", None)
        await fault_proxy.up()
        await wait_until(lambda: ready_is(service.client, 200), timeout=15)
        assert (await service.client.get("/health")).json()["schema"]["generation"] == 1


async def test_connection_cut_mid_query_is_database_unavailable(tmp_path, database_url, proxied_url, fault_proxy):
    async def slow_query(request: Request) -> Response:
        async with open_pool(proxied_url, ConnectionSettings(), size=1) as pool:

            async def sleep(tx):
                await tx.execute("select pg_sleep(5)")

            await Executor(pool).run(sleep)
        return Response.json({"finished": True})

    async with running_service(tmp_path, database_url, routes=[Route("/slow", frozenset({"GET"}), slow_query)]) as s:
        async with trio.open_nursery() as nursery:
            responses = []

            async def call() -> None:
                responses.append(await s.client.get("/slow", headers={"X-Request-Id": "cut-1"}))

            nursery.start_soon(call)
            await wait_until(lambda: _connected(fault_proxy))
            await trio.sleep(0.3)
            fault_proxy.cut()
        (response,) = responses
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert (body["code"], body["title"], body["requestId"]) == ("DATABASE_UNAVAILABLE", "Database Unavailable", "cut-1")
    assert body["detail"] == "the database is unavailable; the request can be retried"


async def _connected(proxy) -> bool:
    return proxy.connections_made > 0
