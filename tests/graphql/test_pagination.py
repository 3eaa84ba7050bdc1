"""Keyset pagination (SPEC "Pagination rules" 1-6, "Totals"): a total order (the key appended), opaque cursors valid
only for their orderBy, forward and backward reads, `first` with `last`, `offset`, pageInfo from one extra row, the
default page size, and totalCount exact, estimated, or exact below a bound.

Prices in the fixture tie (12.50 twice, 15.00 twice) and one is NULL, so every order here has ties and NULLs.
"""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 3, "max": 50}}}

ORDERS = {
    "PRICE_ASC": [7, 1, 2, 3, 5, 6, 4],  # NULL last ascending; ties in key order
    "PRICE_DESC": [4, 5, 6, 2, 3, 1, 7],  # NULL first descending
    "PRICE_ASC_NULLS_FIRST": [4, 7, 1, 2, 3, 5, 6],
    "PRICE_DESC_NULLS_LAST": [5, 6, 2, 3, 1, 7, 4],
    "PRIMARY_KEY_DESC": [7, 6, 5, 4, 3, 2, 1],
}
PAGE = """query($first: Int, $last: Int, $after: Cursor, $before: Cursor, $offset: Int, $order: [BookOrderBy!]) {
  booksConnection(first: $first, last: $last, after: $after, before: $before, offset: $offset, orderBy: $order) {
    edges { cursor node { rowId } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}"""


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def page(gql, **variables):
    return (await gql.data(PAGE, variables))["booksConnection"]


def ids(connection) -> list[int]:
    return [edge["node"]["rowId"] for edge in connection["edges"]]


@pytest.mark.parametrize("order", sorted(ORDERS))
async def test_forward_pages_visit_every_row_once_in_order(gql, order):
    seen, after, pages = [], None, 0
    while True:
        connection = await page(gql, first=2, after=after, order=[order])
        pages += 1
        seen += ids(connection)
        info = connection["pageInfo"]
        assert info["hasPreviousPage"] is (after is not None)
        assert info["startCursor"] == connection["edges"][0]["cursor"]
        assert info["endCursor"] == connection["edges"][-1]["cursor"]
        if not info["hasNextPage"]:
            break
        after = info["endCursor"]
    assert seen == ORDERS[order]
    assert pages == 4


@pytest.mark.parametrize("order", sorted(ORDERS))
async def test_backward_pages_visit_every_row_once_and_come_in_order(gql, order):
    pages, before = [], None
    while True:
        connection = await page(gql, last=2, before=before, order=[order])
        pages.insert(0, ids(connection))
        info = connection["pageInfo"]
        assert info["hasNextPage"] is (before is not None)
        if not info["hasPreviousPage"]:
            break
        before = info["startCursor"]
    assert pages == [ORDERS[order][:1], ORDERS[order][1:3], ORDERS[order][3:5], ORDERS[order][5:]]


async def test_after_and_before_together(gql):
    full = await page(gql, first=7, order=["PRICE_ASC"])
    cursors = [edge["cursor"] for edge in full["edges"]]
    between = await page(gql, first=10, after=cursors[1], before=cursors[5], order=["PRICE_ASC"])
    assert ids(between) == ORDERS["PRICE_ASC"][2:5]


async def test_first_and_last_together_give_the_last_rows_of_the_first(gql):
    connection = await page(gql, first=5, last=2, order=["PRICE_ASC"])
    assert ids(connection) == [3, 5]
    assert connection["pageInfo"]["hasNextPage"] is True
    assert connection["pageInfo"]["hasPreviousPage"] is True
    short = await page(gql, first=3, last=5, order=["PRICE_ASC"])
    assert ids(short) == [7, 1, 2]
    assert short["pageInfo"]["hasPreviousPage"] is False


async def test_offset_skips_rows_in_the_direction_read(gql):
    assert ids(await page(gql, first=2, offset=3, order=["PRICE_ASC"])) == [3, 5]
    forward = await page(gql, first=2, offset=3, order=["PRICE_ASC"])
    assert forward["pageInfo"]["hasPreviousPage"] is True
    assert ids(await page(gql, last=2, offset=1, order=["PRICE_ASC"])) == [5, 6]
    full = await page(gql, first=7, order=["PRICE_ASC"])
    after_second = await page(gql, first=2, offset=1, after=full["edges"][1]["cursor"], order=["PRICE_ASC"])
    assert ids(after_second) == [3, 5]


