"""Persisted queries and the allow-list (SPEC "Persisted queries", "States and transitions"): Apollo's automatic
protocol driven exactly as its link sends it, manifests in both formats named by `documentId` or by hash over POST
and GET, the allow-list deciding before any parsing or SQL, the feature off, and the manifest validated at startup
(prod refuses to start, dev logs) and on reload (prod keeps the previous schema)."""

import hashlib
import json
import logging

import psycopg
import pytest

from svc.graphql import ManifestError, Registry, read_manifest
from svc.server import StartupError, serve
from tests.support.node_clients import run_client
from tests.support.postgres import notify
from tests.support.service import configure, running_service, wait_until

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}

TITLE = "query BookTitle($id: Int!) { book(rowId: $id) { title } }"
SHELVES = "query Shelves { shelves { label } }"
INTROSPECTION = "query Types { __schema { queryType { name } } }"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def apq(digest: str) -> dict:
    return {"persistedQuery": {"version": 1, "sha256Hash": digest}}


def code(response) -> str:
    return response.json()["errors"][0]["extensions"]["code"]


async def statements(client) -> int:
    return (await client.get("/health")).json()["statements"]


def apollo_manifest(*operations: tuple[str, str, str, str]) -> dict:
    return {
        "format": "apollo-persisted-query-manifest",
        "version": 1,
        "operations": [{"id": i, "name": n, "type": t, "body": b} for i, n, t, b in operations],
    }


def persisted(tmp_path, manifest: dict | None = None, **switches) -> dict:
    settings = {"enabled": True, **switches}
    if manifest is not None:
        path = tmp_path / "manifest.json"
        path.write_text(json.dumps(manifest))
        settings["manifest"] = str(path)
    return {**SCHEMAS, "graphql": {"persisted_queries": settings}}


async def test_automatic_mode_follows_apollos_protocol(tmp_path, database_url):
    digest = sha256(TITLE)
    async with running_service(tmp_path, database_url, persisted(tmp_path)) as service:
        client = service.client
        # Hash alone, unknown: 200 and PERSISTED_QUERY_NOT_FOUND (the link then resends it with the text).
        unknown = await client.post("/graphql", json={"extensions": apq(digest), "variables": {"id": 3}})
        assert (unknown.status_code, code(unknown)) == (200, "PERSISTED_QUERY_NOT_FOUND")
        assert unknown.json()["errors"][0]["message"] == "PersistedQueryNotFound"
        registered = await client.post(
            "/graphql", json={"query": TITLE, "extensions": apq(digest), "variables": {"id": 3}}
        )
        assert registered.json() == {"data": {"book": {"title": "Kindred"}}}
        # Registered: the hash alone runs, over POST and over GET (Apollo's useGETForHashedQueries).
        again = await client.post("/graphql", json={"extensions": apq(digest.upper()), "variables": {"id": 1}})
        assert again.status_code == 200 and "errors" not in again.json()
        params = {"extensions": json.dumps(apq(digest)), "variables": '{"id": 3}', "operationName": "BookTitle"}
        got = await client.get("/graphql", params=params)
        assert got.json() == {"data": {"book": {"title": "Kindred"}}}


async def test_a_hash_that_is_not_the_texts_registers_nothing(tmp_path, database_url):
    wrong = sha256("{ shelves { label } }")
    async with running_service(tmp_path, database_url, persisted(tmp_path)) as service:
        client = service.client
        mismatch = await client.post(
            "/graphql", json={"query": TITLE, "extensions": apq(wrong), "variables": {"id": 3}}
        )
        assert (mismatch.status_code, code(mismatch)) == (400, "PERSISTED_QUERY_HASH_MISMATCH")
        assert "data" not in mismatch.json() or mismatch.json()["data"] is None
        for digest in (wrong, sha256(TITLE)):
            alone = await client.post("/graphql", json={"extensions": apq(digest), "variables": {"id": 3}})
            assert code(alone) == "PERSISTED_QUERY_NOT_FOUND"


