"""Media types of lists (SPEC "REST API" -> media types): JSON by default and for `*/*`, NDJSON (one object per line)
and CSV (a header row of the selected fields; null empty, an empty string quoted, objects and lists as JSON text,
64-bit integers as text, commas, quotes and line breaks quoted), chosen by `Accept` with q-values; 406 when nothing
acceptable is offered. CSV bodies are read back with Python's csv module."""

import csv
import io

import pytest

from tests.support.rest_reads import headers, ndjson, problem, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 3, "max": 10}}}
CSV = "text/csv; charset=utf-8"
NDJSON = "application/x-ndjson"


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


def records(response) -> list[list[str]]:
    """The CSV records of a body: CRLF line ends, read as the csv module reads them."""
    assert response.headers["content-type"] == CSV
    text = response.text
    assert text.endswith("\r\n")
    return list(csv.reader(io.StringIO(text, newline="")))


def quoted_empty(response) -> list[bool]:
    """Per record, whether its second field is written `""` (an empty string) rather than nothing (null)."""
    return [line.split(",")[1] == '""' for line in response.text.split("\r\n")[1:-1] if "," in line]


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "application/*", "text/html, */*;q=0.1"])
async def test_json_is_the_default(rest, accept):
    response = await rest.get("/rest/books", params={"fields": "id"}, headers={"Accept": accept} if accept else {})
    assert (response.status_code, response.headers["content-type"], response.json()) == (
        200,
        "application/json",
        [{"id": 1}, {"id": 2}, {"id": 3}],
    )


async def test_ndjson_is_one_object_per_line(rest):
    response = await rest.get(
        "/rest/notes", params={"fields": "id,body", "first": "5"}, headers={"Accept": "application/x-ndjson"}
    )
    assert response.headers["content-type"] == NDJSON
    assert ndjson(response) == [
        {"id": 1, "body": "plain"},
        {"id": 2, "body": "with, comma"},
        {"id": 3, "body": 'say "hi"'},
        {"id": 4, "body": "two\nlines"},  # a line break inside a value is escaped: still one line
        {"id": 5, "body": ""},
    ]
    assert response.text.count("\n") == 5


async def test_ndjson_rows_carry_their_includes(rest):
    response = await rest.get(
        "/rest/authors",
        params={"fields": "name", "include": "books", "fields[books]": "id", "first": "2"},
        headers={"Accept": "application/x-ndjson"},
    )
    assert ndjson(response) == [
        {"name": "Ursula", "books": [{"id": 1}, {"id": 2}]},
        {"name": "Octavia", "books": [{"id": 3}, {"id": 4}]},
    ]


async def test_an_empty_list_is_an_empty_body_in_ndjson_and_a_header_in_csv(rest):
    params = {"fields": "id,body", "filter[id][gt]": "99"}
    empty = await rest.get("/rest/notes", params=params, headers={"Accept": "application/x-ndjson"})
    assert (empty.status_code, empty.content) == (200, b"")
    header_only = await rest.get("/rest/notes", params=params, headers={"Accept": "text/csv"})
    assert (header_only.status_code, records(header_only)) == (200, [["id", "body"]])


async def test_csv_quotes_what_needs_quoting_and_tells_null_from_the_empty_string(rest):
    response = await rest.get(
        "/rest/notes", params={"fields": "id,body,amount,extra", "first": "10"}, headers={"Accept": "text/csv"}
    )
    assert records(response) == [
        ["id", "body", "amount", "extra"],
        ["1", "plain", "9007199254740993", '{"a": [1, 2]}'],  # a 64-bit integer as text; JSON as JSON text
        ["2", "with, comma", "-1", '[1, "two"]'],
        ["3", 'say "hi"', "", "text"],  # a JSON string as its text
        ["4", "two\nlines", "0", ""],
        ["5", "", "5", "{}"],
        ["6", "", "", ""],  # null: an empty field
        ["7", " padded ", "7", "3.5"],
    ]
    assert quoted_empty(response) == [False, False, False, False, True, False, False]  # only the empty string


