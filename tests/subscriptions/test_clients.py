"""Subscriptions over the three transports, each driven by its reference client (SPEC "Subscriptions"): graphql-ws
over WebSocket, graphql-sse over server-sent events, and Apollo's multipart protocol read with meros. A change made
through a mutation or plain SQL reaches the subscriber within two intervals; no change, no message; row-level
security decides what each subscriber sees."""

import pytest
import trio

from tests.subscriptions.support import INTERVAL, NOTES, bodies, sql, subscriptions_service, token, ws_url
from tests.support.node_clients import ensure_installed, run_client, start_client

DATABASE_FIXTURES = ["auth.sql"]
#: A change is seen within two intervals (plus the clients' own latency on a loaded machine).
SEEN_WITHIN = 2 * INTERVAL + 3


@pytest.fixture(scope="module", autouse=True)
def node_clients():
    ensure_installed()


def args(kind: str, service, query: str, bearer: str | None, **more) -> dict:
    if kind == "ws":
        url = ws_url(service)
        auth = {"connectionParams": {"Authorization": f"Bearer {bearer}"}} if bearer else {}
    else:
        url = service.url + ("/graphql/stream" if kind == "sse" else "/graphql")
        auth = {"headers": {"Authorization": f"Bearer {bearer}"}} if bearer else {}
    return {"url": url, "query": query, **auth, **more}


def payload(kind: str, line: dict) -> dict | None:
    """The execution result a client line carries, if any (heartbeats and readiness carry none)."""
    if kind == "multipart":
        return line.get("part", {}).get("payload")
    return line.get("next")


async def next_result(kind: str, client, timeout: float = SEEN_WITHIN) -> dict:
    line = await client.wait_for(lambda line: payload(kind, line) is not None or "error" in line, timeout)
    assert "error" not in line, line
    result = payload(kind, line)
    assert result is not None
    return result


@pytest.mark.parametrize("kind", ["ws", "sse", "multipart"])
async def test_changes_by_mutation_and_by_sql_reach_the_subscriber(kind, tmp_path, database_url):
    alice = token(f"alice-{kind}")
    sql(database_url, "insert into app.notes (owner, body) values (%s, 'first')", [f"alice-{kind}"])
    async with subscriptions_service(tmp_path, database_url) as service, trio.open_nursery() as nursery:
        client = await start_client(kind, args(kind, service, NOTES, alice), nursery)
        assert bodies(await next_result(kind, client)) == ["first"]

        created = await service.client.post(
            "/graphql",
            json={"query": 'mutation { createNote(input: {body: "by mutation"}) { note { body } } }'},
            headers={"Authorization": f"Bearer {alice}"},
        )
        assert "errors" not in created.json(), created.json()
        assert bodies(await next_result(kind, client)) == ["first", "by mutation"]

        sql(database_url, "insert into app.notes (owner, body) values (%s, 'by sql')", [f"alice-{kind}"])
        sql(database_url, "insert into app.notes (owner, body) values ('someone else', 'hidden')")
        assert bodies(await next_result(kind, client)) == ["first", "by mutation", "by sql"]

        # No change, no message (heartbeats aside): several rounds pass in silence.
        with trio.move_on_after(5 * INTERVAL):
            line = await client.wait_for(lambda line: payload(kind, line) is not None, 5 * INTERVAL + 1)
            pytest.fail(f"a result without a change: {line}")
        client.kill()


@pytest.mark.parametrize("kind", ["ws", "sse", "multipart"])
async def test_queries_and_mutations_over_the_live_transports(kind, tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url) as service:
        run = await run_client(kind, args(kind, service, "{ posts { title } }", None))
        results = [payload(kind, line) for line in run.lines if payload(kind, line) is not None]
        if kind == "multipart":  # a query is answered as plain JSON, as Apollo clients expect
            results = [line["body"] for line in run.lines if "body" in line]
        assert results == [{"data": {"posts": [{"title": "Hello"}]}}], run.lines


@pytest.mark.parametrize("kind", ["ws", "sse"])
async def test_a_validation_error_is_the_protocols_error(kind, tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url) as service:
        run = await run_client(kind, args(kind, service, "subscription { nope }", None))
        if kind == "ws":
            (error,) = [line["error"] for line in run.lines if "error" in line]
            assert error["graphql"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        else:
            (result,) = [line["next"] for line in run.lines if "next" in line]
            assert result["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
            assert {"complete": True} in run.lines


@pytest.mark.parametrize("kind", ["ws", "sse", "multipart"])
async def test_token_expiry_ends_the_subscription(kind, tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url) as service:
        run = await run_client(kind, args(kind, service, NOTES, token("carol", lifetime=2)), timeout=15)
        assert any(payload(kind, line) is not None for line in run.lines), run.lines
        if kind == "ws":
            assert run.lines[-1] == {"error": {"close": 4403, "reason": "Forbidden: the token has expired"}}
        elif kind == "sse":
            last = [line["next"] for line in run.lines if "next" in line][-1]
            assert last["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
            assert run.lines[-1] == {"complete": True}
        else:
            last = [line["part"] for line in run.lines if "part" in line][-1]
            assert last["payload"] is None and last["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
            assert run.lines[-1] == {"end": True}


@pytest.mark.parametrize("kind", ["ws", "sse", "multipart"])
async def test_a_bad_token_is_refused(kind, tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url) as service:
        run = await run_client(kind, args(kind, service, NOTES, "not-a-token"))
        assert run.returncode == 1, run.lines
        if kind == "ws":
            assert run.lines[-1]["error"]["close"] == 4403
        elif kind == "sse":
            assert run.lines[-1]["error"]["status"] == 401
        else:
            assert run.lines[-1]["status"] == 401