@pytest.mark.parametrize(
    "extensions",
    [
        {"persistedQuery": {"version": 2, "sha256Hash": "0" * 64}},
        {"persistedQuery": {"version": 1, "sha256Hash": "xyz"}},
        {"persistedQuery": "abc"},
    ],
)
async def test_a_malformed_persisted_query_is_bad_input(tmp_path, database_url, extensions):
    async with running_service(tmp_path, database_url, persisted(tmp_path)) as service:
        response = await service.client.post("/graphql", json={"query": SHELVES, "extensions": extensions})
        assert (response.status_code, code(response)) == (400, "BAD_USER_INPUT")


@pytest.mark.parametrize(
    "manifest",
    [
        apollo_manifest(("title-v1", "BookTitle", "query", TITLE), ("shelves-v1", "Shelves", "query", SHELVES)),
        {"title-v1": TITLE, "shelves-v1": SHELVES},
    ],
    ids=["apollo", "map"],
)
async def test_a_manifest_entry_runs_by_document_id_or_hash_over_post_and_get(tmp_path, database_url, manifest):
    async with running_service(tmp_path, database_url, persisted(tmp_path, manifest, automatic=False)) as service:
        client = service.client
        expected = {"data": {"book": {"title": "Kindred"}}}
        for document_id in ("title-v1", f"sha256:{sha256(TITLE)}"):
            posted = await client.post("/graphql", json={"documentId": document_id, "variables": {"id": 3}})
            assert posted.json() == expected
            got = await client.get("/graphql", params={"documentId": document_id, "variables": '{"id": 3}'})
            assert got.json() == expected
        hashed = await client.post("/graphql", json={"extensions": apq(sha256(TITLE)), "variables": {"id": 3}})
        assert hashed.json() == expected
        unknown = await client.post("/graphql", json={"documentId": "title-v2"})
        assert code(unknown) == "PERSISTED_QUERY_NOT_FOUND"
        both = await client.post("/graphql", json={"documentId": "shelves-v1", "query": SHELVES})
        assert (both.status_code, code(both)) == (400, "BAD_USER_INPUT")
        # Automatic mode off: a hash with its text runs the text and registers nothing.
        other = "{ authors { name } }"
        sent = await client.post("/graphql", json={"query": other, "extensions": apq(sha256(other))})
        assert sent.status_code == 200 and "errors" not in sent.json()
        alone = await client.post("/graphql", json={"extensions": apq(sha256(other))})
        assert code(alone) == "PERSISTED_QUERY_NOT_FOUND"


async def test_the_allow_list_runs_manifest_operations_only_and_refuses_the_rest_before_any_sql(tmp_path, database_url):
    manifest = apollo_manifest(("title-v1", "BookTitle", "query", TITLE))
    settings = persisted(tmp_path, manifest, allow_list=True)
    async with running_service(tmp_path, database_url, settings) as service:
        client = service.client
        expected = {"data": {"book": {"title": "Kindred"}}}
        # Listed: by id, by hash, or as text whose hash is listed.
        for body in ({"documentId": "title-v1"}, {"extensions": apq(sha256(TITLE))}, {"query": TITLE}):
            response = await client.post("/graphql", json={**body, "variables": {"id": 3}})
            assert response.json() == expected, body
        crafted = "query BookTitle($id: Int!) { book(rowId: $id) { title author { name } } }"
        refused = [
            {"query": crafted, "variables": {"id": 3}},
            {"query": INTROSPECTION},
            {"query": "{ __typename }"},
            {"query": "{ books { title "},  # not even parsed
            # A hash with its (unlisted) text: not registered, and the hash alone stays refused.
            {"query": crafted, "extensions": apq(sha256(crafted)), "variables": {"id": 3}},
            {"extensions": apq(sha256(crafted)), "variables": {"id": 3}},
            {"documentId": "unknown"},
            {"documentId": f"sha256:{sha256(crafted)}"},
            {"query": 'mutation { createShelf(input: {rowId: 9, label: "x"}) { shelf { label } } }'},
        ]
        before = await statements(client)
        for body in refused:
            response = await client.post("/graphql", json=body)
            assert (response.status_code, code(response)) == (403, "OPERATION_NOT_ALLOWED"), body
            assert response.json().get("data") is None
        got = await client.get("/graphql", params={"query": INTROSPECTION})
        assert (got.status_code, code(got)) == (403, "OPERATION_NOT_ALLOWED")
        assert await statements(client) == before


