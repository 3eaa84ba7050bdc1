"""The psycopg connection driven by Trio (ARCHITECTURE.md, "Database driver"): queries, cancellation, timeouts,
broken connections and reconnects, against a real PostgreSQL."""

import psycopg
import pytest
import trio

from svc.db import Connection


async def backend_query(url: str, pid: int) -> str | None:
    """What backend `pid` is running now (None when it is gone or idle)."""
    conn = await Connection.connect(url, autocommit=True)
    async with conn:
        cursor = await conn.execute("select state, query from pg_stat_activity where pid = %s", [pid])
        row = await cursor.fetchone()
    return row[1] if row and row[0] == "active" else None


async def test_connect_and_query(database_url):
    async with await Connection.connect(database_url, autocommit=True) as conn:
        cursor = await conn.execute("select title from app_public.posts order by id")
        assert await cursor.fetchall() == [("Notes",), ("Compilers",)]
        cursor = await conn.execute("select %s::int + %s::int", [2, 3])
        assert await cursor.fetchone() == (5,)


async def test_transactions_and_many_round_trips(database_url):
    async with await Connection.connect(database_url) as conn:
        async with conn.transaction():
            for i in range(50):
                await conn.execute("select %s", [i])
        assert conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE


async def test_two_tasks_on_one_connection_take_turns(database_url):
    """psycopg's asyncio lock would break here; ours is a Trio lock."""
    results = []
    async with await Connection.connect(database_url, autocommit=True) as conn:

        async def query(n: int) -> None:
            cursor = await conn.execute("select %s::int, pg_sleep(0.05)", [n])
            results.append((await cursor.fetchone())[0])

        async with trio.open_nursery() as nursery:
            for n in range(3):
                nursery.start_soon(query, n)
    assert sorted(results) == [0, 1, 2]


async def test_cancellation_interrupts_and_cancels_on_the_server(database_url):
    conn = await Connection.connect(database_url, autocommit=True)
    pid = conn.info.backend_pid
    with trio.move_on_after(0.3) as scope:
        await conn.execute("select pg_sleep(30)")
    assert scope.cancelled_caught
    assert conn.interrupted
    with trio.fail_after(5):
        while await backend_query(database_url, pid) is not None:
            await trio.sleep(0.05)
    with trio.fail_after(5):
        while not conn.closed:  # closed by the task that sent the cancel
            await trio.sleep(0.01)


async def test_statement_timeout_raises_query_canceled(database_url):
    async with await Connection.connect(database_url, autocommit=True) as conn:
        await conn.execute("set statement_timeout = 100")
        with pytest.raises(psycopg.errors.QueryCanceled):
            await conn.execute("select pg_sleep(5)")
        # the connection stays usable after a server-side timeout
        cursor = await conn.execute("select 1")
        assert await cursor.fetchone() == (1,)


async def test_terminated_backend_is_seen_without_a_round_trip(database_url):
    conn = await Connection.connect(database_url, autocommit=True)
    assert conn.looks_alive()
    async with await Connection.connect(database_url, autocommit=True) as admin:
        await admin.execute("select pg_terminate_backend(%s)", [conn.info.backend_pid])
    with trio.fail_after(5):
        while conn.looks_alive():
            await trio.sleep(0.02)
    with pytest.raises(psycopg.OperationalError):
        await conn.execute("select 1")
    await conn.close()
    async with await Connection.connect(database_url, autocommit=True) as again:
        assert await (await again.execute("select 1")).fetchone() == (1,)


async def test_connect_timeout_against_a_black_hole(proxied_url, fault_proxy):
    fault_proxy.set_mode("drop")
    started = trio.current_time()
    with pytest.raises(psycopg.errors.ConnectionTimeout):
        await Connection.connect(proxied_url, timeout=0.5)
    assert trio.current_time() - started < 2


async def test_connect_refused_when_the_server_is_down(proxied_url, fault_proxy):
    fault_proxy.down()
    with pytest.raises(psycopg.OperationalError):
        await Connection.connect(proxied_url, timeout=2)
    await fault_proxy.up()
    async with await Connection.connect(proxied_url, autocommit=True) as conn:
        assert await (await conn.execute("select 1")).fetchone() == (1,)


async def test_connection_cut_mid_query(proxied_url, fault_proxy):
    conn = await Connection.connect(proxied_url, autocommit=True)

    async def cut_soon() -> None:
        await trio.sleep(0.3)
        fault_proxy.cut()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(cut_soon)
        with pytest.raises(psycopg.OperationalError):
            await conn.execute("select pg_sleep(5)")
    assert not conn.looks_alive()
    await conn.close()


async def test_notifications(database_url):
    async with await Connection.connect(database_url, autocommit=True) as listener:
        await listener.execute("listen svc_test")
        async with await Connection.connect(database_url, autocommit=True) as sender:
            await sender.execute("notify svc_test, 'hello'")
        received = [n async for n in listener.notifies(timeout=5, stop_after=1)]
        assert [(n.channel, n.payload) for n in received] == [("svc_test", "hello")]
        # a timeout with nothing received ends the iteration
        assert [n async for n in listener.notifies(timeout=0.1)] == []
