"""What a path under /rest names and which methods it answers (SPEC "REST API" -> route table): the index, unknown
resources, functions and paths (404), methods a target lacks (405 with `Allow`), OPTIONS (204 with `Allow`,
`Accept-Post`, `Accept-Patch`), HEAD like GET without a body, the reserved words, the routes not served yet, and
global IDs answered with 303 to the row's URL."""

import pytest

from svc.plan import encode_global_id
from tests.support.rest_reads import headers, problem, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


def resource(name: str, type_name: str) -> dict:
    return {"name": name, "schema": "app_public", "type": type_name, "path": f"/rest/{name}"}


def function(name: str, *, mutation: bool = False) -> dict:
    return {"name": name, "schema": "app_public", "path": f"/rest/rpc/{name}", "mutation": mutation}


INDEX = {
    "resources": [
        resource("author_totals", "AuthorTotal"),
        resource("authors", "Author"),
        resource("book_shelves", "BookShelf"),
        resource("books", "Book"),
        resource("categories", "Category"),
        resource("counters", "Counter"),
        resource("fiction", "Fiction"),
        resource("notes", "Note"),
        resource("shelves", "Shelf"),
    ],
    "functions": [
        function("add"),
        function("all_titles"),
        function("book_by_title"),
        function("book_stats"),
        function("books_by_genre"),
        function("books_by_pages"),
        function("check_nothing"),
        function("echo_json"),
        function("fail"),
        function("failing_books"),
        function("genre_counts"),
        function("greet"),
        function("hit", mutation=True),
        function("longest_book"),
        function("reset_hits", mutation=True),
        function("slow"),
        function("sum_all"),
        function("twice"),
    ],
    "openapi": None,  # prod: the document is not served (openapi.spec off)
}


async def test_the_index_lists_resources_functions_and_no_document_in_prod(rest):
    response = await rest.get("/rest")
    assert (response.status_code, headers(response)) == (200, {"content-type": "application/json"})
    assert response.json() == INDEX


async def test_the_index_names_the_document_where_it_is_served(tmp_path, database_url):
    settings = {**SETTINGS, "openapi": {"spec": True, "path": "/api.json"}}
    async with rest_client(tmp_path, database_url, settings) as rest:
        response = await rest.get("/rest")
    assert response.json() == {**INDEX, "openapi": "/api.json"}


async def test_the_index_takes_no_parameters(rest):
    response = await rest.get("/rest", params={"first": "1"})
    assert response.status_code == 400
    assert problem(response)["field"] == "first"


@pytest.mark.parametrize(
    ("path", "detail"),
    [
        ("/rest/nope", "no resource 'nope' at /rest/nope"),
        ("/rest/rpc/nope", "no function 'nope' at /rest/rpc/nope"),
        ("/rest/rpc", "no resource at /rest/rpc"),
        ("/rest/rpc/add/more", "no resource at /rest/rpc/add/more"),
        ("/rest/books/1/title/more", "no resource at /rest/books/1/title/more"),
        ("/rest/books/", "no resource at /rest/books/"),
        ("/rest/", "no resource at /rest/"),
        ("/rest/books_by_genre", "no resource 'books_by_genre' at /rest/books_by_genre"),  # a function is no resource
    ],
)
async def test_unknown_resources_functions_and_paths_are_404(rest, path, detail):
    response = await rest.get(path)
    assert response.status_code == 404
    assert problem(response) == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": detail,
        "instance": path,
        "code": "NOT_FOUND",
    }