async def test_an_introspection_query_in_the_manifest_may_run(tmp_path, database_url):
    manifest = {"types": INTROSPECTION}
    settings = persisted(tmp_path, manifest, allow_list=True)
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        response = await service.client.post("/graphql", json={"documentId": "types"})
        assert response.json() == {"data": {"__schema": {"queryType": {"name": "Query"}}}}
        refused = await service.client.post("/graphql", json={"query": "{ __schema { types { name } } }"})
        assert code(refused) == "OPERATION_NOT_ALLOWED"


async def test_subscriptions_are_held_to_the_allow_list(tmp_path, database_url):
    listed = "subscription Shelves { shelves { label } }"
    settings = persisted(tmp_path, {"shelves": listed}, allow_list=True)
    settings["subscriptions"] = {"enabled": True, "interval": "50ms"}
    accept = {"accept": "multipart/mixed;subscriptionSpec=1.0, application/json"}
    async with running_service(tmp_path, database_url, settings) as service:
        unlisted = "subscription { books { title } }"
        refused = await service.client.post("/graphql", json={"query": unlisted}, headers=accept)
        assert (refused.status_code, code(refused)) == (403, "OPERATION_NOT_ALLOWED")
        async with service.client.stream(
            "POST", "/graphql", json={"documentId": "shelves"}, headers=accept
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("multipart/mixed")
            async for chunk in response.aiter_text():
                if '"shelves"' in chunk:
                    break


@pytest.mark.parametrize(
    "body",
    [
        {"extensions": apq(sha256(SHELVES))},
        {"query": SHELVES, "extensions": apq(sha256(SHELVES))},
        {"documentId": "shelves-v1"},
    ],
)
async def test_with_persisted_queries_off_a_hash_or_document_id_is_not_supported(tmp_path, database_url, body):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        response = await service.client.post("/graphql", json=body)
        assert (response.status_code, code(response)) == (400, "PERSISTED_QUERY_NOT_SUPPORTED")


BROKEN = apollo_manifest(
    ("title-v1", "BookTitle", "query", TITLE),
    ("gone-v1", "Gone", "query", "query Gone { books { nope } }"),
)


async def test_prod_refuses_to_start_naming_the_operation_that_does_not_validate(tmp_path, database_url):
    loaded = configure(tmp_path, persisted(tmp_path, BROKEN), database_url=database_url)
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    assert "gone-v1 (Gone) does not validate" in str(info.value)
    assert "nope" in str(info.value)


async def test_dev_logs_the_operation_that_does_not_validate_and_serves(tmp_path, database_url, caplog):
    caplog.set_level(logging.WARNING)
    async with running_service(tmp_path, database_url, persisted(tmp_path, BROKEN), mode="dev") as service:
        assert any("gone-v1 (Gone) does not validate" in r.getMessage() for r in caplog.records)
        response = await service.client.post("/graphql", json={"documentId": "title-v1", "variables": {"id": 3}})
        assert response.json() == {"data": {"book": {"title": "Kindred"}}}
        gone = await service.client.post("/graphql", json={"documentId": "gone-v1"})
        assert code(gone) == "GRAPHQL_VALIDATION_FAILED"


async def test_a_manifest_of_the_wrong_operation_type_is_refused(tmp_path, database_url):
    manifest = apollo_manifest(("title-v1", "BookTitle", "mutation", TITLE))
    loaded = configure(tmp_path, persisted(tmp_path, manifest), database_url=database_url)
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    assert "title-v1 (BookTitle) is a mutation but holds query" in str(info.value)


async def test_a_reload_whose_manifest_no_longer_validates_keeps_the_previous_schema_in_prod(
    tmp_path, database_url, caplog
):
    manifest = apollo_manifest(("title-v1", "BookTitle", "query", TITLE))
    async with running_service(tmp_path, database_url, persisted(tmp_path, manifest)) as service:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("alter table app_public.books rename column title to heading")
        try:
            notify(database_url)
            await wait_until(lambda: _logged(caplog, "title-v1 (BookTitle) does not validate"), timeout=10)
            assert (await service.client.get("/health")).json()["schema"]["generation"] == 1
        finally:
            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute("alter table app_public.books rename column heading to title")
        notify(database_url)
        await wait_until(lambda: _generation(service.client, 2), timeout=10)
        response = await service.client.post("/graphql", json={"documentId": "title-v1", "variables": {"id": 3}})
        assert response.json() == {"data": {"book": {"title": "Kindred"}}}


async def _logged(caplog, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def _generation(client, expected: int) -> bool:
    return (await client.get("/health")).json()["schema"]["generation"] == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "must be a JSON object"),
        ("{nope", "not JSON"),
        ('{"format": "other", "version": 1, "operations": []}', "format must be"),
        ('{"format": "apollo-persisted-query-manifest", "version": 2, "operations": []}', "version must be 1"),
        ('{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [{"id": "a"}]}', "needs a string"),
        (
            '{"format": "apollo-persisted-query-manifest", "version": 1, "operations": '
            '[{"id": "a", "body": "{ a }"}, {"id": "a", "body": "{ b }"}]}',
            "more than once: a",
        ),
        ('{"a": 1}', "text values"),
    ],
)
def test_a_file_that_is_not_a_manifest_is_named(text, problem):
    with pytest.raises(ManifestError, match=problem):
        read_manifest(text)


