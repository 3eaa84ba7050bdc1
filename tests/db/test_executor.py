"""The executor: one transaction per unit of work, session role and settings, statement comments, retries of
serialization failures and deadlocks, and the typed errors of SPEC "Errors"."""

import secrets

import psycopg
import pytest
import trio
from psycopg import sql

from svc.db import Connection, ConnectionSettings, Executor, Session, open_pool, sql_comment
from svc.errors import Code, SvcError

SETTINGS = ConnectionSettings(schemas=("app_public",), statement_cache=512)


async def fetch_one(tx, query, params=None):
    return await (await tx.execute(query, params)).fetchone()


@pytest.fixture
async def executor(database_url):
    async with open_pool(database_url, SETTINGS, size=4) as pool:
        yield Executor(pool)


async def test_commit_on_return_and_rollback_on_raise(executor):
    async def insert(tx):
        await tx.execute("insert into app_public.authors (name) values ('Kept')")

    async def insert_then_fail(tx):
        await tx.execute("insert into app_public.authors (name) values ('Gone')")
        raise RuntimeError("boom")

    await executor.run(insert)
    with pytest.raises(RuntimeError):
        await executor.run(insert_then_fail)

    async def names(tx):
        return await (await tx.execute("select name from app_public.authors where name in ('Kept', 'Gone')")).fetchall()

    assert await executor.run(names) == [("Kept",)]


async def test_session_role_and_settings_last_for_the_transaction(executor, database_url):
    role = f"svc_test_reader_{secrets.token_hex(3)}"
    async with await Connection.connect(database_url, autocommit=True) as admin:
        await admin.execute(sql.SQL("create role {} nologin").format(sql.Identifier(role)))
        await admin.execute(sql.SQL("grant usage on schema app_public to {}").format(sql.Identifier(role)))
    try:

        async def who(tx):
            return await fetch_one(tx, "select current_user, current_setting('app.user_id', true)")

        assert await executor.run(who, session=Session(role=role, settings={"app.user_id": "42"})) == (role, "42")
        outside = await executor.run(who)
        assert outside[0] != role and outside[1] in (None, "")
    finally:
        async with await Connection.connect(database_url, autocommit=True) as admin:
            await admin.execute(sql.SQL("drop owned by {}").format(sql.Identifier(role)))
            await admin.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


async def test_missing_privilege_is_permission_denied(executor, database_url):
    role = f"svc_test_nobody_{secrets.token_hex(3)}"
    async with await Connection.connect(database_url, autocommit=True) as admin:
        await admin.execute(sql.SQL("create role {} nologin").format(sql.Identifier(role)))
    try:
        with pytest.raises(SvcError) as info:
            await executor.run(lambda tx: tx.execute("select * from app_public.posts"), session=Session(role=role))
        assert info.value.code is Code.PERMISSION_DENIED
        assert info.value.status == 403
        assert "permission denied for schema app_public" in info.value.message
    finally:
        async with await Connection.connect(database_url, autocommit=True) as admin:
            await admin.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


async def test_statements_carry_a_structured_comment(executor, database_url):
    async def current_query(tx):
        return (await fetch_one(tx, "select current_query()"))[0]

    tags = {"api": "rest", "resource": "posts", "method": "GET"}
    assert await executor.run(current_query, tags=tags) == (
        "select current_query() /* api='rest',method='GET',resource='posts' */"
    )
    async with open_pool(database_url, SETTINGS, size=1) as pool:
        assert await Executor(pool, sql_comments=False).run(current_query, tags=tags) == "select current_query()"


async def test_a_query_given_as_bytes_carries_the_comment_too(executor):
    """A file of ours (the introspection query) runs as its bytes: the comment is appended to them, not composed."""

    async def current_query(tx):
        return (await fetch_one(tx, b"select current_query()"))[0]

    assert await executor.run(current_query, tags={"svc": "introspection"}) == (
        "select current_query() /* svc='introspection' */"
    )


def test_comment_values_cannot_end_the_comment_or_look_like_placeholders():
    comment = sql_comment({"operation": "x*/; drop table t; --%s'"}).as_string(None)
    assert comment == " /* operation='x_/__drop_table_t__--_s_' */"


async def test_serialization_failures_are_retried_until_the_work_succeeds(executor):
    await executor.run(lambda tx: tx.execute("create sequence if not exists app_public.attempts"))

    async def flaky(tx):
        # Sequences are not transactional, so the count survives the rollbacks of failed attempts.
        attempt = (await fetch_one(tx, "select nextval('app_public.attempts')"))[0]
        if attempt <= 3:
            await tx.execute("do $$ begin raise exception 'conflict' using errcode = '40001'; end $$")
        return attempt

    assert await executor.run(flaky) == 4


@pytest.mark.parametrize("sqlstate", ["40001", "40P01"])
async def test_retries_stop_after_ten(executor, sqlstate):
    await executor.run(lambda tx: tx.execute("create sequence if not exists app_public.failures"))
    await executor.run(lambda tx: tx.execute("select setval('app_public.failures', 1, false)"))

    async def always(tx):
        await tx.execute("select nextval('app_public.failures')")
        await tx.execute(f"do $$ begin raise exception 'conflict' using errcode = '{sqlstate}'; end $$")

    with pytest.raises(psycopg.errors.lookup(sqlstate)):
        await executor.run(always)
    assert await executor.run(lambda tx: fetch_one(tx, "select last_value from app_public.failures")) == (11,)


