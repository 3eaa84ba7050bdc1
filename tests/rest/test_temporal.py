"""Temporal keys over REST (SPEC "List query parameters": `asOf`, `asOf[<relation>]`; "Embedding controls":
`history`), on PostgreSQL 18 (tests/fixtures/temporal.sql): a list as of an instant keeps the versions valid then
(without `asOf`, every version); a row named by its key without the period is the version valid at `asOf`, else
now; a to-one relation across a period foreign key reaches the parent's version at the `asOf[<relation>]` given,
else at the rows' own `asOf`, else now; an included temporal list is read at the instant of the rows it hangs from;
`history` lists a row's versions in time order; `asOf` on a table without a temporal key, or not a timestamp, is 400
naming the parameter. The OpenAPI document offers `asOf` on temporal resources only, and stays valid."""

import pytest
from openapi_spec_validator import validate

from tests.support.rest import assert_problem, bad_request, problem, rest_service

SETTINGS = {"database": {"schemas": ["public"]}}


@pytest.fixture
async def rest(tmp_path, pg18_database_url):
    async with rest_service(tmp_path, pg18_database_url, SETTINGS) as client:
        yield client


async def rows(rest, path: str, **params: str):
    response = await rest.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_plain_list_has_every_version_with_its_period(rest):
    assert await rows(rest, "/rest/rooms", fields="id,name,validAt") == [
        {"id": 1, "name": "Blue", "validAt": _period("2024-01-01T00:00:00+00:00", "2024-07-01T00:00:00+00:00")},
        {"id": 1, "name": "Blue Suite", "validAt": _period("2024-07-01T00:00:00+00:00", "2025-01-01T00:00:00+00:00")},
        {"id": 1, "name": "Azure", "validAt": _period("2025-01-01T00:00:00+00:00", None)},
        {"id": 2, "name": "Green", "validAt": _period("2024-01-01T00:00:00+00:00", None)},
    ]


@pytest.mark.parametrize(
    ("instant", "names"),
    [
        ("2024-03-01T12:00:00Z", ["Blue", "Green"]),
        ("2024-07-01T00:00:00+00:00", ["Blue Suite", "Green"]),  # a period's start is in it, its end is not
        ("2024-06-30T23:59:59Z", ["Blue", "Green"]),
        ("2023-12-31", []),
        ("2030-01-01", ["Azure", "Green"]),
    ],
)
async def test_a_list_as_of_an_instant_keeps_the_versions_valid_then(rest, instant, names):
    assert [row["name"] for row in await rows(rest, "/rest/rooms", asOf=instant, fields="name")] == names


async def test_as_of_on_a_date_period_is_read_as_that_day(rest):
    assert await rows(rest, "/rest/staff", asOf="2024-05-31T23:00:00Z", fields="role") == [{"role": "porter"}]
    assert await rows(rest, "/rest/staff", asOf="2024-06-01", fields="role") == [{"role": "manager"}]


async def test_a_row_by_its_key_without_the_period_is_the_version_valid_at_as_of_else_now(rest):
    assert await rows(rest, "/rest/rooms/1", asOf="2024-03-01", fields="name,rate") == {"name": "Blue", "rate": 100}
    assert await rows(rest, "/rest/rooms/1", fields="name") == {"name": "Azure"}
    response = await rest.get("/rest/rooms/1", params={"asOf": "2023-06-01"})
    assert_problem(response, _not_found("no Room has the key 1", "/rest/rooms/1"))


async def test_to_one_across_a_period_foreign_key_reaches_the_parent_version_at_the_instant(rest):
    now = await rows(rest, "/rest/bookings", include="room", fields="guest", **{"fields[room]": "name"})
    assert now == [
        {"guest": "Ada", "room": {"name": "Azure"}},
        {"guest": "Grace", "room": {"name": "Azure"}},
        {"guest": "Linus", "room": {"name": "Green"}},
    ]
    then = await rows(
        rest, "/rest/bookings", include="room", fields="guest", **{"fields[room]": "name", "asOf[room]": "2024-08-11"}
    )
    assert then == [
        {"guest": "Ada", "room": {"name": "Blue Suite"}},
        {"guest": "Grace", "room": {"name": "Blue Suite"}},
        {"guest": "Linus", "room": {"name": "Green"}},
    ]
    before = await rows(
        rest, "/rest/bookings/3", include="room", **{"fields[room]": "name", "asOf[room]": "2024-01-01"}
    )
    assert before["room"] == {"name": "Green"}


