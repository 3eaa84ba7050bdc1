"""`POST /export` (SPEC "Endpoints": streams a connection query, single root field, as NDJSON or CSV, fetched 1,000
rows at a time, not limited in size): every row the connection's condition, filter and order select, each its node,
written with the same cell rules as REST's NDJSON and CSV lists; fetched in batches through one cursor (one
statement); bad requests refused before the first byte; the allow-list applies; a client that goes away leaves no
transaction behind.
"""

import hashlib
import json

import httpx
import pytest
import trio

from svc.db import _executor, _wire
from svc.pipeline import _run
from tests.support.postgres import execute, fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}
#: More rows than a REST page or one export batch hold.
ROWS = 2500


@pytest.fixture(scope="module", autouse=True)
def readings(database_url):
    execute(
        database_url,
        "create table app_public.readings (id integer primary key, book_id integer references app_public.books,"
        " value numeric, big bigint, note text, tags text[]);"
        f" insert into app_public.readings select n, 1 + n % 3, n / 7.0, 9007199254740993 + n,"
        f" case when n % 5 = 0 then null else 'note, \"' || n || '\"' end, array['a', n::text]"
        f" from generate_series(1, {ROWS}) n",
    )


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        yield service


async def export(client, query: str, **members) -> httpx.Response:
    return await client.post("/export", json={"query": query, **members})


def problem(response) -> dict:
    assert response.status_code == 400, (response.status_code, response.text)
    return response.json()


async def test_ndjson_streams_every_row_the_connection_selects_in_its_order(service, database_url):
    query = (
        "{ readingsConnection(orderBy: ROW_ID_DESC, filter: {rowId: {greaterThan: 10}})"
        " { nodes { id: rowId value big tags book { title } } } }"
    )
    response = await export(service.client, query)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = response.text.split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    rows = [json.loads(line) for line in lines[:-1]]
    expected = fetch(
        database_url,
        "select r.id, r.value::text, r.big::text, r.tags, b.title from app_public.readings r"
        " join app_public.books b on b.id = r.book_id where r.id > 10 order by r.id desc",
    )
    assert len(rows) == len(expected) == ROWS - 10
    assert [(r["id"], r["value"], r["big"], r["tags"], r["book"]["title"]) for r in rows] == [
        (id_, value, big, tags, title) for id_, value, big, tags, title in expected
    ]


async def test_rows_are_fetched_a_batch_at_a_time_from_one_statement(service, monkeypatch):
    """One cursor, 1,000 rows a FETCH; each FETCH is sent before the rows of the last are handed on (the database
    reads the next batch while these are written)."""
    batches: list[tuple[int, int]] = []  # each batch's rows, and the FETCHes sent when it was handed on
    sent = [0]
    send_fetch = _wire._send_fetch

    def counted_send(pgconn, fetch):
        sent[0] += 1
        send_fetch(pgconn, fetch)

    fetch_ahead = _executor.fetch_ahead

    async def counted(conn, fetch, size, each):
        async def handed(result):
            batches.append((result.ntuples, sent[0]))
            await each(result)

        await fetch_ahead(conn, fetch, size, handed)

    monkeypatch.setattr(_wire, "_send_fetch", counted_send)
    monkeypatch.setattr(_executor, "fetch_ahead", counted)
    before = (await service.client.get("/health")).json()["statements"]
    response = await export(service.client, "{ readingsConnection { nodes { rowId } } }")
    assert response.status_code == 200, response.text
    assert len(response.text.splitlines()) == ROWS
    assert _run.EXPORT_BATCH == 1000
    assert batches == [(1000, 2), (1000, 3), (500, 4)] and sent == [4]  # the fourth, ahead, answers none
    assert (await service.client.get("/health")).json()["statements"] - before == 1


