"""SCHEMA_CHANGED (contract of issue 20): in prod mode (no schema watcher), a statement failing because the
database no longer has what the snapshot was compiled against (a column, table or function renamed, a column
dropped by plain DDL) answers 503 `SCHEMA_CHANGED`, in GraphQL (`errors[0].extensions.code`) and REST (the problem
document's `code`); the service then re-reads the catalog by itself, once for many concurrent failures (`/health`
`schema.generation` goes up by exactly one), so the new names work a moment later; with `reload.enabled` off it
keeps answering 503 and the generation stays.

Every test puts the fixture's names back afterwards (the `restored` fixture), so each starts from `replicas.sql`."""

from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
import trio

from tests.support.service import running_service

DATABASE_FIXTURES = ["replicas.sql"]

BODIES = "query Bodies { notes { body } }"
TEXT_BODIES = "query TextBodies { notes { textBody } }"
RENAME_COLUMN = "alter table app_public.notes rename column body to text_body"
#: Puts back whatever a test renamed, added or dropped.
RESTORE = """
do $$
begin
  if to_regclass('app_public.memos') is not null then
    alter table app_public.memos rename to notes;
  end if;
  if exists (select from information_schema.columns
             where table_schema = 'app_public' and table_name = 'notes' and column_name = 'text_body') then
    alter table app_public.notes rename column text_body to body;
  end if;
  alter table app_public.notes drop column if exists extra;
  if to_regprocedure('app_public.in_standby()') is not null then
    alter function app_public.in_standby() rename to in_recovery;
  end if;
end
$$
"""


def sql(database_url: str, statement: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]


async def ddl(database_url: str, statement: str) -> None:
    """Plain DDL, as an operator's migration would run it (off the Trio thread, which also runs the service)."""
    await trio.to_thread.run_sync(sql, database_url, statement)


@pytest.fixture
def restored(database_url: str) -> Iterator[str]:
    sql(database_url, RESTORE)
    yield database_url
    sql(database_url, RESTORE)


async def generation(client: httpx.AsyncClient) -> int:
    return (await client.get("/health")).json()["schema"]["generation"]


async def generation_becomes(client: httpx.AsyncClient, expected: int, timeout: float = 10) -> None:
    try:
        with trio.fail_after(timeout):
            while await generation(client) != expected:
                await trio.sleep(0.1)
    except trio.TooSlowError:
        raise AssertionError(
            f"schema generation not {expected} after {timeout} s: {await generation(client)}"
        ) from None


async def query(client: httpx.AsyncClient, text: str) -> httpx.Response:
    return await client.post("/graphql", json={"query": text})


def assert_schema_changed(response: httpx.Response) -> None:
    """A 503 SCHEMA_CHANGED answer, of GraphQL or of REST."""
    where = f"{response.request.method} {response.request.url}"
    assert response.status_code == 503, (where, response.status_code, response.text)
    if response.request.url.path == "/graphql":
        assert response.json()["errors"][0]["extensions"]["code"] == "SCHEMA_CHANGED", (where, response.text)
    else:
        assert response.headers["content-type"].startswith("application/problem+json"), (where, response.headers)
        assert response.json()["code"] == "SCHEMA_CHANGED", (where, response.text)


async def data_once_reloaded(client: httpx.AsyncClient, text: str, timeout: float = 10) -> Any:
    """The data of a query on the new names, polled until the service has re-read the catalog."""
    response = None
    try:
        with trio.fail_after(timeout):
            while (response := await query(client, text)).status_code != 200:
                await trio.sleep(0.1)
    except trio.TooSlowError:
        raise AssertionError(f"{text!r} still failing after {timeout} s: {response and response.text}") from None
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def rest_once_reloaded(client: httpx.AsyncClient, path: str, timeout: float = 10) -> Any:
    response = None
    try:
        with trio.fail_after(timeout):
            while (response := await client.get(path)).status_code != 200:
                await trio.sleep(0.1)
    except trio.TooSlowError:
        raise AssertionError(f"GET {path} still failing after {timeout} s: {response and response.text}") from None
    return response.json()


async def test_a_renamed_column_answers_schema_changed_then_the_new_name_works(tmp_path, restored):
    async with running_service(tmp_path, restored) as service:
        client = service.client
        before = await query(client, BODIES)
        assert before.status_code == 200 and {"body": "first"} in before.json()["data"]["notes"], before.text
        assert await generation(client) == 1
        await ddl(restored, RENAME_COLUMN)

        assert_schema_changed(await query(client, BODIES))
        data = await data_once_reloaded(client, TEXT_BODIES)
        assert {"textBody": "first"} in data["notes"]
        assert await generation(client) == 2
        # The new snapshot has no `body`: the old query is now refused before any SQL, not a 503.
        assert (await query(client, BODIES)).status_code == 400


