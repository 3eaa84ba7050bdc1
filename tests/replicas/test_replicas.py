"""Read replicas (contract of issue 20) against a real streaming standby of the tests' primary: GraphQL queries, REST
reads, STABLE function calls and subscription rounds are served by the standby, writes by the primary; every
committed write answers its `X-WAL-Position`, reads never do; a read carrying `X-Min-WAL-Position` is served by the
standby only once it has replayed that far, else by the primary, so it always sees the write (read-your-writes), and
a malformed one is BAD_USER_INPUT; `/health` reports the replica (`healthy`, `unreachable` while stopped, `lagging`
behind `max_lag` or `max_lag_bytes`, `not_standby` for a server that is not in recovery) and the standby leaves and
rejoins the rotation with it, readers never seeing an error and `/ready` staying 200; `/metrics` counts the replica
pool's connections.

Which server ran a statement is told by the statement itself: `pg_is_in_recovery()` is true only on the standby
(`inRecovery` in GraphQL, `/rest/rpc/in_recovery` in REST). The standby's replay is paused to make it lag behind."""

import json
import re
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import trio
from prometheus_client.parser import text_string_to_metric_families
from psycopg.conninfo import conninfo_to_dict
from trio_websocket import open_websocket_url

from tests.support.service import Service, merge, running_service
from tests.support.standby import Standby

DATABASE_FIXTURES = ["replicas.sql"]

#: PostgreSQL's text form of an LSN, as `pg_lsn` prints it.
LSN = re.compile(r"[0-9A-F]{1,8}/[0-9A-F]{1,8}")
#: A health round a second, so the tests see the rotation change within a few seconds.
SETTINGS: dict[str, Any] = {"database": {"replicas": {"health_interval": "1s"}}}

IN_RECOVERY = "query InRecovery { inRecovery }"
SEEN = "query Seen($body: String!) { inRecovery notes(condition: {body: $body}) { body } }"
WRITE = "mutation Write($body: String!) { noteWrittenInRecovery(body: $body) }"
CREATE = "mutation Create($body: String!) { createNote(input: {body: $body}) { note { rowId body } } }"


