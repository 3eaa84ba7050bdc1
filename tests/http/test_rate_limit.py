"""Rate limits over real TCP (hypercorn on loopback; SPEC "Limits" -> rate limits, "Errors", "Endpoints"): a
concurrent burst admits exactly `burst` requests, every answer carries `RateLimit-*`, refusals are 429 with
`Retry-After` and `RATE_LIMITED` (a GraphQL error with `retryAfter` on /graphql, a problem elsewhere) and use
nothing up, requests are counted before their body is read, GraphQL and other API routes share a client's bucket,
authenticated clients are counted by `key_claim` at their own rate and a refused token by address, X-Forwarded-For
is read only from trusted proxies, `max_clients` evicts the least recently used client, and probes and the SDL are
never limited.

The rate is one request a minute, so no bucket refills while a test runs; the test clock (trio's MockClock running
at real speed) is moved on by exactly one interval where a test needs a refill."""

import time
from typing import Any

import httpx
import jwt
import pytest
import trio

from svc.http import Request, Response, Route
from tests.support.service import running_service

BURST = 5
QUERY = {"query": "{ __typename }"}
SECRET = "a-shared-secret-of-at-least-32-bytes!"
ENVIRON = {"AUTH_JWT_SECRET": SECRET}


async def echo(request: Request) -> Response:
    return Response.json({"size": len(await request.body(None))})


API_ROUTES = [Route("/api/echo", frozenset({"POST"}), echo, api=True)]


def rate_limit(**settings: Any) -> dict[str, Any]:
    return {
        "graphql": {"sdl": True},
        "limits": {
            "request_body_bytes": 100,
            "rate_limit": {
                "enabled": True,
                "anonymous": {"requests_per_minute": 1, "burst": BURST},
                "authenticated": {"requests_per_minute": 1, "burst": 3},
                **settings,
            },
        },
    }


@pytest.fixture
async def client(tmp_path, database_url, mock_clock):
    mock_clock.rate = 1.0  # real time, moved on by hand
    async with running_service(tmp_path, database_url, rate_limit(), routes=API_ROUTES, environ=ENVIRON) as service:
        yield service.client


def bearer(claims: dict[str, Any], secret: str = SECRET) -> dict[str, str]:
    now = int(time.time())
    return {"Authorization": f"Bearer {jwt.encode({'iat': now, 'exp': now + 300, **claims}, secret, 'HS256')}"}


def limits(response: httpx.Response) -> tuple[str | None, ...]:
    names = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after")
    return tuple(response.headers.get(name) for name in names)


async def concurrently(count: int, send: Any) -> list[httpx.Response]:
    responses: list[httpx.Response] = []

    async def one() -> None:
        responses.append(await send())

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)
    return responses


async def test_a_concurrent_burst_admits_exactly_burst(client, mock_clock):
    responses = await concurrently(12, lambda: client.post("/graphql", json=QUERY))

    accepted = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    assert len(accepted) == BURST
    assert all(r.json() == {"data": {"__typename": "Query"}} for r in accepted)
    assert sorted(limits(r) for r in accepted) == [
        ("5", "0", "300", None),
        ("5", "1", "240", None),
        ("5", "2", "180", None),
        ("5", "3", "120", None),
        ("5", "4", "60", None),
    ]
    assert len(refused) == 7
    for response in refused:
        assert response.status_code == 429
        assert limits(response) == ("5", "0", "300", "60")
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {
            "errors": [
                {
                    "message": "too many requests; retry in 60 s",
                    "extensions": {
                        "code": "RATE_LIMITED",
                        "requestId": response.headers["x-request-id"],
                        "retryAfter": 60,
                    },
                }
            ]
        }

    # The seven refusals used nothing: one interval later exactly one more request is admitted. (A new client:
    # the jump also expires the server's keep-alive timeout of the old client's idle connections.)
    mock_clock.jump(60)
    async with httpx.AsyncClient(base_url=client.base_url, timeout=10) as later:
        again = await later.post("/graphql", json=QUERY)
        assert (again.status_code, limits(again)) == (200, ("5", "0", "300", None))
        assert (await later.post("/graphql", json=QUERY)).status_code == 429


