"""Functions at `/rest/rpc/{function}` (SPEC "REST API" -> functions): STABLE and IMMUTABLE over GET and POST,
VOLATILE over POST only (GET 405 `Allow: POST`); arguments typed (lists as `1,2,3` or a JSON array), defaults
optional, missing, unknown and mistyped ones 400 naming the parameter or member; a single json/jsonb argument taking
the raw body; sets of rows with the list parameters (in the function's order without `order`), one row or null,
scalars, records, sets of scalars and records, void as 204; a raising function masked in prod."""

import json

import pytest

from tests.support.rest_reads import bad_request, headers, ids, links, problem, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 3, "max": 50}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


async def value(response):
    assert (response.status_code, response.headers["content-type"]) == (200, "application/json"), response.text
    return response.json()


@pytest.mark.parametrize(
    ("path", "params", "body", "expected"),
    [
        ("add", {"a": "1", "b": "2"}, {"args": {"a": 1, "b": 2}}, 3),
        ("twice", {"n": "9007199254740993"}, {"args": {"n": "9007199254740993"}}, "18014398509481986"),  # BigInt
        ("greet", {"name": "Bo"}, {"args": {"name": "Bo"}}, "Hello, Bo"),  # a default
        ("greet", {"name": "Bo", "greeting": "Hi"}, {"args": {"name": "Bo", "greeting": "Hi"}}, "Hi, Bo"),
        ("sum_all", {"numbers": "1,2,3"}, {"args": {"numbers": [1, 2, 3]}}, 6),
        ("sum_all", {"numbers": "[1,2,3]"}, {"args": {"numbers": [1, 2, 3]}}, 6),
        ("sum_all", {"numbers": ""}, {"args": {"numbers": []}}, 0),
        (
            "all_titles",
            {},
            {},
            [
                "A Wizard of Earthsea",
                "The Left Hand of Darkness",
                "Kindred",
                "Bloodchild",
                "Stories of Your Life",
                "Exhalation",
                "100% Pure_Text",
            ],
        ),  # fmt: skip
        ("book_stats", {}, {}, {"books": "7", "pages": "1506"}),  # OUT columns
        (
            "genre_counts",
            {},
            {"args": {}},
            [
                {"genre": "FICTION", "books": "4"},
                {"genre": "NON_FICTION", "books": "1"},
                {"genre": "POETRY", "books": "1"},
                {"genre": None, "books": "1"},
            ],
        ),
    ],
)
async def test_stable_and_immutable_functions_answer_get_and_post_alike(rest, path, params, body, expected):
    assert await value(await rest.get(f"/rest/rpc/{path}", params=params)) == expected
    assert await value(await rest.post(f"/rest/rpc/{path}", json=body)) == expected


async def test_a_post_without_a_body_calls_with_no_arguments(rest):
    assert await value(await rest.post("/rest/rpc/book_stats")) == {"books": "7", "pages": "1506"}


async def test_volatile_functions_answer_post_only_and_write(rest):
    assert (await rest.post("/rest/rpc/reset_hits")).status_code == 204
    got = await rest.get("/rest/rpc/hit")
    assert (got.status_code, headers(got, "allow")) == (405, {"allow": "OPTIONS, POST"})
    assert await value(await rest.post("/rest/rpc/hit")) == 1
    assert await value(await rest.post("/rest/rpc/hit", json={"args": {"step": 5}})) == 6
    assert (await rest.get("/rest/counters/1", params={"fields": "hits"})).json() == {"hits": 6}


async def test_void_answers_204_without_a_body(rest):
    for response in (await rest.get("/rest/rpc/check_nothing"), await rest.post("/rest/rpc/reset_hits")):
        assert (response.status_code, response.content, "content-type" in response.headers) == (204, b"", False)


