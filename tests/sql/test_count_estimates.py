"""`totalCount(estimate: true)` (SPEC "Totals"): the count query is EXPLAINed as text built by format(), where a
statement's parameters cannot reach, so every value in it is a quoted literal of format(), a function's arguments
included."""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def test_a_function_connection_estimates_its_count_with_its_arguments(gql):
    data = await gql.data(
        """{ booksByGenre(wanted: FICTION, first: 1, filter: {title: {isNull: false}}) {
               exact: totalCount estimated: totalCount(estimate: true) below: totalCount(estimate: true, exactBelow: 1000)
             } }"""
    )
    counts = data["booksByGenre"]
    assert counts["exact"] == 4 and counts["below"] == 4
    assert isinstance(counts["estimated"], int) and counts["estimated"] >= 1