@pytest.mark.parametrize("format_", ["csv", "ndjson"])
async def test_the_cells_are_rest_lists_own(service, format_):
    """The same rows as a REST list in the same media type give the same bytes (CSV: a header row, null empty,
    lists as JSON text, 64-bit integers as text, quoting as RFC 4180 says)."""
    query = "{ readingsConnection(orderBy: ROW_ID_ASC, filter: {rowId: {lessThan: 40}}) { edges { node { id: rowId value big note tags } } } }"
    exported = await export(service.client, query, format=format_)
    assert exported.status_code == 200, exported.text
    media = {"csv": "text/csv; charset=utf-8", "ndjson": "application/x-ndjson"}[format_]
    assert exported.headers["content-type"] == media
    listed = await service.client.get(
        "/rest/readings",
        params={"fields": "id,value,big,note,tags", "order": "id", "filter[id][lt]": "40"},
        headers={"accept": media.split(";")[0]},
    )
    assert listed.status_code == 200, listed.text
    expected = listed.content
    if format_ == "csv":
        assert expected.startswith(b"id,value,big,note,tags\r\n")
        # A quoted comma and quotes, null empty, a list as JSON text, a bigint beyond 2^53 exactly.
        assert b'\r\n5,0.71428571428571428571,9007199254740998,,"[""a"",""5""]"\r\n' in expected
        assert b'\r\n1,0.14285714285714285714,9007199254740994,"note, ""1""",' in expected
    assert exported.content == expected


CELL_COLUMNS = ("id", "words", "label", "code", "tally", "ratio", "done", "token", "day", "stamp", "naive", "clock")
CELL_COLUMNS += ("zoned", "span", "doc", "amount", "big", "nums")
#: A value of each type where its text is special: edge spaces, empty, commas, quotes, line breaks, NaN and
#: infinities, BC dates, JSON strings and nulls, nulls.
CELLS = r"""
create table app_public.cells (id integer primary key, words text, label varchar(20), code char(3), tally integer,
  ratio float8, done boolean, token uuid, day date, stamp timestamptz, naive timestamp, clock time, zoned timetz,
  span interval, doc jsonb, amount numeric, big bigint, nums integer[]);
insert into app_public.cells values
  (1, ' lead', 'a,b', 'x', 1, 'NaN', true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2026-01-02',
   '2026-01-02 03:04:05+00', '2026-01-02 03:04:05.5', '12:00', '12:00+02', '1 day 02:00', '{"a": [1, "x,y"]}', 1.50,
   9007199254740993, '{1,2}'),
  (2, 'trail ', '', 'ab', -5, 'Infinity', false, null, 'infinity', '-infinity', '0044-03-15 12:00 BC', '00:00',
   '23:59:59.999-05:30', '-3 mons', '"say \"hi\""', 'NaN', -1, '{}'),
  (3, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
  (4, '', E'\t tab', '', 0, 1e20, true, null, '0044-03-15 BC', now(), null, null, null, '0', 'null', 0, 0, '{null}'),
  (5, E'x\r\ny', E'line\nbreak', ' ', 2147483647, -0.5, null, null, null, null, null, null, null, null, '[]', 1e-30,
   null, null),
  (6, 'say "hi"', 'plain', 'abc', null, 1.5e-7, null, null, null, null, null, null, null, null, '""', null, null,
   null)
"""


async def test_each_type_s_csv_cell_is_the_one_its_json_value_gives(tmp_path, database_url):
    """An export's CSV cells are computed per type (a string's own text, a number's text without to_json's round
    trip, no search for a comma in a date): byte for byte what REST's CSV, which reads each cell from the row's
    JSON object, gives for every type, with quoting where the text asks for it."""
    execute(database_url, CELLS)
    selection = "id: rowId " + " ".join(CELL_COLUMNS[1:])
    query = f"{{ cellsConnection(orderBy: ROW_ID_ASC) {{ nodes {{ {selection} }} }} }}"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        exported = await export(service.client, query, format="csv")
        listed = await service.client.get(
            "/rest/cells", params={"fields": ",".join(CELL_COLUMNS), "order": "id"}, headers={"accept": "text/csv"}
        )
    assert exported.status_code == 200, exported.text
    assert listed.status_code == 200, listed.text
    print(listed.content.decode())
    print(exported.content.decode())
    assert b'\r\n1," lead","a,b","x  ",1,NaN,true,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,2026-01-02,' in listed.content
    assert b"\r\n3,,,,,,,,,,,,,,,,,\r\n" in listed.content
    assert b'\r\n4,"",' in listed.content
    assert exported.content == listed.content


