"""The filter operators of ltree, tsvector, PostGIS and multirange columns (SPEC "Filter and condition inputs"), in
GraphQL and REST alike, on the local server's fixture (tests/fixtures/search_spatial.sql, plus a generated tsvector
column on the categories): each answer checked against the operator written by hand in SQL on the module's
database; bad operands are 400 / BAD_USER_INPUT before any SQL.
"""

import json

import pytest

from tests.search.support import graphql_error, rest_bad_input, statements
from tests.support.debug import debug_explain, tsqueries_not_made_once
from tests.support.graphql import Gql
from tests.support.postgres import execute, fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["search_spatial.sql"]
SETTINGS = {"database": {"schemas": ["places"]}}
WESTERN_EUROPE = {"type": "Polygon", "coordinates": [[[-10, 35], [30, 35], [30, 60], [-10, 60], [-10, 35]]]}
PARIS = {"type": "Point", "coordinates": [2.35, 48.85]}


@pytest.fixture(scope="module", autouse=True)
def documents(database_url):
    """A tsvector column on the categories, for `matches`."""
    execute(
        database_url,
        "alter table places.categories add column words tsvector"
        " generated always as (to_tsvector('english', coalesce(name, '') || ' ' || path::text)) stored",
    )


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service


def ids(db, where: str, params=None, table: str = "places.categories") -> list[int]:
    return [row[0] for row in fetch(db, f"select id from {table} where {where} order by id", params)]


TYPES = {"categories": "Category", "cities": "City", "bookings": "Booking"}


async def graphql_ids(service, field: str, filter_: dict) -> list[int]:
    query = f"query($filter: {TYPES[field]}Filter) {{ {field}(filter: $filter, orderBy: PRIMARY_KEY_ASC) {{ rowId }} }}"
    data = await Gql(service.client).data(query, {"filter": filter_})
    return [row["rowId"] for row in data[field]]


async def rest_ids(service, resource: str, parameters: dict[str, str]) -> list[int]:
    response = await service.client.get(f"/rest/{resource}", params={**parameters, "fields": "id", "order": "id"})
    assert response.status_code == 200, response.text
    return [row["id"] for row in response.json()]


@pytest.mark.parametrize(
    ("operator", "operand", "sql"),
    [
        ("ancestorOf", "Top.Science.Astronomy", "path @> 'Top.Science.Astronomy'"),
        ("descendantOf", "Top.Science", "path <@ 'Top.Science'"),
        ("matches", "*.Astronomy.*", "path ~ '*.Astronomy.*'"),
        ("matchesText", "Science & !Biology", "path @ 'Science & !Biology'"),
        ("greaterThan", "Top.Science", "path > 'Top.Science'"),
    ],
)
async def test_ltree_operators(service, database_url, operator, operand, sql):
    expected = ids(database_url, sql)
    assert expected  # the fixture's tree has such paths
    assert await graphql_ids(service, "categories", {"path": {operator: operand}}) == expected
    assert await rest_ids(service, "categories", {f"filter[path][{operator}]": operand}) == expected


async def test_full_text_matches_a_web_search_query(service, database_url):
    expected = ids(database_url, "words @@ websearch_to_tsquery('astronomy or biology')")
    assert expected
    assert await graphql_ids(service, "categories", {"words": {"matches": "astronomy or biology"}}) == expected
    assert await rest_ids(service, "categories", {"filter[words][matches]": "astronomy or biology"}) == expected