async def test_the_default_page_size(gql):
    connection = await page(gql)
    assert ids(connection) == [1, 2, 3]  # limits.page_size.default, in key order
    assert connection["pageInfo"]["hasNextPage"] is True


async def test_the_last_page_has_no_next_page(gql):
    connection = await page(gql, first=7)
    assert len(ids(connection)) == 7 and connection["pageInfo"]["hasNextPage"] is False
    empty = await page(gql, first=0)
    assert ids(empty) == [] and empty["pageInfo"] == {
        "hasNextPage": True,
        "hasPreviousPage": False,
        "startCursor": None,
        "endCursor": None,
    }


async def test_a_cursor_is_valid_only_for_its_order(gql):
    cursor = (await page(gql, first=1, order=["PRICE_ASC"]))["pageInfo"]["endCursor"]
    status, body = await gql.errors(PAGE, {"first": 1, "after": cursor, "order": ["PRICE_DESC"]})
    assert status == 400
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"] == "this cursor was not issued by this connection for this orderBy"
    assert error["path"] == ["booksConnection"]
    other_type = await gql.data("{ authorsConnection(first: 1) { pageInfo { endCursor } } }")
    foreign = other_type["authorsConnection"]["pageInfo"]["endCursor"]
    assert (await gql.errors(PAGE, {"first": 1, "after": foreign}))[0] == 400
    for garbage in ("nope", "WyJ4Il0=", ""):
        status, body = await gql.errors(PAGE, {"first": 1, "before": garbage})
        assert (status, body["errors"][0]["extensions"]["code"]) == (400, "BAD_USER_INPUT")


async def test_page_sizes_over_the_limit_and_negative_ones(gql):
    status, body = await gql.errors(PAGE, {"last": 51})
    assert status == 400
    assert body["errors"][0]["extensions"] | {"requestId": None} == {
        "code": "PAGE_SIZE_EXCEEDED",
        "limit": 50,
        "actual": 51,
        "requestId": None,
    }
    status, body = await gql.errors(PAGE, {"first": -1})
    assert (status, body["errors"][0]["extensions"]["code"]) == (400, "BAD_USER_INPUT")


async def test_total_count_exact_estimated_and_exact_below(gql):
    data = await gql.data(
        """{ all: booksConnection(first: 1) { totalCount }
             fiction: booksConnection(first: 1, filter: {genre: {equalTo: FICTION}}) {
               exact: totalCount estimated: totalCount(estimate: true) below: totalCount(estimate: true, exactBelow: 1000)
             } }"""
    )
    assert data["all"] == {"totalCount": 7}
    fiction = data["fiction"]
    assert fiction["exact"] == 4 and fiction["below"] == 4
    assert isinstance(fiction["estimated"], int) and fiction["estimated"] >= 1
    over = await gql.data("{ booksConnection(first: 1) { totalCount(estimate: true, exactBelow: 0) } }")
    assert over["booksConnection"]["totalCount"] >= 1  # the estimate, since it is above 0


async def test_nested_connections_page_and_count_per_parent(gql):
    data = await gql.data(
        """{ authors { name booksConnection(first: 1, orderBy: PUBLISHED_DESC) {
               totalCount nodes { title } pageInfo { hasNextPage } } } }"""
    )
    assert data["authors"] == [
        {
            "name": "Ursula",
            "booksConnection": {
                "totalCount": 2,
                "nodes": [{"title": "The Left Hand of Darkness"}],
                "pageInfo": {"hasNextPage": True},
            },
        },
        {
            "name": "Octavia",
            "booksConnection": {"totalCount": 2, "nodes": [{"title": "Bloodchild"}], "pageInfo": {"hasNextPage": True}},
        },
        {
            "name": "Ted",
            "booksConnection": {"totalCount": 2, "nodes": [{"title": "Exhalation"}], "pageInfo": {"hasNextPage": True}},
        },
        {
            "name": "Anonymous",
            "booksConnection": {
                "totalCount": 1,
                "nodes": [{"title": "100% Pure_Text"}],
                "pageInfo": {"hasNextPage": False},
            },
        },
    ]


async def test_nested_connections_estimate_their_counts_too(gql):
    data = await gql.data(
        "{ authors(first: 2) { booksConnection(first: 1) { totalCount(estimate: true) exact: totalCount } } }"
    )
    for author in data["authors"]:
        connection = author["booksConnection"]
        assert isinstance(connection["totalCount"], int) and connection["totalCount"] >= 1
        assert connection["exact"] == 2