async def test_csv_header_names_the_selected_fields_in_their_order(rest):
    response = await rest.get(
        "/rest/books",
        params={"fields": "title,id,copiesSold,tags,available,inPrint", "first": "2"},
        headers={"Accept": "text/csv"},
    )
    assert records(response) == [
        ["title", "id", "copiesSold", "tags", "available", "inPrint"],
        [
            "A Wizard of Earthsea",
            "1",
            "9007199254740993",
            '["magic","sea"]',
            '{"start" : {"value" : "2024-01-01", "inclusive" : true}, "end" : {"value" : "2024-07-01", "inclusive" : false}}',
            "true",
        ],
        [
            "The Left Hand of Darkness",
            "2",
            "1500000",
            '["winter"]',
            '{"start" : {"value" : "2024-02-01", "inclusive" : true}, "end" : {"value" : "2024-03-01", "inclusive" : false}}',
            "true",
        ],
    ]


async def test_csv_writes_included_rows_as_json_text(rest):
    response = await rest.get(
        "/rest/authors",
        params={
            "fields": "name",
            "include": "books,mentor",
            "fields[books]": "id",
            "fields[mentor]": "name",
            "first": "2",
        },
        headers={"Accept": "text/csv"},
    )
    assert records(response) == [
        ["name", "books", "mentor"],
        ["Ursula", '[{"id" : 1}, {"id" : 2}]', ""],
        ["Octavia", '[{"id" : 3}, {"id" : 4}]', '{"name" : "Ursula"}'],
    ]


async def test_csv_and_ndjson_keep_the_list_headers_and_pages(rest):
    response = await rest.get(
        "/rest/books",
        params={"fields": "id"},
        headers={"Accept": "text/csv", "Range": "items=1-2", "Prefer": "count=exact"},
    )
    assert (response.status_code, records(response)) == (206, [["id"], ["2"], ["3"]])
    assert {k: v for k, v in headers(response).items() if k != "link"} == {
        "content-type": CSV,
        "accept-ranges": "items",
        "content-range": "items 1-2/7",
        "x-total-count": "7",
        "preference-applied": "count=exact",
    }
    bounded = await rest.get("/rest/books", params={"fields": "id", "first": "50"}, headers={"Accept": "text/csv"})
    assert bounded.status_code == 400  # bounded by the page size like JSON


async def test_csv_of_a_functions_rows(rest):
    response = await rest.get(
        "/rest/rpc/books_by_pages", params={"fields": "id,pages", "first": "2"}, headers={"Accept": "text/csv"}
    )
    assert records(response) == [["id", "pages"], ["6", "352"], ["2", "304"]]


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        ("text/csv;q=0.5, application/x-ndjson;q=0.9", NDJSON),
        ("application/json;q=0.1, text/csv", CSV),
        ("application/x-ndjson, text/csv", NDJSON),  # equal quality: the first named
        ("text/*", CSV),
        ("application/xml, text/csv;q=0.2", CSV),
        ("TEXT/CSV", CSV),
        ("application/json;q=0, */*;q=0.5", "application/json"),
    ],
)
async def test_accept_with_q_values(rest, accept, content_type):
    response = await rest.get("/rest/books", params={"fields": "id", "first": "1"}, headers={"Accept": accept})
    assert (response.status_code, response.headers["content-type"]) == (200, content_type)


@pytest.mark.parametrize("accept", ["application/xml", "text/csv;q=0", "image/png, text/html"])
async def test_an_unacceptable_accept_is_406(rest, accept):
    response = await rest.get("/rest/books", headers={"Accept": accept})
    assert response.status_code == 406
    assert problem(response) == {
        "type": "about:blank",
        "title": "Not Acceptable",
        "status": 406,
        "detail": f"lists are served as application/json, application/x-ndjson or text/csv; Accept asks for {accept}",
        "instance": "/rest/books",
        "code": "NOT_ACCEPTABLE",
    }