def test_the_registry_drops_the_least_recently_used_text_past_its_size():
    registry = Registry(limit=10)
    registry.register("a", "12345")
    registry.register("b", "12345")
    assert registry.get("a") == "12345"  # a is now the most recently used
    registry.register("c", "12345")
    assert (registry.get("a"), registry.get("b"), registry.get("c")) == ("12345", None, "12345")
    assert len(registry) == 2


@pytest.mark.parametrize("use_get", [False, True], ids=["post", "get"])
async def test_apollo_clients_persisted_query_link_registers_then_sends_the_hash_alone(tmp_path, database_url, use_get):
    """@apollo/client's own link: the first client's hash is unknown (PERSISTED_QUERY_NOT_FOUND, 200), it resends
    the text and registers it; a fresh client then sends the hash alone (over GET with useGETForHashedQueries)."""
    async with running_service(tmp_path, database_url, persisted(tmp_path)) as service:
        args = {
            "url": f"{service.url}/graphql",
            "query": TITLE,
            "variables": {"id": 3},
            "useGETForHashedQueries": use_get,
        }
        run = await run_client("apq", args, timeout=60)
    assert run.returncode == 0, (run.lines, run.stderr)
    expected = {"data": {"book": {"title": "Kindred"}}}
    assert run.values("result") == [expected, expected]
    requests, responses = run.values("request"), run.values("response")
    assert [r["method"] for r in requests] == (["GET", "POST", "GET"] if use_get else ["POST", "POST", "POST"])
    assert responses[0]["status"] == 200
    assert responses[0]["body"]["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    if not use_get:
        assert "query" not in requests[0]["body"] and "query" in requests[1]["body"]
        assert "query" not in requests[2]["body"]
        assert requests[2]["body"]["extensions"]["persistedQuery"]["version"] == 1
    assert responses[2] == {"status": 200, "body": expected}