async def test_other_api_routes_answer_a_problem_and_share_the_bucket(client):
    for _ in range(3):
        assert (await client.post("/graphql", json=QUERY)).status_code == 200
    for _ in range(2):
        assert (await client.post("/api/echo", content=b"{}")).status_code == 200
    graphql = await client.post("/graphql", json=QUERY)
    assert graphql.status_code == 429
    response = await client.post("/api/echo", content=b"{}", headers={"X-Request-Id": "r-429"})
    assert response.status_code == 429
    assert response.headers["content-type"] == "application/problem+json"
    assert limits(response) == ("5", "0", "300", "60")
    assert response.json() == {
        "type": "about:blank",
        "title": "Too Many Requests",
        "status": 429,
        "detail": "too many requests; retry in 60 s",
        "instance": "/api/echo",
        "code": "RATE_LIMITED",
        "requestId": "r-429",
        "retryAfter": 60,
    }


async def test_requests_are_counted_before_their_body_is_read(client):
    # Malformed, unsupported and oversized requests count, and their error answers carry the headers too.
    answers = [
        await client.post("/graphql", content=b"{not json", headers={"content-type": "application/json"}),
        await client.post("/graphql", content=b"query=x", headers={"content-type": "text/plain"}),
        await client.post("/api/echo", content=b"x" * 1000),
        await client.get("/graphql", params={"query": "{ nope }"}),
        await client.post("/graphql", json=QUERY),
    ]
    assert [(r.status_code, r.headers["ratelimit-remaining"]) for r in answers] == [
        (400, "4"),
        (415, "3"),
        (200, "2"),  # the echo route reads its body without a limit
        (400, "1"),
        (200, "0"),
    ]
    # Refused before the body is looked at: a body over limits.request_body_bytes is not 413 but 429.
    response = await client.post("/graphql", content=b"x" * 1000, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["errors"][0]["extensions"]["code"]) == (429, "RATE_LIMITED")


async def test_probes_sdl_and_unknown_paths_are_never_limited(client):
    for _ in range(BURST):
        await client.post("/graphql", json=QUERY)
    assert (await client.post("/graphql", json=QUERY)).status_code == 429
    for _ in range(BURST + 2):
        for path in ("/live", "/ready", "/health", "/schema.graphql"):
            response = await client.get(path)
            assert response.status_code == 200, path
            assert limits(response) == (None, None, None, None)
        response = await client.get("/nope")
        assert (response.status_code, limits(response)) == (404, (None, None, None, None))
        response = await client.options("/graphql")
        assert (response.status_code, limits(response)) == (204, (None, None, None, None))