async def test_a_single_jsonb_argument_takes_the_raw_body(rest):
    for payload in ({"a": [1, {"b": 2}]}, [1, 2], 5, "text", None, {}):
        response = await rest.post("/rest/rpc/echo_json", content=json.dumps(payload).encode())
        assert await value(response) == payload
    assert await value(await rest.post("/rest/rpc/echo_json", json={"args": {"payload": {"x": 1}}})) == {"x": 1}
    assert await value(await rest.get("/rest/rpc/echo_json", params={"payload": '{"x": 1}'})) == {"x": 1}
    missing = await rest.post("/rest/rpc/echo_json")  # no body: no argument, not the payload {}
    assert bad_request(missing) == {"code": "BAD_USER_INPUT", "field": "args.payload"}


async def test_one_row_is_the_row_or_null(rest):
    assert await value(
        await rest.get("/rest/rpc/book_by_title", params={"wanted": "Kindred", "fields": "id,title"})
    ) == {
        "id": 3,
        "title": "Kindred",
    }
    assert await value(await rest.get("/rest/rpc/book_by_title", params={"wanted": "nope"})) is None
    posted = await rest.post(
        "/rest/rpc/book_by_title",
        json={
            "args": {"wanted": "Kindred"},
            "fields": "id",
            "include": "author",
            "embed": {"author": {"fields": "name"}},
        },
    )
    assert await value(posted) == {"id": 3, "author": {"name": "Octavia"}}


async def test_one_row_takes_only_fields_and_includes(rest):
    for response, field in (
        (await rest.get("/rest/rpc/book_by_title", params={"wanted": "x", "first": "1"}), "first"),
        (await rest.post("/rest/rpc/book_by_title", json={"args": {"wanted": "x"}, "order": "id"}), "order"),
    ):
        assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": field}


async def test_a_set_of_rows_is_a_list_with_the_list_parameters(rest):
    response = await rest.get(
        "/rest/rpc/books_by_genre",
        params={
            "wanted": "FICTION",
            "fields": "id,title",
            "include": "author",
            "fields[author]": "name",
            "filter[pages][gt]": "250",
            "order": "-pages",
            "first": "2",
        },
        headers={"Prefer": "count=exact"},
    )
    assert response.json() == [
        {"id": 2, "title": "The Left Hand of Darkness", "author": {"name": "Ursula"}},
        {"id": 5, "title": "Stories of Your Life", "author": {"name": "Ted"}},
    ]
    assert headers(response, "x-total-count", "preference-applied", "accept-ranges") == {
        "x-total-count": "3",
        "preference-applied": "count=exact",
        "accept-ranges": "items",
    }
    following = await rest.get(links(response)["next"])
    assert following.json() == [{"id": 3, "title": "Kindred", "author": {"name": "Octavia"}}]


async def test_without_order_rows_keep_the_functions_order_page_after_page(rest):
    first = await rest.get("/rest/rpc/books_by_pages", params={"fields": "id"})
    assert ids(first) == [6, 2, 5]  # pages descending, as the function orders them
    second = await rest.get(links(first)["next"])
    assert ids(second) == [3, 1, 7]
    assert ids(await rest.get(links(second)["next"])) == [4]
    assert ids(await rest.get(links(second)["prev"])) == [6, 2, 5]


