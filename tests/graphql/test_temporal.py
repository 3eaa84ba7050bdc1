"""Temporal keys over GraphQL, mirroring REST's `asOf` (SPEC "List query parameters", "Embedding controls":
`history`), on PostgreSQL 18 (tests/fixtures/temporal.sql): lists and connections of a temporal type take
`asOf: Datetime` and keep the versions valid then (without it, every version); `<single>AsOf(<key without the
period>, asOf)` is the version valid at `asOf`, else now; a to-one relation across a period foreign key takes `asOf`
(else the instant in effect around it, else now); nested temporal lists are read at the instant in effect; `history`
lists a row's versions in time order. The SDL shows these arguments and fields on temporal types only."""

import pytest

from tests.support.graphql import graphql_service
from tests.support.model import read_schema

SETTINGS = {"database": {"schemas": ["public"]}}


@pytest.fixture
async def gql(tmp_path, pg18_database_url):
    async with graphql_service(tmp_path, pg18_database_url, SETTINGS) as gql:
        yield gql


async def test_a_list_as_of_an_instant_keeps_the_versions_valid_then(gql):
    query = "query($at: Datetime) { rooms(asOf: $at) { name duties { cleaner } } }"
    every = await gql.data(query)
    assert [room["name"] for room in every["rooms"]] == ["Blue", "Blue Suite", "Azure", "Green"]
    assert [len(room["duties"]) for room in every["rooms"]] == [2, 2, 2, 1]  # every version of every duty
    # One document, several instants: the plan kept by the variables' shape binds each request's own, nested too.
    for instant, rooms in (
        ("2024-03-01T12:00:00Z", [("Blue", "Kim"), ("Green", "Max")]),
        ("2025-06-01", [("Azure", "Lee"), ("Green", "Max")]),
    ):
        data = await gql.data(query, {"at": instant})
        assert [(room["name"], *(d["cleaner"] for d in room["duties"])) for room in data["rooms"]] == rooms


async def test_a_connection_as_of_an_instant(gql):
    data = await gql.data('{ staffsConnection(asOf: "2024-03-01") { totalCount nodes { role } } }')
    assert data == {"staffsConnection": {"totalCount": 1, "nodes": [{"role": "porter"}]}}


async def test_the_as_of_lookup_is_the_version_valid_then_else_now(gql):
    data = await gql.data(
        '{ then: roomAsOf(id: 1, asOf: "2024-03-01") { name rate } now: roomAsOf(id: 1) { name }'
        ' before: roomAsOf(id: 1, asOf: "2023-01-01") { name } }'
    )
    assert data == {"then": {"name": "Blue", "rate": 100}, "now": {"name": "Azure"}, "before": None}


async def test_to_one_across_a_period_foreign_key_reaches_the_parent_version_at_the_instant(gql):
    data = await gql.data('{ bookings { guest room { name } then: room(asOf: "2024-08-11") { name } } }')
    assert data["bookings"] == [
        {"guest": "Ada", "room": {"name": "Azure"}, "then": {"name": "Blue Suite"}},
        {"guest": "Grace", "room": {"name": "Azure"}, "then": {"name": "Blue Suite"}},
        {"guest": "Linus", "room": {"name": "Green"}, "then": {"name": "Green"}},
    ]


async def test_nested_temporal_reads_take_the_instant_in_effect_unless_given_their_own(gql):
    data = await gql.data(
        '{ rooms(asOf: "2024-08-01") { name duties { cleaner room { name } }'
        ' later: duties(asOf: "2025-06-01") { cleaner room { name } } } }'
    )
    assert data["rooms"] == [
        {
            "name": "Blue Suite",
            "duties": [{"cleaner": "Kim", "room": {"name": "Blue Suite"}}],
            "later": [{"cleaner": "Lee", "room": {"name": "Azure"}}],
        },
        {
            "name": "Green",
            "duties": [{"cleaner": "Max", "room": {"name": "Green"}}],
            "later": [{"cleaner": "Max", "room": {"name": "Green"}}],
        },
    ]


async def test_history_lists_a_rows_versions_in_time_order(gql):
    data = await gql.data('{ roomAsOf(id: 1, asOf: "2024-08-01") { name history { name rate } } }')
    assert data == {
        "roomAsOf": {
            "name": "Blue Suite",
            "history": [
                {"name": "Blue", "rate": 100},
                {"name": "Blue Suite", "rate": 150},
                {"name": "Azure", "rate": 180},
            ],
        }
    }


@pytest.mark.parametrize(
    ("query", "message", "field"),
    [
        ('{ rooms(asOf: "yesterday") { name } }', "asOf must be an ISO 8601 timestamp; got 'yesterday'", "rooms.asOf"),
        (
            '{ bookings { room(asOf: "2024-02-30") { name } } }',
            "asOf must be an ISO 8601 timestamp; got '2024-02-30'",
            "bookings.room.asOf",
        ),
    ],
)
async def test_an_instant_that_is_not_a_timestamp_is_bad_input(gql, query, message, field):
    _, body = await gql.errors(query)
    [error] = body["errors"]
    assert (error["message"], error["extensions"]["code"], error["extensions"]["field"]) == (
        message,
        "BAD_USER_INPUT",
        field,
    )


async def test_as_of_on_a_type_without_a_temporal_key_is_not_in_the_schema(gql):
    _, body = await gql.errors('{ bookings(asOf: "2024-01-01") { guest } }')
    assert body["errors"][0]["message"] == "Unknown argument 'asOf' on field 'Query.bookings'."


async def test_the_sdl_shows_as_of_and_history_on_temporal_types_only(tmp_path, pg18_database_url):
    sdl = (await read_schema(pg18_database_url, tmp_path, SETTINGS)).sdl
    lines = [line.strip() for line in sdl.splitlines()]
    assert "roomAsOf(id: Int!, asOf: Datetime): Room" in lines
    assert "history: [Room!]!" in lines
    assert "room(asOf: Datetime): Room" in lines  # Booking.room, across a period foreign key
    rooms = next(line for line in lines if line.startswith("rooms("))
    assert rooms.endswith("asOf: Datetime): [Room!]!")
    bookings = next(line for line in lines if line.startswith("bookings("))
    assert "asOf" not in bookings
    assert not any(line.startswith("bookingAsOf") for line in lines)


async def test_history_is_at_most_a_page_of_versions(tmp_path, pg18_database_url):
    settings = {**SETTINGS, "limits": {"page_size": {"default": 1, "max": 2}}}
    async with graphql_service(tmp_path, pg18_database_url, settings) as gql:
        data = await gql.data("{ roomAsOf(id: 1) { history { name } } }")
    assert data == {"roomAsOf": {"history": [{"name": "Blue"}, {"name": "Blue Suite"}]}}
