"""REST rows (SPEC "Naming" -> REST rows, "Scalars and value mapping", route table -> `GET /rest/{resource}/{key}`):
fields under their API names (the key column `id` stays `id`), `rowVersion` last, values mapped as GraphQL maps them;
a row by primary key (composite: comma-separated), by global ID, or by another unique key with `?by=`; `ETag` and
`If-None-Match`; 404 for a missing row or a key that does not fit; only fields, include and the embedding controls
accepted on a row."""

import psycopg
import pytest
from psycopg import sql

from svc.plan import encode_global_id
from tests.support.rest_reads import bad_request, headers, problem, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


@pytest.fixture(scope="module")
def versions(database_url) -> dict[str, str]:
    """Each table's row version (the system transaction id: the fixture wrote each table in one transaction)."""
    with psycopg.connect(database_url) as conn:
        return {
            table: conn.execute(
                sql.SQL("select xmin::text from app_public.{} limit 1").format(sql.Identifier(table))
            ).fetchone()[0]
            for table in ("authors", "books", "book_shelves", "shelves")
        }


def book_one(version: str) -> dict:
    return {
        "id": 1,
        "authorId": 1,
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
        "available": {
            "start": {"value": "2024-01-01", "inclusive": True},
            "end": {"value": "2024-07-01", "inclusive": False},
        },
        "details": {"n": 1, "awards": ["none"], "series": "Earthsea"},
        "rawDetails": {"series": "Earthsea"},
        "rowVersion": version,
    }


async def test_a_row_by_key_has_every_field_under_its_rest_name_and_an_etag(rest, versions):
    response = await rest.get("/rest/books/1")
    assert (response.status_code, headers(response)) == (
        200,
        {"content-type": "application/json", "etag": f'"{versions["books"]}"'},
    )
    assert list(response.json()) == list(book_one(versions["books"]))  # column order, then rowVersion
    assert response.json() == book_one(versions["books"])


async def test_nulls_enums_unbounded_and_empty_ranges(rest):
    fields = {"fields": "id,genre,pages,price,tags,scores,available,details"}
    four, five, six = [(await rest.get(f"/rest/books/{key}", params=fields)).json() for key in (4, 5, 6)]
    assert four == {
        "id": 4, "genre": "POETRY", "pages": None, "price": None, "tags": None, "scores": [], "available": None,
        "details": None,
    }  # fmt: skip
    assert five["available"] == {"start": {"value": "2024-05-01", "inclusive": True}, "end": None}
    assert (six["available"], six["genre"]) == ({"start": None, "end": None}, "NON_FICTION")


async def test_the_list_and_the_row_show_a_row_alike(rest):
    listed = await rest.get("/rest/books", params={"filter[id][eq]": "1"})
    row = await rest.get("/rest/books/1")
    assert listed.json() == [row.json()]


async def test_fields_and_includes_of_a_row(rest, versions):
    response = await rest.get(
        "/rest/books/3", params={"fields": "title,rowVersion", "include": "author,shelves", "fields[shelves]": "label"}
    )
    assert response.json() == {
        "title": "Kindred",
        "rowVersion": versions["books"],
        "author": {"id": 2, "name": "Octavia", "born": "1947-06-22", "mentorId": 1, "rowVersion": versions["authors"]},
        "shelves": [{"label": "favourites"}],
    }


async def test_database_column_names_are_accepted_in_fields(rest):
    response = await rest.get("/rest/books/5", params={"fields": "copies_sold,in_print,rowId"})
    assert response.json() == {"copiesSold": "200000", "inPrint": True, "id": 5}


async def test_embedding_controls_apply_to_a_rows_relations(rest):
    response = await rest.get(
        "/rest/authors/1",
        params={
            "fields": "name",
            "include": "books",
            "fields[books]": "title",
            "filter[books][pages][gt]": "250",
            "order[books]": "-title",
        },
    )
    assert response.json() == {"name": "Ursula", "books": [{"title": "The Left Hand of Darkness"}]}


async def test_a_composite_key_is_comma_separated_in_key_order(rest, versions):
    response = await rest.get("/rest/book_shelves/1,2")
    assert (response.status_code, response.headers["etag"]) == (200, f'"{versions["book_shelves"]}"')
    assert response.json() == {"bookId": 1, "shelfId": 2, "rowVersion": versions["book_shelves"]}
    assert (await rest.get("/rest/book_shelves/2,1")).status_code == 404  # (2, 1) is no row


