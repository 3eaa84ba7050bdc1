"""Nearest search (SPEC "Search fields", REST "Search methods"; issue 19's contract) on the local server's PostGIS
(tests/fixtures/search_spatial.sql): 30 world cities as a geometry(Point, 4326) `location` (distances in degrees) and
a geography `area` (metres), each with a gist index. Each answer is checked against ST_Distance and ST_DWithin
written by hand on the module's database.

The default field is AREA: `cities_area_idx` sorts before `cities_location_idx`.
"""

import json

import pytest

from tests.search.support import (
    MAX_LIMIT,
    TOO_MANY_CODES,
    approx,
    assert_ranked,
    graphql_error,
    graphql_hits,
    rest_bad_input,
    rest_hits,
    rest_not_found,
    rest_ok,
    statements,
)
from tests.support.graphql import Gql
from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["search_spatial.sql"]
SETTINGS = {"database": {"schemas": ["places"]}}
PARIS = {"type": "Point", "coordinates": [2.35, 48.85]}
NAIROBI_ISH = {"type": "Point", "coordinates": [37.0, -1.0]}
#: A line from London to Paris: the distance to a line, not to a point.
CHANNEL = {"type": "LineString", "coordinates": [[-0.1276, 51.5072], [2.3522, 48.8566]]}
#: A polygon around the Low Countries: cities inside are at distance 0 (ties broken by key).
BENELUX = {
    "type": "Polygon",
    "coordinates": [[[2.5, 49.5], [7.0, 49.5], [7.0, 53.5], [2.5, 53.5], [2.5, 49.5]]],
}
NEAREST = """query($near: JSON!, $first: Int) {
  citiesNearestSearch(near: $near, first: $first%s) { hasMore hits { score distance node { rowId name } } }
}"""


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service


def nearest_sql(db, near, column: str = "location", where: str = "true") -> list[tuple[int, float]]:
    """(key, distance) of every city passing `where`, nearest first, ties by key."""
    target = (
        "st_geomfromgeojson(%(near)s)::geography"
        if column == "area"
        else "st_setsrid(st_geomfromgeojson(%(near)s), 4326)"
    )
    return fetch(
        db,
        f"select id, st_distance({column}, {target}) from places.cities where {where} order by 2, id",
        {"near": json.dumps(near)},
    )


def scored(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    return [(key, 1 / (1 + distance)) for key, distance in rows]


def graphql_distances(results) -> list[float]:
    return [hit["distance"] for hit in results["hits"]]


@pytest.mark.parametrize(
    ("near", "field", "first"),
    [
        (PARIS, "LOCATION", 5),
        (PARIS, "AREA", 5),
        (NAIROBI_ISH, "LOCATION", None),  # the default page
        (CHANNEL, "LOCATION", 4),
        (BENELUX, "LOCATION", 6),  # Amsterdam and Brussels inside: 0 apart, in key order
        (BENELUX, "AREA", 6),
        ({"type": "MultiPoint", "coordinates": [[139.0, 35.0], [-74.0, 40.0]]}, "AREA", 30),  # every city
    ],
)
async def test_nearest_orders_by_st_distance(service, database_url, near, field, first):
    expected = nearest_sql(database_url, near, field.lower())
    size = first if first is not None else 10
    variables = {"near": near, **({"first": first} if first is not None else {})}
    data = await Gql(service.client).data(NEAREST % f", field: {field}", variables)
    results = data["citiesNearestSearch"]
    assert_ranked(graphql_hits(results), scored(expected[:size]))
    assert graphql_distances(results) == approx([distance for _, distance in expected[:size]])
    assert results["hasMore"] is (len(expected) > size)
    body = await rest_ok(
        service.client,
        "/rest/cities/search/nearest",
        {
            "near": near,
            "field": field.lower(),
            "fields": ["id", "name"],
            **({"first": first} if first is not None else {}),
        },
    )
    assert_ranked(rest_hits(body), scored(expected[:size]))
    assert [hit["distance"] for hit in body["hits"]] == approx([distance for _, distance in expected[:size]])
    assert body["hasMore"] is (len(expected) > size)
    assert all(set(hit) == {"score", "row", "distance"} for hit in body["hits"])


async def test_the_default_field_is_the_first_by_index_name(service, database_url):
    expected = nearest_sql(database_url, PARIS, "area")[:3]
    assert expected[0][1] > 100  # metres, not degrees
    data = await Gql(service.client).data(NEAREST % "", {"near": PARIS, "first": 3})
    assert_ranked(graphql_hits(data["citiesNearestSearch"]), scored(expected))
    body = await rest_ok(service.client, "/rest/cities/search/nearest", {"near": PARIS, "first": 3})
    assert_ranked(rest_hits(body), scored(expected))


@pytest.mark.parametrize(("field", "kept"), [("LOCATION", 7), ("AREA", 9), ("AREA", 1)])
async def test_max_distance_keeps_the_rows_within_it(service, database_url, field, kept):
    everything = nearest_sql(database_url, PARIS, field.lower())
    maximum = (everything[kept - 1][1] + everything[kept][1]) / 2  # between two distances: nothing on the edge
    target = (
        "st_geomfromgeojson(%(near)s)::geography"
        if field == "AREA"
        else "st_setsrid(st_geomfromgeojson(%(near)s), 4326)"
    )
    within = fetch(
        database_url,
        f"select id from places.cities where st_dwithin({field.lower()}, {target}, %(maximum)s) order by id",
        {"near": json.dumps(PARIS), "maximum": maximum},
    )
    expected = everything[:kept]
    assert sorted(key for key, _ in expected) == [key for (key,) in within]
    gql = Gql(service.client)
    query = NEAREST.replace("$first: Int", "$first: Int, $max: Float") % f", field: {field}, maxDistance: $max"
    for first in (MAX_LIMIT, max(kept - 1, 1)):
        data = await gql.data(query, {"near": PARIS, "first": first, "max": maximum})
        results = data["citiesNearestSearch"]
        assert_ranked(graphql_hits(results), scored(expected[:first]))
        assert results["hasMore"] is (kept > first)
        body = await rest_ok(
            service.client,
            "/rest/cities/search/nearest",
            {"near": PARIS, "field": field.lower(), "maxDistance": maximum, "first": first},
        )
        assert_ranked(rest_hits(body), scored(expected[:first]))
        assert body["hasMore"] is (kept > first)


async def test_condition_and_filter_narrow_the_cities(service, database_url):
    expected = nearest_sql(database_url, PARIS, "location", "population > 5000 and country <> 'Japan'")
    data = await Gql(service.client).data(
        NEAREST % ', field: LOCATION, filter: {population: {greaterThan: 5000}, country: {notEqualTo: "Japan"}}',
        {"near": PARIS, "first": 4},
    )
    assert_ranked(graphql_hits(data["citiesNearestSearch"]), scored(expected[:4]))
    assert data["citiesNearestSearch"]["hasMore"] is True
    only = nearest_sql(database_url, PARIS, "location", "country = 'France'")
    data = await Gql(service.client).data(
        NEAREST % ', field: LOCATION, condition: {country: "France"}', {"near": PARIS, "first": 4}
    )
    assert_ranked(graphql_hits(data["citiesNearestSearch"]), scored(only))
    assert data["citiesNearestSearch"]["hasMore"] is False
    body = await rest_ok(
        service.client,
        "/rest/cities/search/nearest",
        {
            "near": PARIS,
            "field": "location",
            "first": 4,
            "filter": {"population": {"greaterThan": 5000}, "country": {"notEqualTo": "Japan"}},
        },
    )
    assert_ranked(rest_hits(body), scored(expected[:4]))


async def test_a_nearest_search_is_one_statement(service):
    before = await statements(service.client)
    await Gql(service.client).data(NEAREST % "", {"near": PARIS})
    assert await statements(service.client) - before == 1


# --- bad geometries ------------------------------------------------------------------------------------------------

BAD_NEAR = [
    {"type": "Point"},  # no coordinates
    {"coordinates": [2.35, 48.85]},  # no type
    {"type": "Point", "coordinates": [2.35]},
    {"type": "Point", "coordinates": [2.35, 48.85, 1, 2]},
    {"type": "Point", "coordinates": ["2.35", "48.85"]},
    {"type": "Point", "coordinates": [[2.35, 48.85]]},
    {"type": "Pointy", "coordinates": [2.35, 48.85]},
    {"type": "Feature", "geometry": PARIS, "properties": {}},  # a feature, not a geometry
    {"type": "LineString", "coordinates": [[2.35, 48.85]]},  # one position
    {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]},  # not closed
    {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]},  # too few positions
    "POINT(2.35 48.85)",
    [2.35, 48.85],
    None,
    {},
]