@asynccontextmanager
async def replicated(
    directory: Path, database_url: str, standby: Standby, settings: dict[str, Any] | None = None
) -> AsyncIterator[Service]:
    """The service with the standby as its one replica (`replica_1`)."""
    environ = {"DATABASE_REPLICA_URLS": standby.url_for(database_url)}
    async with running_service(directory, database_url, merge(SETTINGS, settings or {}), environ=environ) as service:
        yield service


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Blocking work (psycopg, pg_ctl) off the Trio thread, which also runs the service under test."""
    return await trio.to_thread.run_sync(function, *args)


def sql(url: str, statement: str, params: Any = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def insert_lsn(database_url: str) -> str:
    return sql(database_url, "select pg_current_wal_insert_lsn()::text")[0][0]


def lsn_after(database_url: str, later: str, earlier: str) -> bool:
    return sql(database_url, "select pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn) > 0", (later, earlier))[0][0]


def token() -> str:
    return secrets.token_hex(4)


async def graphql(client: httpx.AsyncClient, query: str, variables: dict | None = None, **headers: str) -> Any:
    """The `data` of a GraphQL operation that must succeed."""
    response = await client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def on_standby(client: httpx.AsyncClient, headers: dict[str, str] | None = None) -> bool:
    """Whether a GraphQL query was served by the standby."""
    return (await graphql(client, IN_RECOVERY, **(headers or {})))["inRecovery"]


async def rest_on_standby(client: httpx.AsyncClient, headers: dict[str, str] | None = None) -> bool:
    """Whether a REST call of a STABLE function with GET was served by the standby."""
    response = await client.get("/rest/rpc/in_recovery", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def seen(client: httpx.AsyncClient, body: str, headers: dict[str, str] | None = None) -> tuple[bool, list]:
    """Where one GraphQL statement ran, and the bodies it saw of notes with `body`."""
    data = await graphql(client, SEEN, {"body": body}, **(headers or {}))
    return data["inRecovery"], [note["body"] for note in data["notes"]]


async def rest_rows(client: httpx.AsyncClient, body: str, headers: dict[str, str] | None = None) -> list[str]:
    response = await client.get("/rest/notes", params={"filter[body][eq]": body}, headers=headers)
    assert response.status_code == 200, response.text
    return [row["body"] for row in response.json()]


async def replicas(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    response = await client.get("/health")
    assert response.status_code == 200, response.text
    return response.json()["replicas"]


async def replica_becomes(client: httpx.AsyncClient, state: str, timeout: float = 10) -> dict[str, Any]:
    """The `/health` entry of `replica_1` once its state is `state` (fails the test after `timeout` seconds)."""
    entry: dict[str, Any] = {}
    try:
        with trio.fail_after(timeout):
            while True:
                (entry,) = await replicas(client)
                if entry["state"] == state:
                    return entry
                await trio.sleep(0.1)
    except trio.TooSlowError:
        raise AssertionError(f"replica_1 not {state!r} within {timeout} s; last: {entry}") from None


async def until_on_standby(client: httpx.AsyncClient, timeout: float = 10) -> None:
    """Reads come from the standby again (the pool may first drop connections the standby's restart broke)."""
    with trio.fail_after(timeout):
        while not await on_standby(client):
            await trio.sleep(0.1)


def as_url(database_url: str) -> str:
    params = conninfo_to_dict(database_url)
    host, port = params.get("host") or "127.0.0.1", params.get("port") or "5432"
    return f"postgresql://{quote(params.get('user') or 'postgres')}@{host}:{port}/{quote(params['dbname'])}"


# Routing.


async def test_reads_are_served_by_the_standby_and_writes_by_the_primary(tmp_path, database_url, standby):
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        assert await on_standby(client) is True
        assert await rest_on_standby(client) is True
        listed = await client.get("/rest/notes")
        assert listed.status_code == 200 and {"first", "second", "third"} <= {r["body"] for r in listed.json()}
        get = await client.get("/graphql", params={"query": IN_RECOVERY})
        assert get.status_code == 200 and get.json() == {"data": {"inRecovery": True}}

        # A VOLATILE function is a write: the primary runs it (a standby could not insert at all).
        body = f"written-{token()}"
        assert (await graphql(client, WRITE, {"body": body})) == {"noteWrittenInRecovery": False}
        posted = await client.post("/rest/rpc/note_written_in_recovery", json={"args": {"body": body}})
        assert posted.status_code == 200 and posted.json() is False
        created = await graphql(client, CREATE, {"body": body})
        assert created["createNote"]["note"]["body"] == body
        assert sql(database_url, "select count(*) from app_public.notes where body = %s", (body,)) == [(3,)]


async def test_a_read_needing_the_session_s_functions_is_served_by_the_primary(tmp_path, database_url, standby):
    """An estimated count EXPLAINs through a temporary function each primary connection creates; a standby cannot
    create it, so such a read goes to the primary, while the same read without it goes to the standby."""
    estimated = "{ inRecovery notesConnection(first: 1) { totalCount(estimate: true) } }"
    exact = "{ inRecovery notesConnection(first: 1) { totalCount } }"
    async with replicated(tmp_path, database_url, standby) as service:
        await replica_becomes(service.client, "healthy")
        data = await graphql(service.client, estimated)
        assert data["inRecovery"] is False and data["notesConnection"]["totalCount"] >= 1
        data = await graphql(service.client, exact)
        assert data["inRecovery"] is True and data["notesConnection"]["totalCount"] >= 3


async def test_without_replicas_the_primary_serves_reads(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        assert await on_standby(service.client) is False
        assert await rest_on_standby(service.client) is False
        health = (await service.client.get("/health")).json()
        assert health["status"] == "ok" and "replicas" not in health


async def test_writes_answer_their_wal_position_and_reads_do_not(tmp_path, database_url, standby):
    for environ in ({}, {"DATABASE_REPLICA_URLS": standby.url_for(database_url)}):
        async with running_service(tmp_path, database_url, SETTINGS, environ=environ) as service:
            client = service.client
            if environ:
                await replica_becomes(client, "healthy")
            body = f"positioned-{token()}"
            before = await in_thread(insert_lsn, database_url)
            created = await client.post("/rest/notes", json={"body": body})
            writes = [  # in the order they ran
                created,
                await client.post("/graphql", json={"query": WRITE, "variables": {"body": body}}),
                await client.post("/graphql", json={"query": CREATE, "variables": {"body": body}}),
                await client.post("/rest/rpc/note_written_in_recovery", json={"args": {"body": body}}),
                await client.patch(f"/rest/notes/{created.json()['id']}", json={"body": body + "!"}),
                await client.delete(f"/rest/notes/{created.json()['id']}"),
            ]
            after = await in_thread(insert_lsn, database_url)
            for response in writes:
                where = f"{response.request.method} {response.request.url.path} ({environ or 'no replicas'})"
                assert response.status_code in (200, 201), (where, response.text)
                if response.request.url.path == "/graphql":
                    assert "errors" not in response.json(), (where, response.text)
                position = response.headers.get("x-wal-position")
                assert position is not None and LSN.fullmatch(position), (where, position)
                # The position of that write's commit: after the WAL of before it, not beyond the WAL there is.
                assert await in_thread(lsn_after, database_url, position, before), (where, position, before)
                assert not await in_thread(lsn_after, database_url, position, after), (where, position, after)
            positions = [response.headers["x-wal-position"] for response in writes]
            for earlier, later in zip(positions, positions[1:], strict=False):
                assert await in_thread(lsn_after, database_url, later, earlier), positions

            reads = [
                await client.post("/graphql", json={"query": IN_RECOVERY}),
                await client.get("/graphql", params={"query": IN_RECOVERY}),
                await client.get("/rest/notes"),
                await client.get("/rest/rpc/in_recovery"),
            ]
            for response in reads:
                assert response.status_code == 200, response.text
                assert "x-wal-position" not in response.headers, (response.request.url, response.headers)


async def test_subscription_rounds_are_served_by_the_standby(tmp_path, database_url, standby):
    settings = {"subscriptions": {"enabled": True, "interval": "200ms"}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        await replica_becomes(service.client, "healthy")
        url = service.url.replace("http://", "ws://") + "/graphql"
        async with open_websocket_url(url, subprotocols=["graphql-transport-ws"]) as socket:
            with trio.fail_after(10):
                await socket.send_message(json.dumps({"type": "connection_init"}))
                assert json.loads(await socket.get_message()) == {"type": "connection_ack"}
                subscribe = {"query": "subscription InRecovery { inRecovery }"}
                await socket.send_message(json.dumps({"id": "1", "type": "subscribe", "payload": subscribe}))
                message = json.loads(await socket.get_message())
        assert message == {"id": "1", "type": "next", "payload": {"data": {"inRecovery": True}}}


# Read-your-writes.


async def test_a_read_after_a_write_sees_it_from_the_primary_until_the_standby_has_replayed_it(
    tmp_path, database_url, standby
):
    body = f"read-your-write-{token()}"
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        await in_thread(standby.pause_replay)
        try:
            written = await client.post("/rest/notes", json={"body": body})
            assert written.status_code == 201, written.text
            position = written.headers["x-wal-position"]
            after_write = {"X-Min-WAL-Position": position}

            # The standby has not replayed the write: with the position, the primary answers, and the row is there.
            assert await seen(client, body, after_write) == (False, [body])
            assert await rest_rows(client, body, after_write) == [body]
            assert await rest_on_standby(client, after_write) is False
            # Without it the standby answers, and does not have the row yet.
            assert await seen(client, body) == (True, [])
            assert await rest_rows(client, body) == []
            assert await rest_on_standby(client) is True

            await in_thread(standby.resume_replay)
            await in_thread(standby.wait_for, position)
            # Replayed: the standby serves the same read again (once the service knows how far it is), and every
            # answer on the way has the row, whoever served it.
            with trio.fail_after(10):
                while True:
                    on_the_standby, bodies = await seen(client, body, after_write)
                    assert bodies == [body], on_the_standby
                    if on_the_standby:
                        break
                    await trio.sleep(0.1)
            assert await rest_rows(client, body, after_write) == [body]
            assert await rest_on_standby(client, after_write) is True
        finally:
            await in_thread(standby.resume_replay)


async def test_a_read_of_a_column_the_standby_has_not_replayed_yet_is_served_by_the_primary(
    tmp_path, database_url, standby
):
    """The schema is read from the primary: a column it has and the lagging standby lacks is read on the primary,
    neither SCHEMA_CHANGED nor a reload (the database did not drift; the standby is behind)."""
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        await in_thread(standby.pause_replay)
        try:
            await in_thread(sql, database_url, "alter table app_public.notes add column mood text")
            await in_thread(sql, database_url, "notify svc_reload")
            with trio.fail_after(10):
                while (await client.get("/health")).json()["schema"]["generation"] < 2:
                    await trio.sleep(0.05)
            data = await graphql(client, "{ inRecovery notes { mood } }")
            assert data["inRecovery"] is False and data["notes"]
            assert await on_standby(client) is True  # the standby stays in the rotation for what it has
            assert (await client.get("/health")).json()["schema"]["generation"] == 2  # no reload for it
        finally:
            await in_thread(standby.resume_replay)
            await in_thread(sql, database_url, "alter table app_public.notes drop column if exists mood")


async def test_a_position_far_ahead_goes_to_the_primary_and_one_long_replayed_to_the_standby(
    tmp_path, database_url, standby
):
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        for ahead in ("FFFFFFFF/FFFFFFFF", "ffffffff/0"):
            assert await on_standby(client, {"X-Min-WAL-Position": ahead}) is False, ahead
            assert await rest_on_standby(client, {"X-Min-WAL-Position": ahead}) is False, ahead
        for behind in ("0/0", "0/1", "0/3a1b2c8"):
            assert await on_standby(client, {"X-Min-WAL-Position": behind}) is True, behind
            assert await rest_on_standby(client, {"X-Min-WAL-Position": behind}) is True, behind


MALFORMED = ["nonsense", "0/", "/0", "0", "0/0/0", "123456789/0", "0/123456789", "G/0", "0x1/0", "-1/0", "0:3A1B2C8"]


async def test_a_malformed_min_wal_position_is_bad_user_input(tmp_path, database_url, standby):
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        for value in MALFORMED:
            headers = {"X-Min-WAL-Position": value}
            for path in ("/rest/notes", "/rest/rpc/in_recovery"):
                rest = await client.get(path, headers=headers)
                assert rest.status_code == 400, (value, path, rest.text)
                assert rest.headers["content-type"].startswith("application/problem+json"), (value, rest.headers)
                assert rest.json()["code"] == "BAD_USER_INPUT", (value, path, rest.text)
            graph = await client.post("/graphql", json={"query": IN_RECOVERY}, headers=headers)
            assert graph.status_code == 400, (value, graph.text)
            assert graph.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT", (value, graph.text)


# /health, and the rotation following it.


async def test_health_reports_the_replica_with_its_pool_and_replay_position(tmp_path, database_url, standby):
    settings = {"database": {"pool_size": 3, "replicas": {"pool_size": 2}}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        entry = await replica_becomes(service.client, "healthy")
        health = (await service.client.get("/health")).json()
        assert health["status"] == "ok" and health["pool"]["size"] == 3
    assert set(entry) >= {"name", "state", "pool", "replayPosition", "lagBytes", "lagSeconds", "checkedAt", "error"}
    assert entry["name"] == "replica_1"
    assert set(entry["pool"]) == {"size", "idle", "used", "pending"} and entry["pool"]["size"] == 2
    assert LSN.fullmatch(entry["replayPosition"]), entry
    assert isinstance(entry["lagBytes"], int) and entry["lagBytes"] >= 0, entry
    assert isinstance(entry["lagSeconds"], int | float) and entry["lagSeconds"] >= 0, entry
    assert entry["checkedAt"].endswith("Z") and datetime.fromisoformat(entry["checkedAt"].replace("Z", "+00:00"))
    assert entry["error"] is None

    # Without `replicas.pool_size`, a replica pool is as large as the primary's.
    async with replicated(tmp_path, database_url, standby, {"database": {"pool_size": 3}}) as service:
        entry = await replica_becomes(service.client, "healthy")
    assert entry["pool"]["size"] == 3


async def test_a_stopped_standby_leaves_the_rotation_and_returns(tmp_path, database_url, standby):
    async with replicated(tmp_path, database_url, standby) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        assert await on_standby(client) is True
        await in_thread(standby.stop)
        try:
            # Readers see no error: a read the standby cannot serve is served by the primary.
            for _ in range(5):
                assert await on_standby(client) is False
                assert await rest_on_standby(client) is False
            down = await replica_becomes(client, "unreachable", timeout=5)
            assert down["error"], down
            assert (await client.get("/ready")).status_code == 200
            health = await client.get("/health")
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert await on_standby(client) is False
        finally:
            await in_thread(standby.start)
        back = await replica_becomes(client, "healthy", timeout=15)
        assert back["error"] is None
        await until_on_standby(client)
        assert await rest_on_standby(client) is True


async def test_a_read_that_finds_the_standby_gone_has_it_checked_at_once(tmp_path, database_url, standby):
    # Health rounds 5 s apart: the replica is found unreachable long before the next round, because a read failed.
    settings = {"database": {"replicas": {"health_interval": "5s"}}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        client = service.client
        checked = (await replica_becomes(client, "healthy"))["checkedAt"]
        with trio.fail_after(7):  # just after a round, so the next one is 5 s away
            while (entry := (await replicas(client))[0])["checkedAt"] == checked:
                await trio.sleep(0.05)
        assert entry["state"] == "healthy", entry
        assert await on_standby(client) is True
        await in_thread(standby.stop)
        try:
            assert await on_standby(client) is False
            await replica_becomes(client, "unreachable", timeout=2.5)
            assert await rest_on_standby(client) is False
        finally:
            await in_thread(standby.start)


async def test_a_lagging_standby_leaves_the_rotation_until_it_catches_up(tmp_path, database_url, standby):
    settings = {"database": {"replicas": {"max_lag": "1s"}}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        assert await on_standby(client) is True
        await in_thread(standby.pause_replay)
        try:
            async with trio.open_nursery() as nursery:

                async def write_on_the_primary() -> None:  # a primary under writes, which the standby does not apply
                    while True:
                        await in_thread(sql, database_url, "insert into app_public.notes (body) values ('lag')")
                        await trio.sleep(0.2)

                nursery.start_soon(write_on_the_primary)
                lagging = await replica_becomes(client, "lagging", timeout=10)
                nursery.cancel_scope.cancel()
            assert lagging["lagSeconds"] >= 1 and lagging["lagBytes"] > 0, lagging
            assert await on_standby(client) is False
            assert await rest_on_standby(client) is False
            assert (await client.get("/ready")).status_code == 200
        finally:
            await in_thread(standby.resume_replay)
        await replica_becomes(client, "healthy", timeout=10)
        await until_on_standby(client, timeout=5)


async def test_a_standby_more_bytes_behind_than_max_lag_bytes_is_lagging(tmp_path, database_url, standby):
    settings = {"database": {"replicas": {"max_lag_bytes": 1_000_000}}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        client = service.client
        await replica_becomes(client, "healthy")
        await in_thread(standby.pause_replay)
        try:
            # About 3 MB of WAL the standby receives and does not apply.
            statement = "insert into app_public.notes (body) select repeat('x', 1000) from generate_series(1, 2000)"
            await in_thread(sql, database_url, statement)
            lagging = await replica_becomes(client, "lagging", timeout=10)
            assert lagging["lagBytes"] > 1_000_000, lagging
            assert await on_standby(client) is False
        finally:
            await in_thread(standby.resume_replay)
            await in_thread(sql, database_url, "delete from app_public.notes where length(body) = 1000")
        await replica_becomes(client, "healthy", timeout=10)
        await until_on_standby(client, timeout=5)


async def test_a_replica_url_that_is_not_a_standby_stays_out_of_the_rotation(tmp_path, database_url):
    # The primary itself named as a replica: reachable, but not in recovery.
    environ = {"DATABASE_REPLICA_URLS": as_url(database_url)}
    async with running_service(tmp_path, database_url, SETTINGS, environ=environ) as service:
        entry = await replica_becomes(service.client, "not_standby")
        assert entry["name"] == "replica_1"
        assert await on_standby(service.client) is False
        assert (await service.client.get("/ready")).status_code == 200


async def test_metrics_count_the_replica_pool_s_connections(tmp_path, database_url, standby):
    settings = {"telemetry": {"metrics": {"enabled": True}}}
    async with replicated(tmp_path, database_url, standby, settings) as service:
        await replica_becomes(service.client, "healthy")
        assert await on_standby(service.client) is True  # the replica pool has a connection now
        scraped = await service.client.get("/metrics")
    assert scraped.status_code == 200, scraped.text
    (family,) = [f for f in text_string_to_metric_families(scraped.text) if f.name == "db_client_connection_count"]
    by_pool: dict[str, float] = {}
    for sample in family.samples:
        pool = sample.labels["db_client_connection_pool_name"]
        by_pool[pool] = by_pool.get(pool, 0) + sample.value
    assert set(by_pool) >= {"primary", "replica_1"}, by_pool
    assert by_pool["replica_1"] >= 1, by_pool