async def test_rest_answers_schema_changed_then_serves_the_new_name(tmp_path, restored):
    async with running_service(tmp_path, restored) as service:
        client = service.client
        before = await client.get("/rest/notes")
        assert before.status_code == 200 and "body" in before.json()[0], before.text
        await ddl(restored, RENAME_COLUMN)

        assert_schema_changed(await client.get("/rest/notes"))
        rows = await rest_once_reloaded(client, "/rest/notes")
        assert "textBody" in rows[0] and "body" not in rows[0], rows
        assert await generation(client) == 2


async def test_a_renamed_table_and_a_renamed_function_answer_schema_changed(tmp_path, restored):
    async with running_service(tmp_path, restored) as service:
        client = service.client
        assert (await query(client, "{ notes { body } inRecovery }")).status_code == 200
        await ddl(restored, "alter table app_public.notes rename to memos")
        await ddl(restored, "alter function app_public.in_recovery() rename to in_standby")

        assert_schema_changed(await query(client, BODIES))
        assert_schema_changed(await client.get("/rest/notes"))
        data = await data_once_reloaded(client, "{ memos { body } inStandby }")
        assert {"body": "first"} in data["memos"] and data["inStandby"] is False
        assert (await client.get("/rest/memos")).status_code == 200
        called = await client.get("/rest/rpc/in_standby")
        assert called.status_code == 200 and called.json() is False
        assert await generation(client) == 2


async def test_a_function_renamed_under_a_rest_call_answers_schema_changed(tmp_path, restored):
    async with running_service(tmp_path, restored) as service:
        client = service.client
        assert (await client.get("/rest/rpc/in_recovery")).status_code == 200
        await ddl(restored, "alter function app_public.in_recovery() rename to in_standby")

        assert_schema_changed(await client.get("/rest/rpc/in_recovery"))
        assert await rest_once_reloaded(client, "/rest/rpc/in_standby") is False
        assert (await client.get("/rest/rpc/in_recovery")).status_code == 404


async def test_a_dropped_column_answers_schema_changed(tmp_path, restored):
    await ddl(restored, "alter table app_public.notes add column extra text")
    async with running_service(tmp_path, restored) as service:
        client = service.client
        assert (await query(client, "{ notes { body extra } }")).status_code == 200
        await ddl(restored, "alter table app_public.notes drop column extra")

        assert_schema_changed(await query(client, "{ notes { body extra } }"))
        # A query without `extra` works on either snapshot: wait for the new one by its generation.
        await generation_becomes(client, 2)
        assert (await query(client, "{ notes { body extra } }")).status_code == 400
        assert {"body": "first"} in (await data_once_reloaded(client, BODIES))["notes"]


async def test_many_concurrent_failures_reload_the_schema_once(tmp_path, restored):
    async with running_service(tmp_path, restored) as service:
        client = service.client
        assert (await query(client, BODIES)).status_code == 200
        assert (await client.get("/rest/notes")).status_code == 200
        start = await generation(client)
        await ddl(restored, RENAME_COLUMN)

        answers: list[httpx.Response] = []

        async def read(kind: str) -> None:
            answers.append(await (query(client, BODIES) if kind == "graphql" else client.get("/rest/notes")))

        async with trio.open_nursery() as nursery:
            for kind in ["graphql", "rest"] * 4:
                nursery.start_soon(read, kind)

        changed = [answer for answer in answers if answer.status_code == 503]
        for answer in changed:
            assert_schema_changed(answer)
        # A request that started after the reload finished is planned on the new names: the GraphQL one is
        # refused (no `body`), the REST one is served.
        late = [answer for answer in answers if answer.status_code != 503]
        assert all(answer.status_code in (200, 400) for answer in late), [(a.status_code, a.text) for a in late]
        assert len(changed) >= 4, [(answer.status_code, answer.text) for answer in answers]

        await data_once_reloaded(client, TEXT_BODIES)
        assert await generation(client) == start + 1
        await trio.sleep(1.5)  # a second reload queued by the other failures would have happened by now
        assert await generation(client) == start + 1


async def test_with_reload_disabled_it_stays_schema_changed(tmp_path, restored):
    async with running_service(tmp_path, restored, {"reload": {"enabled": False}}) as service:
        client = service.client
        assert (await query(client, BODIES)).status_code == 200
        await ddl(restored, RENAME_COLUMN)

        for _ in range(3):
            assert_schema_changed(await query(client, BODIES))
            assert_schema_changed(await client.get("/rest/notes"))
            await trio.sleep(0.5)
        assert await generation(client) == 1
        assert (await query(client, TEXT_BODIES)).status_code == 400  # the snapshot still has the old names
        assert (await client.get("/ready")).status_code == 200
