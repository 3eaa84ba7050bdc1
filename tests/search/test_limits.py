"""`search.default_limit` and `search.max_limit` (SPEC "Limits": search `first`) set the page a search answers
without `first` and the largest `first`, in both APIs (nearest search over the spatial fixture's 30 cities)."""

import pytest

from tests.search.support import rest_bad_input
from tests.support.graphql import Gql
from tests.support.service import running_service

DATABASE_FIXTURES = ["search_spatial.sql"]
SETTINGS = {"database": {"schemas": ["places"]}, "search": {"default_limit": 3, "max_limit": 5}}
PARIS = {"type": "Point", "coordinates": [2.35, 48.85]}
QUERY = "query($first: Int) { citiesNearestSearch(near: %s, first: $first) { hasMore hits { score } } }"


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service


async def test_the_configured_default_and_largest_first(service):
    gql = Gql(service.client)
    near = '{type: "Point", coordinates: [2.35, 48.85]}'
    found = (await gql.data(QUERY % near))["citiesNearestSearch"]
    assert (len(found["hits"]), found["hasMore"]) == (3, True)
    assert len((await gql.data(QUERY % near, {"first": 5}))["citiesNearestSearch"]["hits"]) == 5
    _, body = await gql.errors(QUERY % near, {"first": 6})
    extensions = body["errors"][0]["extensions"]
    assert (extensions["code"], extensions["limit"], extensions["actual"]) == ("PAGE_SIZE_EXCEEDED", 5, 6)
    rest = await service.client.post("/rest/cities/search/nearest", json={"near": PARIS})
    assert len(rest.json()["hits"]) == 3
    problem = rest_bad_input(
        await service.client.post("/rest/cities/search/nearest", json={"near": PARIS, "first": 6}), "PAGE_SIZE_EXCEEDED"
    )
    assert (problem["limit"], problem["actual"]) == (5, 6)