async def test_no_rows_give_the_csv_header_alone_and_an_empty_ndjson_body(service):
    query = "{ readingsConnection(filter: {rowId: {lessThan: 0}}) { nodes { rowId note } } }"
    csv = await export(service.client, query, format="csv")
    assert (csv.status_code, csv.content) == (200, b"rowId,note\r\n")
    ndjson = await export(service.client, query)
    assert (ndjson.status_code, ndjson.content) == (200, b"")


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"query": "{ readingsConnection(first: 5) { nodes { rowId } } }"}, "it takes no first"),
        ({"query": "{ readingsConnection(after: null, offset: 2) { nodes { rowId } } }"}, "it takes no after, offset"),
        ({"query": "{ readings { rowId } }"}, "readings is not one"),
        ({"query": "{ a: readingsConnection { nodes { rowId } } b: booksConnection { nodes { rowId } } }"}, "one root"),
        ({"query": "{ readingsConnection { totalCount nodes { rowId } } }"}, "select nodes (or edges { node }) only"),
        (
            {"query": "{ readingsConnection { edges { cursor node { rowId } } } }"},
            "select nodes (or edges { node }) only",
        ),
        (
            {"query": "{ ...All } fragment All on Query { readingsConnection { nodes { rowId } } }"},
            "in the operation itself",
        ),
        ({"query": 'mutation { createShelf(input: {rowId: 5, label: "x"}) { shelf { label } } }'}, "runs a query"),
        ({"query": "{ readingsConnection { nodes { rowId } } }", "format": "xml"}, "format must be ndjson or csv"),
        ({"query": "{ readingsConnection { nodes { rowId } } }", "gzip": True}, "unknown request member(s): gzip"),
    ],
)
async def test_a_bad_export_is_refused_before_any_row(service, database_url, body, detail):
    response = await service.client.post("/export", json=body)
    found = problem(response)
    assert found["code"] == "BAD_USER_INPUT" and detail in found["detail"], found
    assert fetch(database_url, "select count(*) from app_public.shelves where id = 5") == [(0,)]


async def test_a_query_the_schema_refuses_is_its_graphql_error(service):
    found = problem(await export(service.client, "{ readingsConnection { nodes { nope } } }"))
    assert found["code"] == "GRAPHQL_VALIDATION_FAILED" and "nope" in found["detail"]


async def test_the_allow_list_holds_exports_to_listed_operations(tmp_path, database_url):
    listed = "query Listed { readingsConnection(orderBy: ROW_ID_ASC) { nodes { rowId } } }"
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({hashlib.sha256(listed.encode()).hexdigest(): listed}))
    settings = {
        **SCHEMAS,
        "graphql": {"persisted_queries": {"enabled": True, "manifest": str(manifest), "allow_list": True}},
    }
    async with running_service(tmp_path, database_url, settings) as service:
        allowed = await export(service.client, listed)
        assert allowed.status_code == 200 and len(allowed.text.splitlines()) == ROWS
        refused = await export(service.client, "query Other { readingsConnection { nodes { rowId } } }")
        assert (refused.status_code, refused.json()["code"]) == (403, "OPERATION_NOT_ALLOWED"), refused.text


async def test_a_client_that_goes_away_leaves_no_transaction_behind(service, database_url, monkeypatch):
    monkeypatch.setattr(_run, "EXPORT_BATCH", 10)
    query = "{ readingsConnection { nodes { rowId note book { title } } } }"
    async with service.client.stream("POST", "/export", json={"query": query}) as response:
        assert response.status_code == 200
        async for _ in response.aiter_raw():
            break  # the first chunk, then gone

    def exporting() -> list:
        return fetch(
            database_url,
            "select state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"
            " and (query like '%readings%' and state <> 'idle' or state like 'idle in transaction%')",
        )

    with trio.fail_after(10):
        while exporting():
            await trio.sleep(0.05)
    # The pool still serves: a whole export after it.
    again = await export(service.client, "{ readingsConnection { nodes { rowId } } }")
    assert again.status_code == 200 and len(again.text.splitlines()) == ROWS
