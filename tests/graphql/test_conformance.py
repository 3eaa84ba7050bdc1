"""GraphQL over HTTP (SPEC "Endpoints" -> `/graphql`; the GraphQL-over-HTTP specification): the
`application/graphql-response+json` media type when the client ranks it first, with request errors answered 4xx and
without a `data` member; `application/json` as before otherwise; and the graphql-http audit suite run against
`svc run` by its reference implementation."""

import pytest

from tests.support.node_clients import run_client
from tests.support.process import SVC, service_process
from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}
GRAPHQL_RESPONSE = "application/graphql-response+json"
#: SHOULDs the spec's status rule overrides ("with data: null, the status of the first error"): over
#: application/json a parse, validation or variable error is 400, not 200 (application/json is the legacy type).
LEGACY_STATUS_WARNINGS = {"572B", "FDE2", "7B9B"}


@pytest.fixture
async def client(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        yield service.client


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE}, application/json;q=0.9", GRAPHQL_RESPONSE),  # Apollo Client, graphql-http
        (f"application/json, {GRAPHQL_RESPONSE};q=0.5", "application/json"),
        (f"{GRAPHQL_RESPONSE};q=0", "application/json"),
        ("application/json", "application/json"),
        ("*/*", "application/json"),
        (None, "application/json"),
    ],
)
async def test_the_response_media_type_is_the_one_the_client_ranks_first(client, accept, media):
    headers = {"accept": accept} if accept else {}
    response = await client.post("/graphql", json={"query": "{ book(rowId: 3) { title } }"}, headers=headers)
    assert response.status_code == 200
    content_type = response.headers["content-type"]
    assert content_type.split(";")[0] == media
    assert response.json() == {"data": {"book": {"title": "Kindred"}}}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": "{ book(rowId: 3) { title "}, 400, "GRAPHQL_PARSE_FAILED"),
        ({"query": "{ book(rowId: 3) { nope } }"}, 400, "GRAPHQL_VALIDATION_FAILED"),
        ({"query": "query($id: Int!) { book(rowId: $id) { title } }", "variables": {"id": "x"}}, 400, "BAD_USER_INPUT"),
        ({"query": "{ book(rowId: 3) { title } }", "extra": 1}, 400, "BAD_USER_INPUT"),
    ],
)
async def test_a_request_error_has_no_data_member_in_graphql_response_json(client, body, status, code):
    response = await client.post("/graphql", json=body, headers={"accept": GRAPHQL_RESPONSE})
    assert (response.status_code, response.headers["content-type"].split(";")[0]) == (status, GRAPHQL_RESPONSE)
    answer = response.json()
    assert "data" not in answer and answer["errors"][0]["extensions"]["code"] == code
    legacy = await client.post("/graphql", json=body, headers={"accept": "application/json"})
    assert legacy.status_code == status
    if "extra" not in body:  # refused by the HTTP layer: no data in either type
        assert legacy.json()["data"] is None


@pytest.mark.slow
async def test_the_graphql_http_audit_suite_finds_no_error_and_only_the_legacy_status_warnings(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text("database: {schemas: [app_public]}\nserver: {host: 127.0.0.1, port: 0}\n")
    env = {"DATABASE_URL": database_url}
    async with service_process([SVC, "--mode", "dev", "run"], cwd=tmp_path, env=env) as service:
        assert service.url is not None, service.log
        run = await run_client("audit", {"url": f"{service.url}/graphql"}, timeout=60)
    assert run.returncode == 0, (run.lines, run.stderr)
    audits = run.values("audit")
    failing = {a["id"]: (a["status"], a["name"], a.get("reason")) for a in audits if a["status"] != "ok"}
    assert set(failing) == LEGACY_STATUS_WARNINGS, failing
    assert all(status == "warn" for status, _, _ in failing.values())
    summary = run.values("summary")[0]
    assert summary == {"ok": len(audits) - 3, "warn": 3, "error": 0, "notice": 0}
