"""Reading rows (SPEC "Root fields per table", "Fields present on generated types", "Scalars and value mapping",
"Global object identification"): lookups by primary and unique keys, plain lists, global IDs, `databaseId`,
`rowVersion`, and values mapped exactly as the spec says (BigInt and Decimal as strings, enums as GraphQL values,
ISO dates, JSON as JSON, arrays, ranges)."""

import pytest

from svc.plan import encode_global_id
from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {"database": {"schemas": ["app_public"]}}) as gql:
        yield gql


async def test_lookup_by_primary_key_with_every_kind_of_value(gql):
    data = await gql.data(
        """{ book(rowId: 1) { rowId title genre pages price rating copiesSold inPrint published addedAt opensAt
             loanPeriod isbn tags scores details rawDetails
             available { start { value inclusive } end { value inclusive } } } }"""
    )
    assert data == {
        "book": {
            "rowId": 1,
            "title": "A Wizard of Earthsea",
            "genre": "FICTION",
            "pages": 205,
            "price": "9.99",  # Decimal: a string
            "rating": 4.5,
            "copiesSold": "9007199254740993",  # BigInt: a string, exact past 2^53
            "inPrint": True,
            "published": "1968-11-01",
            "addedAt": "2024-01-01T10:00:00+00:00",
            "opensAt": "09:00:00",
            "loanPeriod": "14 days",
            "isbn": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "tags": ["magic", "sea"],
            "scores": [5, 4],
            "details": {"series": "Earthsea", "awards": ["none"], "n": 1},
            "rawDetails": {"series": "Earthsea"},
            "available": {
                "start": {"value": "2024-01-01", "inclusive": True},
                "end": {"value": "2024-07-01", "inclusive": False},
            },
        }
    }


async def test_nulls_unbounded_and_empty_ranges(gql):
    data = await gql.data(
        "{ a: book(rowId: 4) { pages price genre tags available { start { value } } }"
        "  b: book(rowId: 5) { available { start { value inclusive } end { value inclusive } } }"
        "  c: book(rowId: 6) { available { start { value } end { value } } } }"
    )
    assert data == {
        "a": {"pages": None, "price": None, "genre": "POETRY", "tags": None, "available": None},
        "b": {"available": {"start": {"value": "2024-05-01", "inclusive": True}, "end": None}},
        "c": {"available": {"start": None, "end": None}},
    }


async def test_enum_values_with_characters_graphql_names_lack(gql):
    data = await gql.data("{ book(rowId: 6) { genre } }")
    assert data == {"book": {"genre": "NON_FICTION"}}


async def test_lookup_by_unique_key_and_a_missing_row(gql):
    data = await gql.data('{ shelfByLabel(label: "classics") { rowId label } none: shelf(rowId: 99) { label } }')
    assert data == {"shelfByLabel": {"rowId": 2, "label": "classics"}, "none": None}


async def test_lookup_of_a_composite_key(gql):
    data = await gql.data("{ bookShelf(bookId: 1, shelfId: 2) { bookId shelfId } }")
    assert data == {"bookShelf": {"bookId": 1, "shelfId": 2}}


async def test_plain_list_in_key_order_with_first_and_offset(gql):
    data = await gql.data("{ authors { rowId } page: authors(first: 2, offset: 1) { name } }")
    assert data == {
        "authors": [{"rowId": 1}, {"rowId": 2}, {"rowId": 3}, {"rowId": 4}],
        "page": [{"name": "Octavia"}, {"name": "Ted"}],
    }


async def test_plain_lists_are_cut_at_the_largest_page(tmp_path, database_url):
    settings = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"max": 3, "default": 2}}}
    async with graphql_service(tmp_path, database_url, settings) as gql:
        data = await gql.data("{ books { rowId } }")
    assert [row["rowId"] for row in data["books"]] == [1, 2, 3]


async def test_global_ids_and_database_ids(gql):
    data = await gql.data("{ author(rowId: 2) { id databaseId rowId __typename } }")
    author = data["author"]
    assert author["id"] == encode_global_id("Author", 2) == "QXV0aG9yOjI="
    assert (author["databaseId"], author["rowId"], author["__typename"]) == (2, 2, "Author")


