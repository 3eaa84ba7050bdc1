"""Lists and their parameters (SPEC "REST API" -> list query parameters, "Pagination rules", "Limits"): `order` in
all its forms, keyset pages (`first`/`after`, `last`/`before`, `offset`) walked through `Link` with no row skipped or
repeated over ties, in views without a key and in a function's own order too; `fields`, `cursors`, `args` of computed
fields, `path` into JSON columns; `window` and `asOf` refused with a clear message; unknown parameters, page sizes,
depth and cost refused before any SQL."""

import pytest

from tests.support.rest_reads import bad_request, headers, ids, links, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 3, "max": 50}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


async def test_a_list_is_a_page_of_rows_in_key_order_with_a_link_to_the_next(rest):
    response = await rest.get("/rest/authors", params={"fields": "id,name"})
    assert response.json() == [{"id": 1, "name": "Ursula"}, {"id": 2, "name": "Octavia"}, {"id": 3, "name": "Ted"}]
    next_page = links(response)["next"]
    assert next_page.startswith("/rest/authors?fields=id,name&first=3&after=")  # the default page size: 3
    assert (await rest.get(next_page)).json() == [{"id": 4, "name": "Anonymous"}]


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("price", [7, 1, 2, 3, 5, 6, 4]),  # NULL last ascending; ties in key order
        ("-price", [4, 5, 6, 2, 3, 1, 7]),  # NULL first descending
        ("price:desc", [4, 5, 6, 2, 3, 1, 7]),
        ("price:asc", [7, 1, 2, 3, 5, 6, 4]),
        ("price:nullsfirst", [4, 7, 1, 2, 3, 5, 6]),
        ("price:desc:nullslast", [5, 6, 2, 3, 1, 7, 4]),
        ("-price:nullslast", [5, 6, 2, 3, 1, 7, 4]),
        ("PRICE:DESC:NULLSLAST", [5, 6, 2, 3, 1, 7, 4]),  # suffixes in any case
        ("-price,title", [4, 6, 5, 3, 2, 1, 7]),
        ("genre,-published", [5, 3, 2, 1, 6, 4, 7]),  # enum order: fiction, non-fiction, poetry
        ("copies_sold", [7, 6, 5, 3, 2, 1, 4]),  # a database column name
        ("author.name", [7, 3, 4, 5, 6, 1, 2]),  # a to-one relation's column
        ("-author.born", [7, 5, 6, 3, 4, 1, 2]),
        ("author.name,-id", [7, 4, 3, 6, 5, 2, 1]),
        ("-bookShelvesCount", [1, 2, 3, 5, 4, 6, 7]),  # a to-many relation's row count, three spellings
        ("book_shelves_count:desc", [1, 2, 3, 5, 4, 6, 7]),
        ("-BOOK_SHELVES_COUNT", [1, 2, 3, 5, 4, 6, 7]),
        ("-titleUpper", [2, 5, 3, 6, 4, 1, 7]),  # a computed orderable column
        ("natural", [1, 2, 3, 4, 5, 6, 7]),
        ("primary_key", [1, 2, 3, 4, 5, 6, 7]),
        ("-primary_key", [7, 6, 5, 4, 3, 2, 1]),
        ("-id", [7, 6, 5, 4, 3, 2, 1]),
    ],
)
async def test_order(rest, order, expected):
    response = await rest.get("/rest/books", params={"fields": "id", "order": order, "first": "50"})
    assert ids(response) == expected


@pytest.mark.parametrize("order", ["nope", "author.nope", "shelves.label", "price:sideways", "-", "details", "tags"])
async def test_an_order_the_type_does_not_offer_is_400(rest, order):
    response = await rest.get("/rest/books", params={"order": order})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": "order"}


async def walk(rest, path: str, params: dict, relation: str, key: str = "id") -> list[list]:
    """Every page from `path`, following `Link` rel=`relation` until there is none."""
    pages = []
    response = await rest.get(path, params=params)
    while True:
        assert response.status_code == 200, response.text
        pages.append([row[key] for row in response.json()])
        target = links(response).get(relation)
        if target is None:
            return pages
        response = await rest.get(target)


