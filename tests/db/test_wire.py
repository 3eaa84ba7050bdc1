"""Statements in one pipeline turn (svc.db._wire, issue 22): several commands, one flush, one sync; compiled
statements prepared once per connection under names of their own; a failed command raises its error and leaves the
connection usable; a turn cut short interrupts the connection."""

import psycopg
import pytest
import trio

from svc.db import Connection
from svc.db._wire import Command, PreparedNames, compiled, failed_command, rows, turn


@pytest.fixture
async def conn(database_url):
    conn = await Connection.connect(database_url, autocommit=True, prepare_threshold=None)
    conn.prepared_names = PreparedNames(2)
    try:
        yield conn
    finally:
        await conn.close()


async def prepared(conn) -> list[str]:
    cursor = await conn.execute("select name from pg_prepared_statements order by prepare_time, name")
    return [row[0] for row in await cursor.fetchall()]


async def value(conn, text, params, *, prepare=True):
    (result,) = await turn(conn, [compiled(conn.raw, text, params, prepare=prepare)])
    return rows(conn.raw, result)


async def test_commands_of_a_turn_answer_in_order_and_text_comes_raw(conn):
    results = await turn(
        conn,
        [
            Command(b"begin"),
            compiled(
                conn.raw, "select %(a)s::int + %(b)s::int, %(a)s::text, '{}'::json", {"a": 1, "b": 2}, prepare=True
            ),
            Command(b"commit"),
        ],
    )
    assert [result.status for result in results][0] == psycopg.pq.ExecStatus.COMMAND_OK
    assert rows(conn.raw, results[1]) == [(3, b"1", b"{}")]
    assert conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE


async def test_percent_signs_and_a_name_used_twice(conn):
    assert await value(conn, "select 'a%%b' || %(x)s::text || %(x)s::text", {"x": "c"}) == [(b"a%bcc",)]
    with pytest.raises(psycopg.ProgrammingError):
        await value(conn, "select 'a%b'", {})


async def test_prepared_once_per_connection_and_the_oldest_closed(conn):
    for _ in range(3):
        assert await value(conn, "select %(a)s::int", {"a": 1}) == [(1,)]
    assert await prepared(conn) == ["svc_1"]
    await value(conn, "select %(a)s::int + 1", {"a": 1})
    await value(conn, "select %(a)s::int + 2", {"a": 1})  # the third: svc_1 is closed with the next turn
    await value(conn, "select %(a)s::int + 1", {"a": 1})
    assert await prepared(conn) == ["svc_2", "svc_3"]
    # Not prepared when the caller says so.
    await value(conn, "select %(a)s::int + 3", {"a": 1}, prepare=False)
    assert await prepared(conn) == ["svc_2", "svc_3"]


async def test_a_failed_command_raises_its_error_and_the_rest_are_skipped(conn):
    await conn.execute("create temporary table t (id int primary key)")
    insert = "insert into t values (%(id)s::int) returning id::text"
    with pytest.raises(psycopg.errors.UniqueViolation) as raised:
        await turn(
            conn,
            [
                Command(b"begin"),
                compiled(conn.raw, insert, {"id": 1}, prepare=True),
                compiled(conn.raw, insert, {"id": 1}, prepare=True),
                compiled(conn.raw, insert, {"id": 2}, prepare=True),
                Command(b"commit"),
            ],
        )
    assert failed_command(raised.value) == 2  # the second insert, counted among the turn's commands
    assert conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.INERROR
    await conn.execute("rollback")  # psycopg's rollback leaves the prepared statements alone
    # The statement used three times in the turn was prepared once.
    assert await prepared(conn) == ["svc_1"]
    assert await value(conn, insert, {"id": 3}) == [(b"3",)]
    assert await value(conn, "select count(*)::int from t", {}) == [(1,)]
    assert await prepared(conn) == ["svc_1", "svc_2"]


async def test_a_statement_whose_result_type_changed_is_prepared_again(conn):
    await conn.execute("create temporary table r (a int)")
    await conn.execute("insert into r values (1)")
    assert await value(conn, "select * from r", {}) == [(1,)]
    await conn.execute("alter table r add column b text")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        await value(conn, "select * from r", {})
    assert await value(conn, "select * from r", {}) == [(1, None)]


async def test_a_failed_preparation_raises_and_is_not_kept(conn):
    with pytest.raises(psycopg.errors.UndefinedTable):
        await value(conn, "select * from missing_table", {})
    assert await prepared(conn) == []
    await conn.execute("create temporary table missing_table (a int)")
    assert await value(conn, "select count(*)::int from missing_table", {}) == [(0,)]


async def test_a_parameter_larger_than_the_socket_buffers_goes_through(conn):
    big = "x" * 8_000_000
    assert await value(conn, "select length(%(big)s::text)", {"big": big}) == [(8_000_000,)]


async def test_a_cancelled_turn_interrupts_the_connection(conn, database_url):
    pid = conn.info.backend_pid
    with trio.move_on_after(0.3) as scope:
        await value(conn, "select pg_sleep(30)::text", {})
    assert scope.cancelled_caught and conn.interrupted
    async with await Connection.connect(database_url, autocommit=True) as admin:
        with trio.fail_after(5):
            while True:
                cursor = await admin.execute("select 1 from pg_stat_activity where pid = %s", [pid])
                if await cursor.fetchone() is None:
                    break
                await trio.sleep(0.05)


async def test_a_connection_numbered_above_1024_is_waited_on(database_url):
    """poll(2), not select(2), tells what is ready: select fails for a descriptor above 1024, a number a service with
    many WebSocket clients reaches."""
    import os
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        pytest.skip(f"the open-file limit ({soft}) is below 1,200")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        conn = await Connection.connect(database_url, autocommit=True, prepare_threshold=None)
        try:
            assert conn.pgconn.socket > 1024
            assert conn.looks_alive()
            assert await value(conn, "select %(a)s::int + 1", {"a": 1}, prepare=False) == [(2,)]
        finally:
            await conn.close()
    finally:
        for fd in held:
            os.close(fd)
