"""Incremental delivery (SPEC "Endpoints": `/graphql` with `@defer`/`@stream` as multipart/mixed), read by the npm
`meros` multipart parser: the initial payload and one per deferred fragment or streamed batch, checked by the
incremental payload rules of graphql-js 17 (every `pending` id completed once, `hasNext` false only at the end,
`data` merged at its pending path, `items` appended) and of Apollo Client 3 (the same entries by `path`); merged,
they equal the whole result. The operation is still read with ONE statement. A client that does not accept
multipart gets the whole result at once."""

import copy

import pytest

from tests.support.node_clients import run_client
from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}
DEFER_ACCEPT = "multipart/mixed;deferSpec=20220824, application/json"

QUERY = """query Shelf {
  book(rowId: 3) { title ... @defer(label: "details") { pages author { name } } }
  authors(first: 4) @stream(initialCount: 1, label: "authors") { name }
  books(first: 2) { title ...Author @defer }
  ... @defer(label: "shelves") { shelves { label } }
}
fragment Author on Book { author { name } }"""


async def statements(client) -> int:
    return (await client.get("/health")).json()["statements"]


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as running:
        yield running


def merge(parts: list[dict]) -> dict:
    """The result the payloads make, by graphql-js 17's rules, checking Apollo Client 3's `path` on the way."""
    first, *rest = parts
    assert first["hasNext"] is True and first["pending"]
    data = copy.deepcopy(first["data"])
    pending = {entry["id"]: entry["path"] for entry in first["pending"]}
    completed: list[str] = []
    for number, part in enumerate(rest, start=1):
        assert part["hasNext"] is (number < len(rest)), part
        for entry in part.get("incremental", ()):
            assert entry["id"] in pending and entry["id"] not in completed, entry
            target = data
            for step in pending[entry["id"]]:
                target = target[step]
            if "data" in entry:
                assert entry["path"] == pending[entry["id"]]
                assert not set(entry["data"]) & set(target), "a deferred member delivered twice"
                target.update(entry["data"])
            else:
                assert entry["path"] == [*pending[entry["id"]], len(target)]
                target.extend(entry["items"])
        for entry in part.get("completed", ()):
            completed.append(entry["id"])
        pending.update({entry["id"]: entry["path"] for entry in part.get("pending", ())})
    assert sorted(completed) == sorted(pending), "every pending id is completed once"
    return data


async def test_deferred_fragments_and_streamed_items_arrive_as_parts_that_merge_into_the_whole_result(service):
    whole = await service.client.post("/graphql", json={"query": QUERY})
    assert whole.headers["content-type"] == "application/json"
    expected = whole.json()["data"]
    before = await statements(service.client)
    run = await run_client(
        "multipart", {"url": f"{service.url}/graphql", "query": QUERY, "headers": {"accept": DEFER_ACCEPT}}
    )
    assert await statements(service.client) - before == 1
    assert run.returncode == 0, (run.lines, run.stderr)
    head = run.lines[0]
    assert head["status"] == 200 and head["contentType"].startswith("multipart/mixed")
    parts = run.values("part")
    first = parts[0]
    assert first["data"]["book"] == {"title": "Kindred"}
    assert first["data"]["authors"] == [expected["authors"][0]]
    assert "shelves" not in first["data"]
    assert all(set(book) == {"title"} for book in first["data"]["books"])
    labels = {entry.get("label") for entry in first["pending"]}
    assert {"details", "authors", "shelves"} <= labels
    assert {tuple(entry["path"]) for entry in first["pending"]} >= {("books", 0), ("books", 1), ("book",), ()}
    assert merge(parts) == expected
    assert run.lines[-1] == {"end": True}


async def test_a_client_that_does_not_accept_multipart_gets_the_whole_result(service):
    plain = await service.client.post("/graphql", json={"query": QUERY}, headers={"accept": "application/json"})
    assert plain.headers["content-type"] == "application/json"
    body = plain.json()
    assert "hasNext" not in body and body["data"]["shelves"] and body["data"]["book"]["pages"]


async def test_defer_and_stream_with_if_false_answer_at_once(service):
    query = "{ book(rowId: 3) { title ... @defer(if: false) { pages } } authors @stream(if: false) { name } }"
    response = await service.client.post("/graphql", json={"query": query}, headers={"accept": DEFER_ACCEPT})
    assert response.headers["content-type"] == "application/json"
    assert response.json()["data"]["book"] == {"title": "Kindred", "pages": response.json()["data"]["book"]["pages"]}


async def test_a_stream_with_more_initial_items_than_there_are_completes_without_items(service):
    query = "{ authors(first: 2) @stream(initialCount: 5) { name } }"
    response = await service.client.post("/graphql", json={"query": query}, headers={"accept": DEFER_ACCEPT})
    assert response.headers["content-type"].startswith("multipart/mixed")
    chunks = [c for c in response.content.split(b"\r\n---") if b"{" in c]
    assert len(chunks) == 2
    assert b'"completed":[{"id":"0"}]' in chunks[1] and b'"hasNext":false' in chunks[1]


async def test_introspection_may_be_deferred_too(tmp_path, database_url):
    query = "{ book(rowId: 3) { title } ... @defer { __schema { queryType { name } } } }"
    async with running_service(tmp_path, database_url, SCHEMAS, mode="dev") as running:
        whole = await running.client.post("/graphql", json={"query": query})
        assert whole.json() == {"data": {"book": {"title": "Kindred"}, "__schema": {"queryType": {"name": "Query"}}}}
        run = await run_client(
            "multipart", {"url": f"{running.url}/graphql", "query": query, "headers": {"accept": DEFER_ACCEPT}}
        )
    parts = run.values("part")
    assert parts[0]["data"] == {"book": {"title": "Kindred"}}
    assert merge(parts) == whole.json()["data"]