@pytest.mark.parametrize("path", ["/rest/fiction/1", "/rest/author_totals/1", "/rest/fiction/1/title"])
async def test_a_resource_without_a_key_has_no_row_paths(rest, path):
    """Views are read by key only when a key exists: without one the row path names nothing (404, not 405)."""
    for method in ("GET", "PATCH", "DELETE", "OPTIONS"):
        response = await rest.request(method, path)
        assert response.status_code == 404, (method, response.text)
        assert problem(response)["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/rest/fiction", "GET, HEAD, OPTIONS"),  # a view: read only
        ("DELETE", "/rest/author_totals", "GET, HEAD, OPTIONS"),
        ("POST", "/rest/books/1", "DELETE, GET, HEAD, OPTIONS, PATCH, PUT"),
        ("PUT", "/rest", "GET, HEAD, OPTIONS"),
        ("GET", "/rest/books/search", "OPTIONS, POST"),
        ("DELETE", "/rest/rpc/add", "GET, HEAD, OPTIONS, POST"),
        ("GET", "/rest/rpc/hit", "OPTIONS, POST"),  # VOLATILE: POST only
        ("POST", "/rest/node/QXV0aG9yOjI=", "GET, HEAD, OPTIONS"),
    ],
)
async def test_methods_a_target_lacks_are_405_with_allow(rest, method, path, allow):
    response = await rest.request(method, path)
    assert (response.status_code, headers(response)) == (
        405,
        {"allow": allow, "content-type": "application/problem+json"},
    )
    assert problem(response) == {
        "type": "about:blank",
        "title": "Method Not Allowed",
        "status": 405,
        "detail": f"{method} is not allowed on {path}",
        "instance": path,
        "code": "METHOD_NOT_ALLOWED",
    }


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "/rest/books",
            {
                "allow": "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT",
                "accept-post": "application/json, text/csv, multipart/form-data",
            },
        ),
        (
            "/rest/books/1",
            {
                "allow": "DELETE, GET, HEAD, OPTIONS, PATCH, PUT",
                "accept-patch": "application/json, application/merge-patch+json, application/json-patch+json, "
                "multipart/form-data",
            },
        ),
        ("/rest/fiction", {"allow": "GET, HEAD, OPTIONS"}),
        ("/rest", {"allow": "GET, HEAD, OPTIONS"}),
        ("/rest/rpc/add", {"allow": "GET, HEAD, OPTIONS, POST"}),
        ("/rest/rpc/hit", {"allow": "OPTIONS, POST"}),
        ("/rest/books/search", {"allow": "OPTIONS, POST"}),
    ],
)
async def test_options_answers_204_with_allow_and_accepted_media_types(rest, path, expected):
    response = await rest.options(path)
    assert (response.status_code, headers(response), response.content) == (204, expected, b"")


@pytest.mark.parametrize(
    "path", ["/rest", "/rest/books?first=2&fields=id", "/rest/books/1", "/rest/rpc/add?a=1&b=2", "/rest/nope"]
)
async def test_head_answers_like_get_without_a_body(rest, path):
    got, head = await rest.get(path), await rest.head(path)
    assert head.status_code == got.status_code
    assert head.content == b""
    assert headers(head) == headers(got)
    assert head.headers["content-length"] == str(len(got.content))


@pytest.mark.parametrize(
    ("method", "path", "detail", "extra"),
    [
        (
            "POST",
            "/rest/books/search/fuzzy",
            "'fuzzy' is not a search method of /rest/books; it supports none (no search index)",
            {"supported": []},
        ),
        ("GET", "/rest/search", "no resource is searchable here: none has a text search index", {}),
        ("POST", "/rest/search", "no resource is searchable here: none has a text search index", {}),
    ],
)
async def test_searches_of_resources_without_a_search_index_are_404(rest, method, path, detail, extra):
    response = await rest.request(method, path)
    assert response.status_code == 404
    assert problem(response) == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": detail,
        "instance": path,
        "code": "NOT_FOUND",
        **extra,
    }


@pytest.mark.parametrize(
    "path",
    [
        "/rest/books/search/fuzzy",
        "/rest/search",
        "/rest/books/1/title",  # not a binary column
        f"/rest/node/{encode_global_id('Nope', 1)}",  # a type not served here
        "/rest/nope",
    ],
)
async def test_options_on_a_route_not_served_is_404_like_any_other_method(rest, path):
    options, got = await rest.options(path), await rest.get(path)
    assert (options.status_code, "allow" in options.headers) == (404, False)
    assert problem(options) == problem(got)


async def test_a_global_id_answers_303_to_the_rows_url(rest):
    response = await rest.get(f"/rest/node/{encode_global_id('Author', 2)}")
    assert (response.status_code, headers(response), response.content) == (
        303,
        {"location": "/rest/authors/2"},
        b"",
    )
    followed = await rest.get(response.headers["location"], params={"fields": "id,name"})
    assert followed.json() == {"id": 2, "name": "Octavia"}


@pytest.mark.parametrize(
    "node_id",
    [
        "garbage",
        encode_global_id("Nope", 1),  # a type this service does not have (another service's ID)
        encode_global_id("BookShelf", 1),  # a type without a single-column key
        encode_global_id("Fiction", 1),  # a view: no global IDs
        "Qm9vazo=",  # "Book:" without a key
    ],
)
async def test_a_global_id_that_names_no_row_type_here_is_404(rest, node_id):
    response = await rest.get(f"/rest/node/{node_id}")
    assert response.status_code == 404
    assert problem(response)["detail"] == f"{node_id!r} is not the global ID of a row served here"


async def test_node_is_a_reserved_word_with_one_segment_after_it(rest):
    for path in ("/rest/node", f"/rest/node/{encode_global_id('Author', 2)}/name"):
        assert (await rest.get(path)).status_code == 404


async def test_a_row_whose_key_is_a_reserved_route_word_is_not_read_by_key(rest):
    """`aggregate` and `search` after a resource are routes, never keys (SPEC route table): the table's aggregates,
    not the row keyed `aggregate`."""
    assert (await rest.get("/rest/notes/aggregate")).json() == {"count": 7}
    assert (await rest.get("/rest/notes/search")).status_code == 405
