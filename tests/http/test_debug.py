"""Debug headers (SPEC "Debug headers (dev)", issue 21): with `dev.debug.sql`, every answer carries `X-Debug-SQL`, the
statements the request sent as percent-encoded JSON; a value over 8 KiB points at `/debug/sql/<id>`, which answers it
whole (the last 50 kept). Without it, neither the header nor the route. `debug.explain` and `debug.statements` are
refused until they are served."""

import json
from urllib.parse import unquote

import pytest

from svc.config import ConfigError
from svc.http import _debug
from tests.support.service import configure, running_service

SCHEMAS = {"database": {"schemas": ["app_public"]}}
DEBUG = {**SCHEMAS, "dev": {"debug": {"sql": True}}}


def debug_sql(response) -> object:
    return json.loads(unquote(response.headers["x-debug-sql"]))


async def test_every_answer_carries_the_statements_it_sent(tmp_path, database_url):
    async with running_service(tmp_path, database_url, DEBUG, mode="dev") as service:
        client = service.client
        read = await client.post("/graphql", json={"query": "{ authors(first: 2) { name } }"})
        assert read.status_code == 200, read.text
        (statement,) = debug_sql(read)
        assert statement["kind"] == "query" and statement["ms"] >= 0 and "sqlstate" not in statement
        assert "app_public" in statement["sql"] and "authors" in statement["sql"]
        rest = await client.get("/rest/authors", params={"first": "1"})
        assert rest.status_code == 200, rest.text
        assert [s["kind"] for s in debug_sql(rest)] == ["query"]
        # An answer that sent nothing says so.
        assert debug_sql(await client.get("/live")) == []


async def test_a_value_over_8_kib_points_at_the_debug_route_which_keeps_the_last_50(
    tmp_path, database_url, monkeypatch
):
    monkeypatch.setattr(_debug, "KEPT", 2)
    wide = "{ " + " ".join(f"a{n}: authors(first: 1) {{ name }}" for n in range(120)) + " }"
    async with running_service(tmp_path, database_url, DEBUG, mode="dev") as service:
        client = service.client
        pointers = []
        for _ in range(3):
            response = await client.post("/graphql", json={"query": wide})
            assert response.status_code == 200, response.text
            assert len(response.headers["x-debug-sql"]) <= _debug.MAX_HEADER
            pointers.append(debug_sql(response))
        kept = await client.get(pointers[-1]["url"])
        assert kept.status_code == 200 and kept.headers["content-type"] == "application/json"
        (statement,) = kept.json()
        assert len(kept.content) == pointers[-1]["bytes"] > _debug.MAX_HEADER
        assert statement["sql"].count("authors") >= 120
        # The oldest was let go.
        assert (await client.get(pointers[0]["url"])).status_code == 404
        assert (await client.get(pointers[1]["url"])).status_code == 200
        assert (await client.delete(pointers[1]["url"])).status_code == 405


async def test_without_debug_sql_there_is_no_header_and_no_route(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS, mode="dev") as service:
        response = await service.client.post("/graphql", json={"query": "{ authors(first: 1) { name } }"})
        assert response.status_code == 200 and "x-debug-sql" not in response.headers
        assert (await service.client.get("/debug/sql/abc")).status_code == 404


@pytest.mark.parametrize("name", ["explain", "statements"])
def test_debug_outputs_not_served_yet_are_refused(tmp_path, name):
    with pytest.raises(ConfigError) as refused:
        configure(tmp_path, {"dev": {"debug": {name: True}}}, mode="dev", database_url="postgresql:///unused")
    assert refused.value.problems == [f"dev.debug.{name}: not served yet (issue 21); dev.debug.sql is"]
