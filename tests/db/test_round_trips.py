"""Round trips to the database per request (issue 22, "writes in fewer round trips"): the unit's transaction runs in
psycopg's pipeline mode, BEGIN going with the first statement and COMMIT with the last. Counted at a TCP proxy
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


async def test_a_create_with_its_payload_read_costs_two_round_trips(gql, fault_proxy):
    before = dict(fault_proxy.round_trips)
    data = await gql.data('mutation { createRoom(input: {rowId: 501, name: "Trips"}) { room { rowId name } } }')
    assert data == {"createRoom": {"room": {"rowId": 501, "name": "Trips"}}}
    # begin + insert, then payload read + commit + the WAL position: without the pipeline, 4 (begin, insert, read,
    # commit).
    assert busiest(before, fault_proxy.round_trips) == 2


async def test_a_read_costs_one_round_trip(gql, fault_proxy):
    before = dict(fault_proxy.round_trips)
    await gql.data("{ rooms { name } }")
    assert busiest(before, fault_proxy.round_trips) == 1


async def test_a_failed_write_rolls_back_and_the_connection_serves_the_next(gql):
    status, body = await gql.errors('mutation { createRoom(input: {rowId: 1, name: "Taken"}) { room { name } } }')
    assert status == 200 and body["errors"][0]["extensions"]["code"] == "ID_TAKEN", body
    data = await gql.data('mutation { createRoom(input: {rowId: 503, name: "After"}) { room { name } } }')
    assert data == {"createRoom": {"room": {"name": "After"}}}