async def test_a_real_write_skew_is_retried(executor):
    """Two serializable transactions that each read what the other writes: one fails with 40001 and is retried."""
    await executor.run(lambda tx: tx.execute("create table if not exists app_public.doctors (name text, on_call bool)"))
    await executor.run(lambda tx: tx.execute("truncate app_public.doctors"))
    await executor.run(lambda tx: tx.execute("insert into app_public.doctors values ('a', true), ('b', true)"))
    both_read = trio.Event()
    readers = 0

    async def go_off_call(name: str) -> None:
        async def work(tx):
            nonlocal readers
            count = (await fetch_one(tx, "select count(*) from app_public.doctors where on_call"))[0]
            readers += 1
            if readers == 2:
                both_read.set()
            with trio.move_on_after(2):
                await both_read.wait()
            if count > 1:
                await tx.execute("update app_public.doctors set on_call = false where name = %s", [name])

        await executor.run(work, isolation="serializable")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(go_off_call, "a")
        nursery.start_soon(go_off_call, "b")
    on_call = await executor.run(lambda tx: fetch_one(tx, "select count(*) from app_public.doctors where on_call"))
    assert readers == 3  # one transaction ran twice
    assert on_call == (1,)


async def test_read_only_transactions_refuse_writes(executor):
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        await executor.run(lambda tx: tx.execute("insert into app_public.authors (name) values ('x')"), readonly=True)


async def test_statement_timeout(database_url):
    async with open_pool(database_url, ConnectionSettings(statement_timeout_ms=200), size=1) as pool:
        with pytest.raises(SvcError) as info:
            await Executor(pool).run(lambda tx: tx.execute("select pg_sleep(3)"))
    assert info.value.code is Code.STATEMENT_TIMEOUT
    assert (info.value.status, info.value.message) == (503, "the statement ran longer than the statement timeout")


async def test_connection_cut_mid_query_is_database_unavailable(proxied_url, fault_proxy):
    async with open_pool(proxied_url, SETTINGS, size=1) as pool:
        executor = Executor(pool)

        async def cut_soon() -> None:
            await trio.sleep(0.3)
            fault_proxy.cut()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cut_soon)
            with pytest.raises(SvcError) as info:
                await executor.run(lambda tx: tx.execute("select pg_sleep(5)"))
        assert info.value.code is Code.DATABASE_UNAVAILABLE
        assert info.value.status == 503 and info.value.retryable
        # the pool heals on the next request
        assert await executor.run(lambda tx: fetch_one(tx, "select 1")) == (1,)


async def test_unreachable_database_is_database_unavailable(proxied_url, fault_proxy):
    fault_proxy.down()
    async with open_pool(proxied_url, SETTINGS, size=1) as pool:
        with pytest.raises(SvcError) as info:
            await Executor(pool).run(lambda tx: tx.execute("select 1"))
    assert info.value.code is Code.DATABASE_UNAVAILABLE


async def test_a_write_is_planned_as_postgresql_chooses_and_a_read_for_its_values(database_url):
    """A writing unit's statements get a generic plan once PostgreSQL finds it costs no more (`auto`, after five
    custom plans); a read is planned for its values every time (the connection's `force_custom_plan`)."""
    insert = "insert into app_public.authors (name) select %(name)s::text returning id::text"
    read = "select name from app_public.authors where id = %(id)s::int"
    async with open_pool(database_url, SETTINGS, size=1) as pool:
        executor = Executor(pool)
        for n in range(8):
            values = {"name": f"Planned {n}"}
            (key,) = await executor.run(lambda tx, values=values: tx.fetch_raw(insert, values, last=True))
            assert await executor.fetch(read, {"id": int(key)}) == (f"Planned {n}".encode(),)
        async with pool.connection() as conn:
            cursor = await conn.execute(
                "select statement, generic_plans, custom_plans from pg_prepared_statements where name like 'svc_%'"
            )
            plans = {
                statement.split()[0]: (generic, custom)
                for statement, generic, custom in await cursor.fetchall()
                if "plan_cache_mode" not in statement  # the write's own setting of it
            }
            assert (await (await conn.execute("show plan_cache_mode")).fetchone())[0] == "force_custom_plan"
    assert plans["insert"] == (3, 5), plans
    assert plans["select"] == (0, 8), plans


async def test_a_read_may_say_how_it_is_planned_for_itself_alone(database_url):
    """A read with `plans` (`svc.sql.CompiledRead.plans`) is planned as it says, on its own or in a session's
    transaction: as PostgreSQL chooses (`auto`, a generic plan once five custom ones show it costs no more) or once
    (`force_generic_plan`). The setting ends with its turn, so the connection's other reads are still planned for
    their values, and nothing warns."""
    reads = {
        name: f"select (select name from app_public.authors where id = %(id)s::int) as {name}"
        for name in ("chosen", "custom", "in_session", "once")
    }
    session = Session(settings={"app.user_id": "42"})
    notices: list[str] = []
    async with open_pool(database_url, SETTINGS, size=1) as pool:
        async with pool.connection() as conn:
            conn.add_notice_handler(lambda notice: notices.append(notice.message_primary or ""))
        executor = Executor(pool)
        for n in range(8):
            await executor.fetch(reads["chosen"], {"id": n}, plans="auto")
            await executor.fetch(reads["custom"], {"id": n})
            await executor.fetch(reads["in_session"], {"id": n}, session=session, plans="auto")
            await executor.fetch(reads["once"], {"id": n}, plans="force_generic_plan")
        assert await executor.fetch("select current_setting('plan_cache_mode')", {}) == (b"force_custom_plan",)
        async with pool.connection() as conn:
            cursor = await conn.execute(
                "select statement, generic_plans, custom_plans from pg_prepared_statements where name like 'svc_%'"
            )
            plans = {
                name: (generic, custom)
                for statement, generic, custom in await cursor.fetchall()
                for name in reads
                if statement.endswith(f"as {name}")
            }
    assert plans == {"chosen": (3, 5), "custom": (0, 8), "in_session": (3, 5), "once": (8, 0)}, plans
    assert notices == []
