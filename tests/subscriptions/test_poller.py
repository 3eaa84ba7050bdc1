"""The subscription poller through the failures it must survive (SPEC "Subscriptions", ARCHITECTURE.md "Actors"):
a database outage (subscribers wait, then get what changed), a schema reload (subscriptions planned again; one
that no longer validates ends with its errors, the rest go on), a group whose statement fails for one subscriber's
variables (only that subscriber gets the error), and the service shutting down (every socket closed with 1001)."""

import os
import signal

import trio

from tests.subscriptions.support import INTERVAL, closed_with, raw_socket, sql, subscriptions_service
from tests.support.postgres import notify

DATABASE_FIXTURES = ["auth.sql"]
POST = "subscription($id: Int!) { post(rowId: $id) { title } }"


async def subscribe(socket, operation_id: str, query: str, variables: dict | None = None) -> dict:
    payload = {"query": query, **({"variables": variables} if variables else {})}
    await socket.send({"type": "subscribe", "id": operation_id, "payload": payload})
    return await socket.receive()


async def test_subscribers_wait_out_a_database_outage(tmp_path, proxied_url, fault_proxy, database_url):
    async with subscriptions_service(tmp_path, proxied_url) as service, raw_socket(service) as socket:
        await socket.init()
        assert (await subscribe(socket, "1", POST, {"id": 1}))["payload"]["data"]["post"] == {"title": "Hello"}
        fault_proxy.down()
        sql(database_url, "update app.posts set title = 'changed while down' where id = 1")
        with trio.move_on_after(6 * INTERVAL):  # nothing is sent while the database cannot be read: no errors
            message = await socket.receive()
            raise AssertionError(f"sent while the database was down: {message}")
        await fault_proxy.up()
        message = await socket.receive(timeout=10)
        assert message["payload"] == {"data": {"post": {"title": "changed while down"}}}


async def test_a_reload_replans_and_ends_what_no_longer_validates(tmp_path, database_url):
    sql(database_url, "create table app.drafts (id integer primary key, title text not null)")
    sql(database_url, "grant select on app.drafts to svc_test_visitor")
    sql(database_url, "insert into app.drafts values (1, 'draft')")
    async with subscriptions_service(tmp_path, database_url) as service, raw_socket(service) as socket:
        await socket.init()
        assert (await subscribe(socket, "drafts", "subscription { drafts { title } }"))["type"] == "next"
        assert (await subscribe(socket, "post", POST, {"id": 1}))["type"] == "next"
        generation = (await service.client.get("/health")).json()["schema"]["generation"]
        # Renamed by a comment hint: the old statement still reads until the reload, the new schema has no `drafts`.
        sql(database_url, "comment on table app.drafts is '@name Sketch'")
        notify(database_url)
        message = await socket.receive(timeout=10)
        assert message["id"] == "drafts" and message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert (await service.client.get("/health")).json()["schema"]["generation"] > generation
        sql(database_url, "update app.posts set title = 'after the reload' where id = 1")
        message = await socket.receive(timeout=2 * INTERVAL + 2)
        assert message == {"id": "post", "type": "next", "payload": {"data": {"post": {"title": "after the reload"}}}}


async def test_one_failing_subscriber_does_not_fail_its_group(tmp_path, database_url):
    sql(
        database_url,
        "create function app.ratio(a integer, b integer) returns integer language sql stable as $$ select a / b $$",
    )
    sql(database_url, "grant execute on function app.ratio(integer, integer) to svc_test_visitor")
    ratio = "subscription($b: Int!) { ratio(a: 12, b: $b) }"
    async with subscriptions_service(tmp_path, database_url) as service, raw_socket(service) as socket:
        await socket.init()
        assert (await subscribe(socket, "by2", ratio, {"b": 2}))["payload"] == {"data": {"ratio": 6}}
        assert (await subscribe(socket, "by3", ratio, {"b": 3}))["payload"] == {"data": {"ratio": 4}}
        failed = await subscribe(socket, "by0", ratio, {"b": 0})  # its first read fails: refused like a query
        assert failed["type"] == "error"
        # Make a live one fail later: the function now divides by b - 1.
        sql(
            database_url,
            "create or replace function app.ratio(a integer, b integer) returns integer language sql stable"
            " as $$ select a / (b - 2) $$",
        )
        messages = {}
        while len(messages) < 2:
            message = await socket.receive(timeout=2 * INTERVAL + 2)
            messages[message["id"]] = message
        failed = messages["by2"]["payload"]
        assert failed["data"] is None and failed["errors"][0]["path"] == ["ratio"]
        assert messages["by3"] == {"id": "by3", "type": "next", "payload": {"data": {"ratio": 12}}}


async def test_shutdown_closes_every_socket_with_going_away(tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url) as service:
        async with raw_socket(service) as socket:
            await socket.init()
            assert (await subscribe(socket, "1", POST, {"id": 1}))["type"] == "next"
            os.kill(os.getpid(), signal.SIGTERM)  # the service runs in this process: its signal handler gets it
            assert (await closed_with(socket, timeout=10))[0] == 1001