@pytest.mark.parametrize("near", BAD_NEAR, ids=[json.dumps(near)[:40] for near in BAD_NEAR])
async def test_bad_geojson_is_400_before_any_statement(service, near):
    before = await statements(service.client)
    response = await service.client.post("/rest/cities/search/nearest", json={"near": near, "field": "location"})
    rest_bad_input(response)
    response = await service.client.post(
        "/graphql", json={"query": NEAREST % ", field: LOCATION", "variables": {"near": near}}
    )
    graphql_error(response)
    assert await statements(service.client) == before


@pytest.mark.parametrize(
    "raw",
    [
        b'{"near": {"type": "Point", "coordinates": [NaN, 48.85]}}',
        b'{"near": {"type": "Point", "coordinates": [2.35, Infinity]}}',
        b'{"near": {"type": "Point", "coordinates": [1e999, 48.85]}}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "maxDistance": NaN}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "maxDistance": -1}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "maxDistance": "far"}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "field": "name"}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "nope": 1}',
        b'{"near": {"type": "Point", "coordinates": [2.35, 48.85]}, "first": 51}',
        b'{"maxDistance": 5}',
        # a geography's positions are longitudes in [-180, 180] and latitudes in [-90, 90]
        b'{"near": {"type": "Point", "coordinates": [2.35, 148.85]}, "field": "area"}',
        b'{"near": {"type": "Point", "coordinates": [200, 48.85]}, "field": "area"}',
    ],
)
async def test_bad_nearest_bodies_are_400_never_500(service, raw):
    before = await statements(service.client)
    response = await service.client.post(
        "/rest/cities/search/nearest", content=raw, headers={"content-type": "application/json"}
    )
    body = rest_bad_input(response, "BAD_USER_INPUT", *TOO_MANY_CODES)
    if b'"nope"' in raw:
        assert body["field"] == "nope"
    assert await statements(service.client) == before


async def test_first_over_the_largest_is_an_error(service):
    response = await service.client.post(
        "/graphql", json={"query": NEAREST % "", "variables": {"near": PARIS, "first": MAX_LIMIT + 1}}
    )
    graphql_error(response, *TOO_MANY_CODES)


@pytest.mark.parametrize("method", ["fuzzy", "full-text", "semantic", "hybrid", "bm25"])
async def test_cities_offer_nearest_only(service, method):
    body = rest_not_found(await service.client.post(f"/rest/cities/search/{method}", json={"query": "Paris"}))
    assert body["supported"] == ["nearest"]


@pytest.mark.parametrize("resource", ["categories", "bookings"])
async def test_tables_without_a_spatial_index_have_no_search(service, resource):
    body = rest_not_found(await service.client.post(f"/rest/{resource}/search/nearest", json={"near": PARIS}))
    assert body["supported"] == []