async def test_node_finds_any_row_by_global_id(gql):
    book_id, shelf_id = encode_global_id("Book", 3), encode_global_id("Shelf", 1)
    data = await gql.data(
        """query($b: ID!, $s: ID!) {
             b: node(id: $b) { id __typename ... on Book { title } ... on Shelf { label } }
             s: node(id: $s) { __typename ... on Book { title } ... on Shelf { label } }
           }""",
        {"b": book_id, "s": shelf_id},
    )
    assert data == {
        "b": {"id": book_id, "__typename": "Book", "title": "Kindred"},
        "s": {"__typename": "Shelf", "label": "favourites"},
    }


@pytest.mark.parametrize(
    "node_id",
    [
        "not base64 at all",
        encode_global_id("Book", 99),  # no such row
        encode_global_id("Book", "abc"),  # a key that is no integer
        encode_global_id("Nope", 1),  # no such type
        encode_global_id("BookShelf", 1),  # a type without a single-column key
        "Qm9vazo=",  # "Book:" without a key
    ],
)
async def test_node_is_null_for_malformed_or_missing_ids_never_an_error(gql, node_id):
    assert await gql.data("query($id: ID!) { node(id: $id) { id } }", {"id": node_id}) == {"node": None}


async def test_a_global_id_of_another_type_is_refused_in_key_arguments(gql):
    status, body = await gql.errors(
        "query($key: String!) { shelfByLabel(label: $key) { rowId } }", {"key": encode_global_id("Book", 1)}
    )
    assert status == 400
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "a global ID of a Book where a Shelf key belongs" in body["errors"][0]["message"]
    same_type = await gql.data(
        "query($key: String!) { shelfByLabel(label: $key) { rowId } }", {"key": encode_global_id("Shelf", "classics")}
    )
    assert same_type == {"shelfByLabel": {"rowId": 2}}


async def test_row_version_is_the_system_transaction_id(gql, database_url):
    import psycopg

    with psycopg.connect(database_url) as conn:
        xmin = conn.execute("select xmin::text from app_public.shelves where id = 1").fetchone()[0]
    data = await gql.data("{ shelf(rowId: 1) { rowVersion } }")
    assert data == {"shelf": {"rowVersion": xmin}}


async def test_row_version_from_a_version_column(tmp_path, database_url):
    settings = {"database": {"schemas": ["app_public"]}, "entities": {"books": {"version_column": "pages"}}}
    async with graphql_service(tmp_path, database_url, settings) as gql:
        data = await gql.data("{ book(rowId: 2) { rowVersion } }")
    assert data == {"book": {"rowVersion": "304"}}


async def test_views_and_materialized_views(gql):
    data = await gql.data(
        "{ fictions { title pages } authorTotals(orderBy: [BOOKS_DESC, NAME_ASC], first: 2) { name books } }"
    )
    assert data["fictions"][0] == {"title": "A Wizard of Earthsea", "pages": 205}
    assert len(data["fictions"]) == 4
    assert data["authorTotals"] == [{"name": "Octavia", "books": "2"}, {"name": "Ted", "books": "2"}]


async def test_typename_at_every_level(gql):
    data = await gql.data(
        "{ __typename booksConnection(first: 1) { __typename edges { __typename } pageInfo { __typename } } }"
    )
    assert data == {
        "__typename": "Query",
        "booksConnection": {
            "__typename": "BooksConnection",
            "edges": [{"__typename": "BooksEdge"}],
            "pageInfo": {"__typename": "PageInfo"},
        },
    }


async def test_aliases_and_fragments_merge(gql):
    data = await gql.data(
        """fragment Basic on Book { title }
           fragment More on Book { ...Basic pages }
           { first: book(rowId: 1) { ...More title t2: title ... on Book { genre } }
             second: book(rowId: 2) { ...Basic } }"""
    )
    assert data == {
        "first": {"title": "A Wizard of Earthsea", "pages": 205, "t2": "A Wizard of Earthsea", "genre": "FICTION"},
        "second": {"title": "The Left Hand of Darkness"},
    }


async def test_skip_and_include(gql):
    query = "query($s: Boolean!) { book(rowId: 1) { title @skip(if: $s) pages @include(if: $s) } }"
    assert await gql.data(query, {"s": True}) == {"book": {"pages": 205}}
    assert await gql.data(query, {"s": False}) == {"book": {"title": "A Wizard of Earthsea"}}


async def test_variables_with_declared_defaults(gql):
    query = "query($id: Int = 3) { book(rowId: $id) { title } }"
    assert await gql.data(query) == {"book": {"title": "Kindred"}}
    assert await gql.data(query, {"id": 1}) == {"book": {"title": "A Wizard of Earthsea"}}