async def test_matches_makes_its_tsquery_once_per_statement(tmp_path, database_url):
    """`matches` reads its tsquery from an InitPlan: `websearch_to_tsquery(text)` (stable, with the database's text
    search configuration) is not made again for each row it filters."""
    settings = {**SETTINGS, "dev": {"debug": {"explain": True}}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        response = await service.client.get(
            "/rest/categories", params={"filter[words][matches]": "astronomy or biology", "fields": "id"}
        )
        assert response.status_code == 200, response.text
        (explained,) = await debug_explain(service.client, response)
        assert tsqueries_not_made_once(explained["plan"]) == []


@pytest.mark.parametrize(
    ("column", "operator", "operand", "sql"),
    [
        ("location", "within", WESTERN_EUROPE, "st_within(location, st_setsrid(st_geomfromgeojson(%(g)s), 4326))"),
        (
            "location",
            "intersects",
            WESTERN_EUROPE,
            "st_intersects(location, st_setsrid(st_geomfromgeojson(%(g)s), 4326))",
        ),
        ("area", "within", WESTERN_EUROPE, "st_coveredby(area, st_geomfromgeojson(%(g)s)::geography)"),
        (
            "location",
            "distanceWithin",
            {"near": PARIS, "distance": 5},
            "st_dwithin(location, st_setsrid(st_geomfromgeojson(%(g)s::jsonb -> 'near'), 4326), 5)",
        ),
        (
            "area",
            "distanceWithin",
            {"near": PARIS, "distance": 400000},
            "st_dwithin(area, st_geomfromgeojson(%(g)s::jsonb -> 'near')::geography, 400000)",
        ),
    ],
)
async def test_spatial_operators(service, database_url, column, operator, operand, sql):  # noqa: PLR0917
    expected = ids(database_url, sql, {"g": json.dumps(operand)}, table="places.cities")
    assert expected
    assert await graphql_ids(service, "cities", {column: {operator: operand}}) == expected
    parameter = {f"filter[{column}][{operator}]": json.dumps(operand)}
    assert await rest_ids(service, "cities", parameter) == expected


@pytest.mark.parametrize(
    ("operator", "operand", "sql"),
    [
        ("containsElement", 9, "slots @> 9"),
        (
            "overlaps",
            {"start": {"value": 9, "inclusive": True}, "end": {"value": 10, "inclusive": False}},
            "slots && '[9,10)'::int4range",
        ),
        (
            "containedBy",
            {"start": {"value": 8, "inclusive": True}, "end": {"value": 12, "inclusive": False}},
            "slots <@ '[8,12)'::int4range",
        ),
    ],
)
async def test_multirange_operators(service, database_url, operator, operand, sql):
    expected = ids(database_url, sql, table="places.bookings")
    assert expected
    assert await graphql_ids(service, "bookings", {"slots": {operator: operand}}) == expected


async def test_the_filter_inputs_are_typed(tmp_path, database_url):
    dev = {**SETTINGS, "export": {"pin": "off"}}
    async with running_service(tmp_path, database_url, dev, mode="dev") as service:
        response = await service.client.get("/schema.graphql")
    assert response.status_code == 200, response.text
    sdl = response.text
    assert "input LtreeFilter {" in sdl and "  ancestorOf: String" in sdl
    assert "input GeometryFilter {" in sdl and "  distanceWithin: GeometryDistanceInput" in sdl
    assert "input GeographyFilter {" in sdl
    assert "input FullTextFilter {" in sdl
    assert "input IntRangeListFilter {" in sdl and "  containsElement: Int" in sdl
    assert "  slots: IntRangeListFilter" in sdl and "  path: LtreeFilter" in sdl


@pytest.mark.parametrize(
    "operand",
    [
        {"type": "Point", "coordinates": [1, 2, 3, 4]},
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 1]]]},
        {"type": "Blob", "coordinates": [0, 0]},
        "POINT(1 2)",
    ],
)
async def test_bad_geometries_are_400_before_any_sql(service, operand):
    before = await statements(service.client)
    response = await service.client.post(
        "/graphql",
        json={
            "query": "query($f: CityFilter) { cities(filter: $f) { rowId } }",
            "variables": {"f": {"location": {"within": operand}}},
        },
    )
    graphql_error(response)
    rest = await service.client.get("/rest/cities", params={"filter[location][within]": json.dumps(operand)})
    rest_bad_input(rest)
    distance = {"near": {"type": "Point", "coordinates": [0, 0]}, "distance": -1}
    rest = await service.client.get("/rest/cities", params={"filter[area][distanceWithin]": json.dumps(distance)})
    rest_bad_input(rest)
    assert await statements(service.client) == before
