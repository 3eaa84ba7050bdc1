"""The Trio connection pool: bounded size, pending count, per-connection setup, broken connections replaced."""

import secrets

import psycopg
import pytest
import trio
from psycopg import sql

from svc.db import Connection, ConnectionSettings, open_pool
from svc.db._wire import compiled, turn


def settings(**overrides) -> ConnectionSettings:
    values = {"schemas": ("app_public",), "statement_cache": 512, "application_name": f"svc_t_{secrets.token_hex(3)}"}
    return ConnectionSettings(**{**values, **overrides})


async def backends(url: str, application_name: str) -> int:
    async with await Connection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "select count(*) from pg_stat_activity where application_name = %s", [application_name]
        )
        return (await cursor.fetchone())[0]


async def test_size_bounds_connections_and_waiters_are_pending(database_url):
    config = settings()
    async with open_pool(database_url, config, size=2) as pool:
        release = trio.Event()
        holding = 0

        async def hold() -> None:
            nonlocal holding
            async with pool.connection() as conn:
                holding += 1
                await conn.execute("select 1")
                await release.wait()

        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(hold)
            with trio.fail_after(5):
                while holding < 2:
                    await trio.sleep(0.01)
            await trio.sleep(0.1)
            stats = pool.stats()
            assert (stats.used, stats.pending, stats.idle) == (2, 3, 0)
            assert await backends(database_url, config.application_name) == 2
            release.set()
        stats = pool.stats()
        assert (stats.used, stats.pending, stats.idle) == (0, 0, 2)


async def test_connections_are_reused(database_url):
    async with open_pool(database_url, settings(), size=3) as pool:
        pids = set()
        for _ in range(5):
            async with pool.connection() as conn:
                pids.add(conn.info.backend_pid)
        assert len(pids) == 1


async def test_setup_search_path_and_statement_timeout(database_url):
    async with await Connection.connect(database_url, autocommit=True) as admin:
        available = await (await admin.execute("select name from pg_available_extensions")).fetchall()
        extension = next(name for (name,) in available if name in ("pg_trgm", "citext", "ltree", "vector"))
        await admin.execute("create schema if not exists extensions")
        await admin.execute(
            sql.SQL("create extension if not exists {} with schema extensions").format(sql.Identifier(extension))
        )
    async with open_pool(
        database_url, settings(schemas=("app_public", "other"), statement_timeout_ms=1500), size=1
    ) as pool:
        async with pool.connection() as conn:
            path = await (await conn.execute("show search_path")).fetchone()
            timeout = await (await conn.execute("show statement_timeout")).fetchone()
    assert path == ("app_public, other, extensions",)
    assert timeout == ("1500ms",)


async def test_a_lower_statement_timeout_of_the_database_or_role_applies_first(database_url):
    dbname = psycopg.conninfo.conninfo_to_dict(database_url)["dbname"]
    async with await Connection.connect(database_url, autocommit=True) as admin:
        await admin.execute(sql.SQL("alter database {} set statement_timeout = 200").format(sql.Identifier(dbname)))
    try:
        async with open_pool(database_url, settings(statement_timeout_ms=30000), size=1) as pool:
            async with pool.connection() as conn:
                assert await (await conn.execute("show statement_timeout")).fetchone() == ("200ms",)
        async with open_pool(database_url, settings(statement_timeout_ms=100), size=1) as pool:
            async with pool.connection() as conn:
                assert await (await conn.execute("show statement_timeout")).fetchone() == ("100ms",)
    finally:
        async with await Connection.connect(database_url, autocommit=True) as admin:
            await admin.execute(sql.SQL("alter database {} reset statement_timeout").format(sql.Identifier(dbname)))


@pytest.mark.parametrize(("cache", "prepared"), [(512, 1), (0, 0)])
async def test_statement_cache(database_url, cache, prepared):
    async with open_pool(database_url, settings(statement_cache=cache), size=1) as pool:
        async with pool.connection() as conn:
            await turn(conn, [compiled(conn.raw, "select %(a)s::int + 1", {"a": 1})])
            count = await conn.execute(
                "select count(*) from pg_prepared_statements where statement like 'select $1::int + 1'"
            )
            assert await count.fetchone() == (prepared,)


async def test_terminated_connections_are_replaced_without_an_error(database_url):
    config = settings()
    async with open_pool(database_url, config, size=3) as pool:
        async with trio.open_nursery() as nursery:  # warm three connections
            for _ in range(3):
                nursery.start_soon(_use_briefly, pool)
        assert pool.stats().idle == 3
        async with await Connection.connect(database_url, autocommit=True) as admin:
            await admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity where application_name = %s",
                [config.application_name],
            )
        await trio.sleep(0.2)
        async with pool.connection() as conn:
            assert await (await conn.execute("select 1")).fetchone() == (1,)
        assert pool.stats().idle == 1


async def _use_briefly(pool) -> None:
    async with pool.connection() as conn:
        await conn.execute("select pg_sleep(0.1)")


async def test_an_interrupted_connection_is_discarded_and_its_statement_cancelled(database_url):
    config = settings()
    async with open_pool(database_url, config, size=1) as pool:
        with trio.move_on_after(0.3):
            async with pool.connection() as conn:
                await conn.execute("select pg_sleep(30)")
        assert conn.interrupted
        assert pool.stats().idle == 0
        with trio.fail_after(5):
            while await backends(database_url, config.application_name):
                await trio.sleep(0.05)
        async with pool.connection() as fresh:
            assert fresh is not conn
            assert await (await fresh.execute("select 1")).fetchone() == (1,)


async def test_a_connection_left_inside_a_transaction_is_not_reused(database_url):
    async with open_pool(database_url, settings(), size=1) as pool:
        async with pool.connection() as conn:
            await conn.execute("begin")
        async with pool.connection() as other:
            assert other is not conn
        assert conn.closed


async def test_health_check_drops_idle_connections_that_do_not_answer(proxied_url, fault_proxy, monkeypatch):
    monkeypatch.setattr("svc.db._pool.HEALTH_CHECK_INTERVAL", 0.0)
    monkeypatch.setattr("svc.db._pool._PING_TIMEOUT", 0.3)
    async with open_pool(proxied_url, settings(), size=2) as pool:
        async with pool.connection():
            pass
        assert pool.stats().idle == 1
        fault_proxy.set_mode("drop")
        await pool.check()
        assert pool.stats().idle == 0
        fault_proxy.set_mode("pass")
        await pool.check()
        async with pool.connection() as conn:
            assert await (await conn.execute("select 1")).fetchone() == (1,)
        await pool.check()
        assert pool.stats().idle == 1


async def test_connect_failure_frees_the_slot(proxied_url, fault_proxy):
    fault_proxy.down()
    async with open_pool(proxied_url, settings(connect_timeout=1), size=1) as pool:
        for _ in range(2):
            with pytest.raises(psycopg.OperationalError):
                async with pool.connection():
                    pass
        await fault_proxy.up()
        async with pool.connection() as conn:
            assert await (await conn.execute("select 1")).fetchone() == (1,)
        assert pool.stats().used == 0


async def test_an_error_raised_inside_the_pool_block_comes_out_as_itself(database_url):
    with pytest.raises(LookupError, match="raised in the block"):
        async with open_pool(database_url, settings(), size=1):
            raise LookupError("raised in the block")