async def test_a_post_continues_with_x_next_cursor(rest):
    body = {"fields": "id", "first": 2}
    first = await rest.post("/rest/rpc/books_by_pages", json=body)
    assert (ids(first), "link" in first.headers) == ([6, 2], False)
    second = await rest.post("/rest/rpc/books_by_pages", json={**body, "after": first.headers["x-next-cursor"]})
    assert ids(second) == [5, 3]
    filtered = await rest.post(
        "/rest/rpc/books_by_genre",
        json={"args": {"wanted": "FICTION"}, "filter": {"pages": {"greaterThan": 270}}, "fields": "id"},
    )
    assert ids(filtered) == [2, 5]


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("add", {"a": "1"}, "b"),  # missing
        ("add", {"a": "1", "b": "x"}, "b"),  # mistyped
        ("add", {"a": "1", "b": "2", "c": "3"}, "c"),  # unknown
        ("greet", {}, "name"),
        ("sum_all", {"numbers": "1,x"}, "numbers"),
        ("books_by_genre", {"wanted": "fiction"}, "wanted"),  # not the GraphQL value
        ("books_by_genre", {"wanted": "FICTION", "order": "nope"}, "order"),
        ("books_by_genre", {"wanted": "FICTION", "filter[nope][eq]": "1"}, "filter[nope]"),
        ("add", {"a": "1", "b": "2", "fields": "x"}, "fields"),  # a value takes no list parameters
    ],
)
async def test_bad_query_arguments_are_400_naming_the_parameter(rest, path, params, field):
    assert bad_request(await rest.get(f"/rest/rpc/{path}", params=params)) == {"code": "BAD_USER_INPUT", "field": field}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("add", {"args": {"a": 1}}, "args.b"),
        ("add", {"args": {"a": 1, "b": "x"}}, "args.b"),
        ("add", {"args": {"a": 1, "b": 2, "c": 3}}, "args.c"),
        ("add", {"a": 1, "b": 2}, "a"),  # arguments go in `args`
        ("add", {"args": [1, 2]}, "args"),
        ("add", {"args": {"a": 1, "b": 2}, "fields": "x"}, "fields"),
        ("sum_all", {"args": {"numbers": "1,2"}}, "args.numbers"),
        ("sum_all", {"args": {"numbers": [1, "x"]}}, "args.numbers[1]"),
        ("books_by_genre", {"args": {"wanted": "FICTION"}, "nope": 1}, "nope"),
    ],
)
async def test_bad_body_arguments_are_400_naming_the_member(rest, path, body, field):
    assert bad_request(await rest.post(f"/rest/rpc/{path}", json=body)) == {"code": "BAD_USER_INPUT", "field": field}


async def test_a_body_that_is_no_object_or_no_json_is_400(rest):
    for content in (b"[1]", b"not json"):
        response = await rest.post("/rest/rpc/add", content=content, headers={"Content-Type": "application/json"})
        assert bad_request(response)["code"] == "BAD_USER_INPUT"


async def test_a_raising_function_is_masked_in_prod(rest):
    for response in (
        await rest.get("/rest/rpc/fail", params={"message": "secret"}),
        await rest.get("/rest/rpc/failing_books"),
    ):
        assert response.status_code == 500
        body = problem(response)
        request_id = response.headers["x-request-id"]
        assert body == {
            "type": "about:blank",
            "title": "Internal Server Error",
            "status": 500,
            "detail": f"an internal error occurred; it was logged under request id {request_id}",
            "instance": response.url.path,
            "code": "INTERNAL_SERVER_ERROR",
        }
        assert "secret" not in response.text and "no books" not in response.text


async def test_a_raising_function_shows_its_message_in_dev(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS, mode="dev") as rest:
        response = await rest.get("/rest/rpc/fail", params={"message": "secret"})
    assert response.status_code == 500
    assert "refused: secret" in response.text


async def test_key_like_arguments_accept_global_ids(rest):
    book = "Qm9vazox"  # the global ID of Book 1 (an Int key)
    assert await value(await rest.get("/rest/rpc/add", params={"a": book, "b": "2"})) == 3
    assert await value(await rest.post("/rest/rpc/add", json={"args": {"a": book, "b": 2}})) == 3
    shelf = "U2hlbGY6Mg=="  # Shelf 2: an Int key too
    assert await value(await rest.post("/rest/rpc/add", json={"args": {"a": shelf, "b": 0}})) == 2
    # Anything else that is no number stays bad input.
    refused = await rest.get("/rest/rpc/add", params={"a": "bm90aGluZw==", "b": "2"})
    assert refused.status_code == 400 and refused.json()["field"] == "a"


async def test_a_call_body_is_json(rest):
    refused = await rest.post("/rest/rpc/add", content=b"a=1&b=2", headers={"Content-Type": "text/plain"})
    assert refused.status_code == 415 and refused.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