@pytest.mark.parametrize("key", ["1", "1,2,3", "1,", "a,b"])
async def test_a_composite_key_with_other_values_names_no_row(rest, key):
    response = await rest.get(f"/rest/book_shelves/{key}")
    assert response.status_code == 404
    assert problem(response)["code"] == "NOT_FOUND"


async def test_a_global_id_in_place_of_the_key(rest):
    response = await rest.get(f"/rest/authors/{encode_global_id('Author', 2)}", params={"fields": "id,name"})
    assert (response.status_code, response.json()) == (200, {"id": 2, "name": "Octavia"})


async def test_a_global_id_of_another_type_names_no_row(rest):
    response = await rest.get(f"/rest/books/{encode_global_id('Author', 2)}")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("key", "detail"),
    [
        ("99", "no Book has the key 99"),
        ("abc", "no Book has the key abc"),  # not an integer: no row can have it
        ("99999999999", "no Book has the key 99999999999"),  # past a 32-bit key
        ("1.5", "no Book has the key 1.5"),
    ],
)
async def test_a_missing_row_or_a_key_that_does_not_fit_is_404(rest, key, detail):
    response = await rest.get(f"/rest/books/{key}")
    assert response.status_code == 404
    assert problem(response) == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": detail,
        "instance": f"/rest/books/{key}",
        "code": "NOT_FOUND",
    }


async def test_by_addresses_a_row_by_another_unique_key(rest, versions):
    response = await rest.get("/rest/shelves/classics", params={"by": "label"})
    assert (response.status_code, response.headers["etag"]) == (200, f'"{versions["shelves"]}"')
    assert response.json() == {"id": 2, "label": "classics", "rowVersion": versions["shelves"]}
    assert (await rest.get("/rest/shelves/empty%20shelf", params={"by": "label", "fields": "id"})).json() == {"id": 3}
    assert (await rest.get("/rest/shelves/nope", params={"by": "label"})).status_code == 404
    assert (await rest.get("/rest/shelves/2", params={"by": "id", "fields": "label"})).json() == {"label": "classics"}


@pytest.mark.parametrize(
    ("by", "field"),
    [("nope", "by"), ("title", "by")],  # an unknown column; a column that is no unique key
)
async def test_by_names_a_unique_key(rest, by, field):
    response = await rest.get("/rest/shelves/1", params={"by": by})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": field}


async def test_if_none_match_naming_the_version_answers_304_without_a_body(rest, versions):
    etag = f'"{versions["books"]}"'
    for header in (etag, f'"1", {etag}', f"W/{etag}", "*"):
        response = await rest.get("/rest/books/1", headers={"If-None-Match": header})
        assert (response.status_code, headers(response), response.content) == (304, {"etag": etag}, b"")
    other = await rest.get("/rest/books/1", headers={"If-None-Match": '"1"'})
    assert (other.status_code, other.json()["id"]) == (200, 1)


async def test_a_malformed_entity_tag_is_400(rest):
    response = await rest.get("/rest/books/1", headers={"If-None-Match": "unquoted"})
    assert bad_request(response) == {"code": "BAD_USER_INPUT"}


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("order", "title"),
        ("first", "1"),
        ("offset", "1"),
        ("after", "x"),
        ("filter[title][eq]", "x"),  # a row filter: not an embedding control of an included relation
        ("cursors", "true"),
        ("nope", "1"),
    ],
)
async def test_a_row_accepts_only_fields_include_and_embedding_controls(rest, parameter, value):
    response = await rest.get("/rest/books/1", params={parameter: value})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": parameter}


async def test_a_version_column_is_the_row_version_and_the_etag(tmp_path, database_url):
    settings = {**SETTINGS, "entities": {"books": {"version_column": "pages"}}}
    async with rest_client(tmp_path, database_url, settings) as rest:
        response = await rest.get("/rest/books/2", params={"fields": "id,rowVersion"})
    assert (response.json(), response.headers["etag"]) == ({"id": 2, "rowVersion": "304"}, '"304"')