WALKS = [
    ("/rest/books", {"order": "price"}, [[7, 1], [2, 3], [5, 6], [4]]),  # ties (12.50, 15.00) and a NULL
    ("/rest/books", {"order": "-price:nullslast,title"}, [[6, 5], [3, 2], [1, 7], [4]]),
    ("/rest/books", {"order": "author.name"}, [[7, 3], [4, 5], [6, 1], [2]]),
    ("/rest/books", {"order": "-bookShelvesCount"}, [[1, 2], [3, 5], [4, 6], [7]]),
    ("/rest/books", {"order": "-titleUpper", "filter[pages][gt]": "200"}, [[2, 5], [3, 6], [1]]),
    ("/rest/books", {"order": "natural"}, [[1, 2], [3, 4], [5, 6], [7]]),
    ("/rest/fiction", {}, [[1, 2], [3, 5]]),  # a view without a key: positions
    ("/rest/fiction", {"order": "-pages"}, [[2, 5], [3, 1]]),
    ("/rest/rpc/books_by_pages", {}, [[6, 2], [5, 3], [1, 7], [4]]),  # the function's own order
    ("/rest/rpc/books_by_pages", {"filter[genre][eq]": "FICTION"}, [[2, 5], [3, 1]]),
    ("/rest/rpc/books_by_pages", {"order": "title"}, [[7, 1], [4, 6], [3, 5], [2]]),
]


@pytest.mark.parametrize(("path", "params", "pages"), WALKS)
async def test_link_next_and_prev_walk_every_row_once(rest, path, params, pages):
    forward = await walk(rest, path, {"fields": "id", "first": "2", **params}, "next")
    assert forward == pages
    last_page = {"fields": "id", "first": "2", **params, "offset": str(2 * (len(pages) - 1))}
    backward = await walk(rest, path, last_page, "prev")
    assert backward == pages[::-1]


async def test_ties_in_a_view_without_a_key_are_neither_skipped_nor_repeated(rest):
    """`author_totals` has no key and three authors tie at 2 books: cursors hold positions, not order values."""
    pages = await walk(
        rest, "/rest/author_totals", {"fields": "authorId", "order": "-books", "first": "2"}, "next", "authorId"
    )
    assert len(pages) == 2 and sorted(pages[0] + pages[1]) == [1, 2, 3, 4]
    assert pages[1][-1] == 4  # the one author with a single book comes last


async def test_first_after_last_before_and_offset(rest):
    first_two = await rest.get("/rest/books", params={"fields": "id", "first": "2", "cursors": "true"})
    cursor = first_two.json()[-1]["_cursor"]
    page = await rest.get("/rest/books", params={"fields": "id", "first": "2", "after": cursor})
    assert ids(page) == [3, 4]
    skipped = await rest.get("/rest/books", params={"fields": "id", "first": "2", "after": cursor, "offset": "1"})
    assert ids(skipped) == [4, 5]
    before = page.json()  # the cursor of row 3, from its page's cursors
    row_three = (
        await rest.get("/rest/books", params={"fields": "id", "cursors": "true", "offset": "2", "first": "1"})
    ).json()
    assert before == [{"id": 3}, {"id": 4}]
    back = await rest.get("/rest/books", params={"fields": "id", "last": "2", "before": row_three[0]["_cursor"]})
    assert ids(back) == [1, 2]
    assert ids(await rest.get("/rest/books", params={"fields": "id", "last": "2"})) == [6, 7]
    assert ids(await rest.get("/rest/books", params={"fields": "id", "offset": "5"})) == [6, 7]
    assert ids(await rest.get("/rest/books", params={"fields": "id", "first": "0"})) == []


async def test_link_keeps_the_other_parameters_and_drops_the_old_page(rest):
    params = {"fields": "id", "filter[pages][gt]": "200", "order": "-pages", "first": "1", "offset": "1"}
    response = await rest.get("/rest/books", params=params)
    assert ids(response) == [2]
    found = links(response)
    assert found["next"].startswith("/rest/books?fields=id&filter%5Bpages%5D%5Bgt%5D=200&order=-pages&first=1&after=")
    assert found["prev"].startswith("/rest/books?fields=id&filter%5Bpages%5D%5Bgt%5D=200&order=-pages&last=1&before=")
    assert ids(await rest.get(found["next"])) == [5]
    assert ids(await rest.get(found["prev"])) == [6]


async def test_the_last_page_has_no_next_link_and_the_first_no_prev_link(rest):
    response = await rest.get("/rest/books", params={"fields": "id", "first": "50"})
    assert (ids(response), links(response)) == ([1, 2, 3, 4, 5, 6, 7], {})


async def test_a_cursor_is_valid_only_for_its_order(rest):
    response = await rest.get("/rest/books", params={"fields": "id", "first": "1", "order": "price"})
    cursor = response.json() and links(response)["next"].rpartition("after=")[2]
    for params in ({"order": "-price", "after": cursor}, {"after": cursor}, {"after": "garbage"}, {"before": "x"}):
        problem = bad_request(await rest.get("/rest/books", params={"first": "1", **params}))
        assert problem == {"code": "BAD_USER_INPUT", "field": "after" if "after" in params else "before"}
    fiction = await rest.get("/rest/fiction", params={"first": "1"})
    other = links(fiction)["next"].rpartition("after=")[2]
    assert bad_request(await rest.get("/rest/rpc/books_by_pages", params={"after": other}))["field"] == "after"