async def test_included_relations_are_read_at_the_rows_instant_unless_given_their_own(rest):
    params = {
        "include": "duties,duties.room",
        "fields": "name",
        "fields[duties]": "cleaner",
        "fields[duties.room]": "name",
    }
    inherited = await rows(rest, "/rest/rooms", asOf="2024-08-01", **params)
    assert inherited == [
        {"name": "Blue Suite", "duties": [{"cleaner": "Kim", "room": {"name": "Blue Suite"}}]},
        {"name": "Green", "duties": [{"cleaner": "Max", "room": {"name": "Green"}}]},
    ]
    own = await rows(rest, "/rest/rooms", asOf="2024-08-01", **params, **{"asOf[duties]": "2025-06-01"})
    assert [room["duties"] for room in own] == [
        [{"cleaner": "Lee", "room": {"name": "Azure"}}],
        [{"cleaner": "Max", "room": {"name": "Green"}}],
    ]


async def test_history_lists_a_rows_versions_in_time_order(rest):
    room = await rows(
        rest, "/rest/rooms/1", asOf="2024-03-01", include="history", fields="name", **{"fields[history]": "name,rate"}
    )
    assert room == {
        "name": "Blue",
        "history": [
            {"name": "Blue", "rate": 100},
            {"name": "Blue Suite", "rate": 150},
            {"name": "Azure", "rate": 180},
        ],
    }
    green = await rows(
        rest, "/rest/rooms", asOf="2024-03-01", include="history", fields="id", **{"fields[history]": "name"}
    )
    assert green[1] == {"id": 2, "history": [{"name": "Green"}]}


@pytest.mark.parametrize(
    ("path", "params", "field", "detail"),
    [
        ("/rest/bookings", {"asOf": "2024-01-01"}, "asOf", "bookings has no temporal key: asOf cannot be used"),
        ("/rest/bookings/1", {"asOf": "2024-01-01"}, "asOf", "bookings has no temporal key: asOf cannot be used"),
        (
            "/rest/rooms",
            {"include": "bookings", "asOf[bookings]": "2024-01-01"},
            "asOf[bookings]",
            "bookings has no temporal key: asOf cannot be used",
        ),
        ("/rest/rooms", {"asOf": "yesterday"}, "asOf", "asOf must be an ISO 8601 timestamp; got 'yesterday'"),
        ("/rest/rooms", {"asOf": "2024-13-01"}, "asOf", "asOf must be an ISO 8601 timestamp; got '2024-13-01'"),
        (
            "/rest/bookings",
            {"include": "room", "asOf[room]": "soon"},
            "asOf[room]",
            "asOf must be an ISO 8601 timestamp; got 'soon'",
        ),
        (
            "/rest/rooms",
            {"include": "history", "asOf[history]": "2024-01-01"},
            "asOf[history]",
            "asOf[history]: only relations are read as of an instant",
        ),
    ],
)
async def test_as_of_without_a_temporal_key_or_not_a_timestamp_is_400_naming_it(rest, path, params, field, detail):
    response = await rest.get(path, params=params)
    assert_problem(response, bad_request(detail, path, field=field))


async def test_a_write_refuses_as_of(rest):
    response = await rest.post("/rest/bookings?asOf=2024-01-01", json={"id": 9, "roomId": 2, "guest": "Eve"})
    detail = "asOf applies to reads: a write answers with its rows as they are now"
    assert_problem(response, bad_request(detail, "/rest/bookings", field="asOf"))


async def test_openapi_offers_as_of_on_temporal_resources_only_and_stays_valid(tmp_path, pg18_database_url):
    async with rest_service(tmp_path, pg18_database_url, SETTINGS, mode="dev") as rest:
        document = (await rest.get("/openapi.json")).json()
    validate(document)

    def names(path: str, method: str = "get") -> set[str]:
        parameters = document["paths"][path][method]["parameters"]
        return {p.get("name") or p["$ref"].rsplit("/", 1)[-1] for p in parameters}

    assert "asOf" in names("/rest/rooms")
    assert "asOf" in names("/rest/rooms/{key}")
    assert "asOf" not in names("/rest/bookings")
    assert "asOf" not in names("/rest/bookings/{id}")
    assert document["components"]["parameters"]["asOf"]["in"] == "query"


def _period(start: str, end: str | None) -> dict:
    return {
        "start": {"value": start, "inclusive": True},
        "end": {"value": end, "inclusive": False} if end is not None else None,
    }


def _not_found(detail: str, instance: str) -> dict:
    return problem(404, "NOT_FOUND", detail, instance, title="Not Found")


async def test_history_is_at_most_a_page_of_versions(tmp_path, pg18_database_url):
    settings = {**SETTINGS, "limits": {"page_size": {"default": 1, "max": 2}}}
    async with rest_service(tmp_path, pg18_database_url, settings) as rest:
        room = await rows(rest, "/rest/rooms/1", include="history", fields="name", **{"fields[history]": "name"})
    assert room == {"name": "Azure", "history": [{"name": "Blue"}, {"name": "Blue Suite"}]}
