"""Round trips to the database per request (issue 22, "writes in fewer round trips"): the unit's transaction runs in
libpq's pipeline mode, BEGIN going with the first statement and COMMIT with the last, and a write's payload read
going with the write (it takes the written keys from a setting the write leaves). Counted at a TCP proxy
between the service and PostgreSQL: a round trip is a turn of the conversation, the service sending after it heard
from the server, on the one link that carried the request (the reloader's listener has a link of its own).
"""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["writes.sql"]
#: One connection, opened by the first request: what follows is counted on a connection already made.
SETTINGS = {"database": {"schemas": ["app"], "pool_size": 1}}


@pytest.fixture
async def gql(tmp_path, proxied_url):
    async with graphql_service(tmp_path, proxied_url, SETTINGS) as gql:
        assert (await gql.data("{ rooms { name } }"))["rooms"]
        yield gql


def busiest(before: dict, after: dict) -> int:
    """The round trips of the link that made the most since `before` (the request's; others only listen)."""
    return max(count - before.get(link, 0) for link, count in after.items())


async def test_a_create_with_its_payload_read_costs_one_round_trip(gql, fault_proxy):
    before = dict(fault_proxy.round_trips)
    data = await gql.data('mutation { createRoom(input: {rowId: 501, name: "Trips"}) { room { rowId name } } }')
    assert data == {"createRoom": {"room": {"rowId": 501, "name": "Trips"}}}
    # begin + insert + payload read + commit + the WAL position: without the pipeline, 4 (begin, insert, read,
    # commit); with the payload read waiting for the insert's answer, 2.
    assert busiest(before, fault_proxy.round_trips) == 1


async def test_each_field_of_a_mutation_costs_one_round_trip(gql, fault_proxy):
    before = dict(fault_proxy.round_trips)
    data = await gql.data(
        """mutation { a: createRoom(input: {rowId: 511, name: "One"}) { room { name } }
                      b: createRoom(input: {rowId: 512, name: "Two"}) { room { name } } }"""
    )
    assert data == {"a": {"room": {"name": "One"}}, "b": {"room": {"name": "Two"}}}
    assert busiest(before, fault_proxy.round_trips) == 2


async def test_a_write_with_a_check_commits_once_it_is_checked(gql, fault_proxy):
    """An update with its expected version: its status is checked before the commit is sent, so a stale version
    writes nothing (the update and its payload read in one turn, the commit in the next)."""
    created = 'mutation { createOrder(input: {customerId: 2, number: "T-1"}) { order { rowId rowVersion } } }'
    order = (await gql.data(created))["createOrder"]["order"]
    update = """mutation($id: Int!, $v: String!) { updateOrder(rowId: $id, set: {note: "changed"}, expectedVersion: $v) {
        order { note rowVersion } } }"""
    status, body = await gql.errors(update, {"id": order["rowId"], "v": "7"})
    assert status == 200 and body["errors"][0]["extensions"]["code"] == "STALE_VERSION", body
    read = "query($id: Int!) { order(rowId: $id) { note rowVersion } }"
    assert (await gql.data(read, {"id": order["rowId"]}))["order"] == {"note": None, "rowVersion": order["rowVersion"]}
    before = dict(fault_proxy.round_trips)
    data = await gql.data(update, {"id": order["rowId"], "v": order["rowVersion"]})
    assert data["updateOrder"]["order"]["note"] == "changed"
    assert busiest(before, fault_proxy.round_trips) == 2


async def test_a_read_costs_one_round_trip(gql, fault_proxy):
    before = dict(fault_proxy.round_trips)
    await gql.data("{ rooms { name } }")
    assert busiest(before, fault_proxy.round_trips) == 1


async def test_a_failed_write_rolls_back_and_the_connection_serves_the_next(gql):
    status, body = await gql.errors(
        """mutation { a: createRoom(input: {rowId: 521, name: "Kept?"}) { room { name } }
                      b: createRoom(input: {rowId: 1, name: "Taken"}) { room { name } } }"""
    )
    assert status == 200 and body["errors"][0]["extensions"]["code"] == "ID_TAKEN", body
    assert (await gql.data("{ room(rowId: 521) { name } }")) == {"room": None}
    status, body = await gql.errors('mutation { createRoom(input: {rowId: 1, name: "Taken"}) { room { name } } }')
    assert status == 200 and body["errors"][0]["extensions"]["code"] == "ID_TAKEN", body
    data = await gql.data('mutation { createRoom(input: {rowId: 503, name: "After"}) { room { name } } }')
    assert data == {"createRoom": {"room": {"name": "After"}}}