async def test_last_needs_before_in_an_order_that_is_not_total(rest):
    problem = bad_request(await rest.get("/rest/fiction", params={"last": "2"}))
    assert problem == {"code": "BAD_USER_INPUT", "field": "last"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"first": "-1"}, "first"),
        ({"first": "x"}, "first"),
        ({"last": "1.5"}, "last"),
        ({"offset": "-2"}, "offset"),
        ({"cursors": "yes"}, "cursors"),
        ({"nope": "1"}, "nope"),
        ({"select": "id"}, "select"),  # PostgREST's name is not ours
        ({"id": "eq.1"}, "id"),
        ({"filter[title][eq]": "a", "nope[x]": "1"}, "nope[x]"),
        ({"fields": "id", "first": "1", "limit": "1"}, "limit"),
    ],
)
async def test_unknown_parameters_and_bad_page_values_are_400_naming_the_parameter(rest, params, field):
    assert bad_request(await rest.get("/rest/books", params=params)) == {"code": "BAD_USER_INPUT", "field": field}


async def test_a_parameter_given_twice_is_400(rest):
    response = await rest.get("/rest/books?first=1&first=2")
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": "first"}


@pytest.mark.parametrize(("name", "size"), [("first", "51"), ("last", "1000")])
async def test_a_page_over_the_largest_is_page_size_exceeded(rest, name, size):
    response = await rest.get("/rest/books", params={name: size})
    assert bad_request(response) == {"code": "PAGE_SIZE_EXCEEDED", "limit": 50, "actual": int(size)}


async def test_fields_pick_columns_row_version_and_computed_values(rest):
    response = await rest.get("/rest/books", params={"fields": "title,id,copies_sold,titleUpper", "first": "1"})
    assert response.json() == [
        {
            "title": "A Wizard of Earthsea",
            "id": 1,
            "copiesSold": "9007199254740993",
            "titleUpper": "A WIZARD OF EARTHSEA",
        }
    ]
    versioned = await rest.get("/rest/shelves", params={"fields": "rowVersion", "first": "1"})
    assert list(versioned.json()[0]) == ["rowVersion"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [("nope", "fields"), ("author", "fields"), ("id,longBooks", None), ("bookShelves", "fields")],
)
async def test_fields_that_are_no_columns_are_400(rest, fields, field):
    resource = "authors" if "longBooks" in fields else "books"
    problem = bad_request(await rest.get(f"/rest/{resource}", params={"fields": fields}))
    assert problem == {"code": "BAD_USER_INPUT", "field": field or "fields"}


async def test_cursors_give_each_row_its_cursor(rest):
    response = await rest.get(
        "/rest/books", params={"fields": "id", "first": "2", "order": "-pages", "cursors": "true"}
    )
    rows = response.json()
    assert [list(row) for row in rows] == [["id", "_cursor"], ["id", "_cursor"]]
    assert links(response)["next"].endswith("after=" + rows[-1]["_cursor"].replace("=", "%3D"))
    after_first = await rest.get(
        "/rest/books", params={"fields": "id", "first": "1", "order": "-pages", "after": rows[0]["_cursor"]}
    )
    assert ids(after_first) == [rows[1]["id"]]


async def test_arguments_of_computed_fields(rest):
    params = {"fields": "id,priceWithTax", "first": "2"}
    assert (await rest.get("/rest/books", params=params)).json() == [
        {"id": 1, "priceWithTax": "11.99"},  # the default rate
        {"id": 2, "priceWithTax": "15.00"},
    ]
    given = await rest.get("/rest/books", params={**params, "args[priceWithTax][rate]": "0.5"})
    assert given.json() == [{"id": 1, "priceWithTax": "14.99"}, {"id": 2, "priceWithTax": "18.75"}]
    required = await rest.get(
        "/rest/books", params={"fields": "id,discounted", "args[discounted][percent]": "10", "first": "1"}
    )
    assert required.json() == [{"id": 1, "discounted": "8.99"}]


