"""Connections in an order that is not total (SPEC "Pagination rules": no row skipped or repeated): a view without a
key, ties in such a view's orderBy, and a function's rows in the function's own order page on by position cursors;
`last` there needs `before`. A function returning one row that has none gives null (SPEC "Functions")."""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 2, "max": 50}}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def walk(gql, field: str, arguments: str, key: str) -> tuple[list[list], list[list]]:
    """Every page forward from the start (first 2, after), then backward from the last page (last 2, before)."""
    query = f"""query($first: Int, $after: Cursor, $last: Int, $before: Cursor) {{
      {field}({arguments} first: $first, after: $after, last: $last, before: $before) {{
        nodes {{ {key} }} pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }} }} }}"""

    async def page(**variables):
        connection = (await gql.data(query, variables))[field]
        return [node[key] for node in connection["nodes"]], connection["pageInfo"]

    rows, info = await page(first=2)
    forward = [rows]
    while info["hasNextPage"]:
        rows, info = await page(first=2, after=info["endCursor"])
        forward.append(rows)
    backward = [rows]
    while info["hasPreviousPage"]:
        rows, info = await page(last=2, before=info["startCursor"])
        backward.append(rows)
    return forward, backward


@pytest.mark.parametrize(
    ("field", "arguments", "key", "pages"),
    [
        ("fictionsConnection", "", "id", [[1, 2], [3, 5]]),
        ("booksByGenre", "wanted: FICTION,", "rowId", [[1, 2], [3, 5]]),
        ("booksByGenre", "wanted: FICTION, orderBy: [PAGES_DESC],", "rowId", [[2, 5], [3, 1]]),
    ],
)
async def test_pages_in_an_order_that_is_not_total_visit_every_row_once(gql, field, arguments, key, pages):
    forward, backward = await walk(gql, field, arguments, key)
    assert forward == pages
    assert backward == pages[::-1]


async def test_ties_in_a_view_without_a_key(gql):
    forward, backward = await walk(gql, "authorTotalsConnection", "orderBy: [BOOKS_DESC],", "authorId")
    assert sorted(forward[0] + forward[1]) == [1, 2, 3, 4] and forward[1][-1] == 4
    assert backward == forward[::-1]


async def test_last_without_before_needs_an_order_that_is_total(gql):
    status, body = await gql.errors("{ fictionsConnection(last: 2) { nodes { id } } }")
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_a_function_returning_no_row_gives_null(gql):
    data = await gql.data(
        """{ found: bookByTitle(wanted: "Kindred") { rowId } missing: bookByTitle(wanted: "nope") { rowId }
             book(rowId: 7) { nextBook { rowId } } }"""
    )
    assert data == {"found": {"rowId": 3}, "missing": None, "book": {"nextBook": None}}
