"""Counts, ranges and search bodies (SPEC "REST API" -> counts, ranges, route table `POST /rest/{resource}/search`):
`Prefer: count=exact|planned|estimated` with `X-Total-Count`, `Preference-Applied` and `X-Total-Count-Estimate`;
`Range: items=A-B` answered 206 with `Content-Range`, 200 when it covers the list, 416 past the end or inverted,
ignored in other forms, 400 beside page parameters, cut at the largest page; a search answers with `X-Next-Cursor` and
`X-Previous-Cursor` instead of `Link`."""

import psycopg
import pytest

from tests.support.rest_reads import bad_request, headers, ids, problem, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {
    "database": {"schemas": ["app_public"]},
    "limits": {"page_size": {"default": 3, "max": 5}, "count_threshold": 5},
}
LIST = {"content-type": "application/json", "accept-ranges": "items"}


@pytest.fixture(scope="module", autouse=True)
def analyzed(database_url):
    """Statistics, so the planner's estimate of the 7 books is 7."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("analyze app_public.books")


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


def without_link(response) -> dict:
    return {k: v for k, v in headers(response).items() if k != "link"}


async def test_count_exact(rest):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Prefer": "count=exact"})
    assert ids(response) == [1, 2, 3]
    assert without_link(response) == {**LIST, "x-total-count": "7", "preference-applied": "count=exact"}
    filtered = await rest.get("/rest/books", params={"filter[genre][eq]": "FICTION"}, headers={"Prefer": "count=exact"})
    assert filtered.headers["x-total-count"] == "4"


async def test_count_planned_is_always_an_estimate(rest):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Prefer": "count=planned"})
    assert without_link(response) == {
        **LIST,
        "x-total-count": "7",
        "x-total-count-estimate": "true",
        "preference-applied": "count=planned",
    }
    one = await rest.get("/rest/books", params={"filter[id][eq]": "1"}, headers={"Prefer": "count=planned"})
    assert headers(one, "x-total-count", "x-total-count-estimate") == {
        "x-total-count": "1",
        "x-total-count-estimate": "true",
    }


async def test_count_estimated_is_exact_below_the_threshold(rest):
    above = await rest.get("/rest/books", params={"fields": "id"}, headers={"Prefer": "count=estimated"})
    assert without_link(above) == {
        **LIST,
        "x-total-count": "7",  # the estimate: above count_threshold (5)
        "x-total-count-estimate": "true",
        "preference-applied": "count=estimated",
    }
    below = await rest.get(
        "/rest/books", params={"fields": "id", "filter[id][lte]": "2"}, headers={"Prefer": "count=estimated"}
    )
    assert without_link(below) == {**LIST, "x-total-count": "2", "preference-applied": "count=estimated"}


async def test_count_estimated_under_the_default_threshold_is_exact(tmp_path, database_url):
    settings = {"database": {"schemas": ["app_public"]}}
    async with rest_client(tmp_path, database_url, settings) as rest:
        response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Prefer": "count=estimated"})
    assert without_link(response) == {**LIST, "x-total-count": "7", "preference-applied": "count=estimated"}


@pytest.mark.parametrize(
    ("prefer", "applied"),
    [
        ("count=exact, return=minimal", "count=exact"),  # a list applies only the count
        ('count="exact"', "count=exact"),
        ("return=representation; count=exact", None),  # parameters of a preference are not preferences
        ("count=bogus", None),  # unknown values are ignored (RFC 7240)
        ("handling=strict", None),
    ],
)
async def test_only_applied_preferences_are_named(rest, prefer, applied):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Prefer": prefer})
    assert response.status_code == 200
    assert response.headers.get("preference-applied") == applied
    assert ("x-total-count" in response.headers) is (applied is not None)


async def test_a_range_answers_206_with_its_content_range(rest):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Range": "items=1-2"})
    assert (response.status_code, ids(response)) == (206, [2, 3])
    assert without_link(response) == {**LIST, "content-range": "items 1-2/*"}
    counted = await rest.get(
        "/rest/books", params={"fields": "id"}, headers={"Range": "items=0-1", "Prefer": "count=exact"}
    )
    assert (counted.status_code, ids(counted)) == (206, [1, 2])
    assert without_link(counted) == {
        **LIST,
        "content-range": "items 0-1/7",
        "x-total-count": "7",
        "preference-applied": "count=exact",
    }


async def test_an_open_range_is_cut_at_the_largest_page(rest):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Range": "items=1-"})
    assert (response.status_code, ids(response), response.headers["content-range"]) == (
        206,
        [2, 3, 4, 5, 6],
        "items 1-5/*",
    )
    wide = await rest.get("/rest/books", params={"fields": "id"}, headers={"Range": "items=0-100"})
    assert (wide.status_code, ids(wide), wide.headers["content-range"]) == (206, [1, 2, 3, 4, 5], "items 0-4/*")


async def test_a_range_covering_the_whole_list_answers_200(rest):
    params = {"fields": "id", "filter[genre][eq]": "FICTION"}
    response = await rest.get("/rest/books", params=params, headers={"Range": "items=0-9"})
    assert (response.status_code, ids(response)) == (200, [1, 2, 3, 5])
    assert headers(response) == {**LIST, "content-range": "items 0-3/*"}
    empty = await rest.get("/rest/books", params={"filter[id][gt]": "99"}, headers={"Range": "items=0-"})
    assert (empty.status_code, empty.json(), empty.headers["content-range"]) == (200, [], "items */*")


@pytest.mark.parametrize(
    ("range_", "prefer", "content_range", "detail"),
    [
        ("items=7-9", None, "items */*", "the range items=7-9 starts past the end of the list"),
        ("items=7-9", "count=exact", "items */7", "the range items=7-9 starts past the end of the list"),
        ("items=20-", "count=exact", "items */7", "the range items=20- starts past the end of the list"),
        ("items=3-1", None, "items */*", "the range items=3-1 ends before it starts"),
        ("items=3-1", "count=exact", "items */7", "the range items=3-1 ends before it starts"),
    ],
)
async def test_a_range_past_the_end_or_inverted_is_416(rest, range_, prefer, content_range, detail):
    sent = {"Range": range_, **({"Prefer": prefer} if prefer else {})}
    response = await rest.get("/rest/books", headers=sent)
    assert (response.status_code, headers(response)) == (
        416,
        {"content-type": "application/problem+json", "content-range": content_range},
    )
    assert problem(response) == {
        "type": "about:blank",
        "title": "Range Not Satisfiable",
        "status": 416,
        "detail": detail,
        "instance": "/rest/books",
        "code": "RANGE_NOT_SATISFIABLE",
    }


@pytest.mark.parametrize("range_", ["rows=0-1", "items=-2", "items=0-1,3-4", "items=a-b", "items", "bytes=0-1"])
async def test_other_units_suffixes_and_several_ranges_are_ignored(rest, range_):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Range": range_})
    assert (response.status_code, ids(response), "content-range" in response.headers) == (200, [1, 2, 3], False)


@pytest.mark.parametrize("parameter", ["first", "last", "offset", "after", "before"])
async def test_a_range_beside_page_parameters_is_400(rest, parameter):
    response = await rest.get("/rest/books", params={parameter: "1"}, headers={"Range": "items=0-1"})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": "Range"}


async def test_a_range_of_a_functions_rows(rest):
    response = await rest.get(
        "/rest/rpc/books_by_pages", params={"fields": "id"}, headers={"Range": "items=1-2", "Prefer": "count=exact"}
    )
    assert (response.status_code, ids(response), response.headers["content-range"]) == (206, [2, 5], "items 1-2/7")


async def test_every_list_accepts_ranges(rest):
    for path in ("/rest/books", "/rest/fiction", "/rest/rpc/books_by_pages"):
        assert (await rest.get(path)).headers["accept-ranges"] == "items"
    assert "accept-ranges" not in (await rest.get("/rest/books/1")).headers


async def test_a_search_takes_the_list_options_in_its_body_and_answers_cursors_in_headers(rest):
    body = {"filter": {"pages": {"greaterThan": 200}}, "order": "-pages", "first": 2, "fields": ["id", "pages"]}
    first = await rest.post("/rest/books/search", json=body, headers={"Prefer": "count=exact"})
    assert first.json() == [{"id": 6, "pages": 352}, {"id": 2, "pages": 304}]
    assert set(headers(first)) == {
        "content-type",
        "accept-ranges",
        "x-next-cursor",
        "x-total-count",
        "preference-applied",
    }
    assert first.headers["x-total-count"] == "5"
    second = await rest.post("/rest/books/search", json={**body, "after": first.headers["x-next-cursor"]})
    assert second.json() == [{"id": 5, "pages": 281}, {"id": 3, "pages": 264}]
    assert set(headers(second)) == {"content-type", "accept-ranges", "x-next-cursor", "x-previous-cursor"}
    back = await rest.post(
        "/rest/books/search", json={**body, "first": None, "last": 2, "before": second.headers["x-previous-cursor"]}
    )
    assert back.json() == first.json()
    last = await rest.post("/rest/books/search", json={**body, "after": second.headers["x-next-cursor"]})
    assert (last.json(), "x-next-cursor" in last.headers) == ([{"id": 1, "pages": 205}], False)


async def test_a_search_body_takes_includes_embedding_and_inner(rest):
    body = {
        "fields": "name",
        "include": ["books"],
        "embed": {"books": {"filter": {"pages": {"greaterThan": 300}}, "fields": "title", "first": 1}},
        "inner": "books",
    }
    response = await rest.post("/rest/authors/search", json=body)
    assert response.json() == [
        {"name": "Ursula", "books": [{"title": "The Left Hand of Darkness"}]},
        {"name": "Ted", "books": [{"title": "Exhalation"}]},
    ]


async def test_an_empty_search_body_lists_the_first_page(rest):
    response = await rest.post("/rest/books/search", content=b"", headers={"Content-Type": "application/json"})
    assert ids(response) == [1, 2, 3]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"nope": 1}, "nope"),
        ({"embed": {"books": {"nope": 1}}}, "embed.books.nope"),
        ({"embed": {"books": 1}}, "embed.books"),
        ({"embed": []}, "embed"),
        ([], "body"),
        ({"first": -1}, "first"),
        ({"order": "nope"}, "order"),
    ],
)
async def test_a_search_refuses_unknown_members_naming_them(rest, body, field):
    response = await rest.post("/rest/authors/search", json=body)
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": field}


async def test_a_search_refuses_a_query_string(rest):
    response = await rest.post("/rest/books/search?first=1", json={})
    assert bad_request(response) == {"code": "BAD_USER_INPUT"}
    assert response.json()["detail"] == "a search takes its options in the body: the query string must be empty"