async def test_arguments_of_an_included_rows_computed_field(rest):
    response = await rest.get(
        "/rest/authors/1",
        params={
            "fields": "name",
            "include": "books",
            "fields[books]": "id,discounted",
            "args[books.discounted][percent]": "50",
        },
    )
    assert response.json() == {
        "name": "Ursula",
        "books": [{"id": 1, "discounted": "5.00"}, {"id": 2, "discounted": "6.25"}],
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"fields": "id,priceWithTax", "args[priceWithTax][nope]": "1"}, "args[priceWithTax][nope]"),  # unknown
        ({"fields": "id,priceWithTax", "args[priceWithTax][rate]": "abc"}, "args[priceWithTax][rate]"),  # mistyped
        ({"fields": "id,discounted"}, "args[discounted][percent]"),  # required, without a default
        ({"fields": "id,discounted", "args[discounted][percent]": "1.5"}, "args[discounted][percent]"),
        ({"fields": "id", "args[priceWithTax][rate]": "1"}, "args[priceWithTax]"),  # not among the fields
        ({"fields": "id", "args[nope][x]": "1"}, "args[nope]"),
        ({"fields": "id,priceWithTax", "args[priceWithTax]": "1"}, "args[priceWithTax]"),
        ({"include": "author", "args[author.bookCount][x]": "1"}, "args[author.bookCount][x]"),
        ({"fields": "id", "args[author.bookCount][x]": "1"}, "args[author]"),
    ],
)
async def test_bad_arguments_of_computed_fields_are_400(rest, params, field):
    problem = bad_request(await rest.get("/rest/books", params=params))
    assert problem == {"code": "BAD_USER_INPUT", "field": field}


async def test_path_returns_what_a_json_path_selects(rest):
    response = await rest.get("/rest/books", params={"fields": "id,details", "path[details]": "$.awards[0]"})
    assert response.json() == [{"id": 1, "details": "none"}, {"id": 2, "details": "Hugo"}, {"id": 3, "details": None}]
    nested = await rest.get(
        "/rest/authors/2",
        params={"fields": "id", "include": "books", "fields[books]": "id,details", "path[books.details]": "$.n"},
    )
    assert nested.json() == {"id": 2, "books": [{"id": 3, "details": 3}, {"id": 4, "details": None}]}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"path[title]": "$.a"}, "path[title]"),  # not a JSON column
        ({"path[nope]": "$.a"}, "path[nope]"),
        ({"path[books.details]": "$.a"}, "path[books]"),  # not included
    ],
)
async def test_path_names_an_included_json_column(rest, params, field):
    problem = bad_request(await rest.get("/rest/books", params=params))
    assert problem["field"].startswith(field)


async def test_a_bad_json_path_is_400(rest):
    response = await rest.get("/rest/books", params={"fields": "id,details", "path[details]": "$$"})
    assert bad_request(response)["code"] == "BAD_USER_INPUT"


@pytest.mark.parametrize(
    ("params", "field", "detail"),
    [
        (
            {"partition": "genre"},
            "partition",
            "partition applies to window or running values: give one of them",
        ),
        ({"running": "title"}, "running", "running sums are of numeric columns; 'title' is none of Book's"),
        ({"asOf": "2024-01-01T00:00:00Z"}, "asOf", "books has no temporal key: asOf cannot be used"),
        (
            {"include": "author", "asOf[author]": "2024-01-01"},
            "asOf[author]",
            "authors has no temporal key: asOf cannot be used",
        ),
        ({"asOf[author]": "2024-01-01"}, "asOf[author]", "asOf[author] names nothing included"),
    ],
)
async def test_window_values_and_as_of_are_400_with_a_clear_message(rest, params, field, detail):
    response = await rest.get("/rest/books", params=params)
    assert response.status_code == 400
    assert response.json()["detail"] == detail
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": field}


async def test_include_paths_count_toward_the_depth_limit(tmp_path, database_url):
    settings = {**SETTINGS, "limits": {"depth": 2}}
    async with rest_client(tmp_path, database_url, settings) as rest:
        fits = await rest.get("/rest/books", params={"include": "author", "fields": "id", "first": "1"})
        deep = await rest.get("/rest/books", params={"include": "author,author.mentor", "first": "1"})
    assert fits.status_code == 200
    assert bad_request(deep) == {"code": "DEPTH_LIMIT_EXCEEDED", "limit": 2, "actual": 3}


async def test_a_read_over_the_cost_limit_is_refused(tmp_path, database_url):
    settings = {
        "database": {"schemas": ["app_public"]},
        "limits": {"cost": 100, "page_size": {"default": 10, "max": 50}},
    }
    async with rest_client(tmp_path, database_url, settings) as rest:
        cheap = await rest.get("/rest/authors", params={"include": "books", "first[books]": "5"})
        costly = await rest.get("/rest/authors", params={"include": "books"})  # 10 authors x 50 books at most
    assert cheap.status_code == 200
    assert bad_request(costly) == {"code": "COST_LIMIT_EXCEEDED", "limit": 100, "actual": 510}


async def test_plain_list_headers(rest):
    response = await rest.get("/rest/books", params={"fields": "id", "first": "50"})
    assert headers(response) == {"accept-ranges": "items", "content-type": "application/json"}
