"""Debug headers (SPEC "Debug headers (dev)", issue 21): with `dev.debug.sql`, every answer carries `X-Debug-SQL`, the
statements the request sent as percent-encoded JSON; with `dev.debug.explain`, `X-Debug-Explain`, each compiled
statement's plan (the database's EXPLAIN, with the request's values and role, the statement still run once); a value
over 8 KiB points at `/debug/sql/<id>`, which answers it whole (the last 50 kept). Without them, neither the headers
nor the route. (`debug.statements`: tests/cli/test_advise_statements.py.)"""

from svc.http import _debug
from tests.support.debug import debug_explain, debug_sql
from tests.support.service import running_service

SCHEMAS = {"database": {"schemas": ["app_public"]}}
DEBUG = {**SCHEMAS, "dev": {"debug": {"sql": True}}}


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


async def test_every_answer_carries_the_plans_of_its_statements(tmp_path, database_url):
    settings = {**SCHEMAS, "dev": {"debug": {"explain": True}}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        client = service.client
        before = (await client.get("/health")).json()["statements"]
        read = await client.post("/graphql", json={"query": "query($id: Int!) { author(rowId: $id) { name } }",
                                                   "variables": {"id": 1}})  # fmt: skip
        assert read.status_code == 200, read.text
        assert read.json() == {"data": {"author": {"name": "Ada"}}}
        (explained,) = await debug_explain(client, read)
        assert "authors" in explained["sql"]
        (plan,) = explained["plan"]
        assert plan["Plan"]["Node Type"] and plan["Plan"]["Total Cost"] >= 0
        # The plan is asked for beside the statement, which is still sent once.
        assert (await client.get("/health")).json()["statements"] - before == 1
        assert "x-debug-sql" not in read.headers
        # A mutation's statements (its write, then its payload read) each have their plan; the write ran once.
        created = await client.post(
            "/graphql",
            json={"query": 'mutation { createPost(input: {authorId: 1, title: "explained"}) { post { title } } }'},
        )
        assert created.json() == {"data": {"createPost": {"post": {"title": "explained"}}}}, created.text
        plans = await debug_explain(client, created)
        assert len(plans) == 2 and "insert" in plans[0]["sql"] and plans[0]["plan"][0]["Plan"]["Node Type"]
        posts = await client.get("/rest/posts", params={"filter[title][eq]": "explained", "fields": "title"})
        assert posts.json() == [{"title": "explained"}]
        assert len(await debug_explain(client, posts)) == 1
        # A write the database refuses when it runs (planned fine) fails as it would have: typed, nothing written.
        refused = await client.post(
            "/graphql",
            json={"query": 'mutation { createPost(input: {authorId: 999, title: "orphan"}) { post { title } } }'},
        )
        assert refused.json()["errors"][0]["extensions"]["code"] == "AUTHOR_NOT_FOUND", refused.text
        orphans = await client.get("/rest/posts", params={"filter[title][eq]": "orphan"})
        assert orphans.json() == []