async def test_authenticated_clients_are_counted_by_subject_at_their_own_rate(client):
    async def post(headers: dict[str, str]) -> httpx.Response:
        return await client.post("/graphql", json=QUERY, headers=headers)

    alice = [await post(bearer({"sub": "alice"})) for _ in range(4)]
    assert [(r.status_code, *limits(r)) for r in alice] == [
        (200, "3", "2", "60", None),
        (200, "3", "1", "120", None),
        (200, "3", "0", "180", None),
        (429, "3", "0", "180", "60"),
    ]
    # another subject from the same address, and anonymous requests from it, have buckets of their own
    assert [(await post(bearer({"sub": "bob"}))).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert [(await post({})).status_code for _ in range(BURST + 1)] == [200] * BURST + [429]
    # a token for alice signed anew is still alice
    assert (await post(bearer({"sub": "alice", "jti": "another"}))).status_code == 429


async def test_a_refused_token_is_counted_by_address(client):
    answers = [await client.post("/graphql", json=QUERY, headers=bearer({"sub": "x"}, "not-the-secret-" * 3))]
    answers += [await client.post("/graphql", json=QUERY) for _ in range(BURST - 1)]
    assert [(r.status_code, r.headers["ratelimit-remaining"]) for r in answers] == [
        (401, "4"),
        (200, "3"),
        (200, "2"),
        (200, "1"),
        (200, "0"),
    ]
    response = await client.post("/graphql", json=QUERY, headers={"Authorization": "Bearer nonsense"})
    assert (response.status_code, limits(response)) == (429, ("5", "0", "300", "60"))
    assert response.json()["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
    # a verified token is not the address's client
    assert (await client.post("/graphql", json=QUERY, headers=bearer({"sub": "alice"}))).status_code == 200


async def test_key_claim_may_be_a_dot_path(tmp_path, database_url):
    settings = rate_limit(key_claim="org.id")
    async with running_service(tmp_path, database_url, settings, environ=ENVIRON) as service:

        async def status(claims: dict[str, Any]) -> int:
            return (await service.client.post("/graphql", json=QUERY, headers=bearer(claims))).status_code

        org = {"org": {"id": "o-1"}}
        assert [await status({**org, "sub": user}) for user in ("ann", "ben", "cy", "dee")] == [200, 200, 200, 429]
        assert await status({"org": {"id": "o-2"}, "sub": "ann"}) == 200


async def test_forwarded_for_is_ignored_from_an_untrusted_peer(client):
    statuses = [
        (await client.post("/graphql", json=QUERY, headers={"X-Forwarded-For": f"198.51.100.{i}"})).status_code
        for i in range(BURST + 1)
    ]
    assert statuses == [200] * BURST + [429]


async def test_behind_a_trusted_proxy_clients_are_counted_by_forwarded_for(tmp_path, database_url):
    settings = rate_limit(trusted_proxies=["127.0.0.0/8"], anonymous={"requests_per_minute": 1, "burst": 2})
    async with running_service(tmp_path, database_url, settings) as service:

        async def status(forwarded: str) -> int:
            response = await service.client.post("/graphql", json=QUERY, headers={"X-Forwarded-For": forwarded})
            return response.status_code

        assert [await status("198.51.100.1") for _ in range(3)] == [200, 200, 429]
        # what the client wrote itself is left of what the proxy appended, and does not make it someone else
        assert await status("203.0.113.99, 198.51.100.1") == 429
        # trusted hops on the right are skipped
        assert await status("198.51.100.1, 127.0.0.9") == 429
        assert [await status("198.51.100.2, 127.0.0.9") for _ in range(3)] == [200, 200, 429]


async def test_max_clients_evicts_the_least_recently_used_client(tmp_path, database_url):
    settings = rate_limit(
        trusted_proxies=["127.0.0.0/8"], max_clients=2, anonymous={"requests_per_minute": 1, "burst": 1}
    )
    async with running_service(tmp_path, database_url, settings) as service:

        async def status(client: str) -> int:
            response = await service.client.post("/graphql", json=QUERY, headers={"X-Forwarded-For": client})
            return response.status_code

        assert [await status("198.51.100.1"), await status("198.51.100.1")] == [200, 429]
        assert [await status("198.51.100.2"), await status("198.51.100.3")] == [200, 200]  # .1 evicted
        assert [await status("198.51.100.1"), await status("198.51.100.1")] == [200, 429]  # afresh; .2 evicted
        assert await status("198.51.100.3") == 429  # still held


async def test_a_kind_of_client_whose_rate_is_off_is_not_limited(tmp_path, database_url):
    settings = rate_limit(anonymous={"requests_per_minute": "off"})
    async with running_service(tmp_path, database_url, settings) as service:
        for _ in range(BURST + 2):
            response = await service.client.post("/graphql", json=QUERY)
            assert (response.status_code, limits(response)) == (200, (None, None, None, None))


async def test_rate_limits_are_off_by_default(tmp_path, database_url):
    async with running_service(tmp_path, database_url) as service:
        for _ in range(3):
            response = await service.client.post("/graphql", json=QUERY)
            assert (response.status_code, limits(response)) == (200, (None, None, None, None))


async def test_rest_shares_the_bucket_and_answers_a_problem_the_document_never_limited(tmp_path, database_url):
    settings = rate_limit()
    settings["openapi"] = {"spec": True}
    async with running_service(tmp_path, database_url, settings, environ=ENVIRON) as service:
        client = service.client
        for _ in range(3):
            assert (await client.post("/graphql", json=QUERY)).status_code == 200
        assert (await client.get("/rest/authors")).status_code == 200
        assert limits(await client.get("/rest")) == ("5", "0", "300", None)  # any REST path counts, the index too
        refused = await client.get("/rest/authors/1", headers={"X-Request-Id": "r-rest"})
        assert refused.status_code == 429 and refused.headers["content-type"] == "application/problem+json"
        assert limits(refused) == ("5", "0", "300", "60")
        assert refused.json()["code"] == "RATE_LIMITED" and refused.json()["retryAfter"] == 60
        assert (await client.post("/graphql", json=QUERY)).status_code == 429  # one bucket for both APIs
        for _ in range(BURST + 1):
            document = await client.get("/openapi.json")
            assert document.status_code == 200 and limits(document) == (None, None, None, None)
        # With rate limits on, the document says so: every operation may answer 429.
        assert "429" in document.json()["paths"]["/rest/authors"]["get"]["responses"]
