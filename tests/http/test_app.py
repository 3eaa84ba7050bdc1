"""The HTTP edge over real TCP (hypercorn on loopback): probes, request ids, routing answers, security headers, CORS,
the body limit, Server-Timing, and how typed and unexpected errors are rendered (SPEC "Endpoints", "Operations",
"Errors" -> REST, "Limits")."""

import re
import uuid

import httpx
import pytest

from svc.errors import Code, SvcError
from svc.http import Request, Response, Route
from tests.support.service import running_service

PROBLEM = "application/problem+json"


def body_route(limit: int) -> Route:
    async def handler(request: Request) -> Response:
        return Response.json({"size": len(await request.body(limit))})

    return Route("/echo", frozenset({"POST"}), handler)


async def fail_unexpectedly(request: Request) -> Response:
    raise RuntimeError("secret internals: relation app_private.keys")


async def fail_typed(request: Request) -> Response:
    raise SvcError(Code.PAGE_SIZE_EXCEEDED, "first is larger than 1000", extensions={"limit": 1000, "actual": 5000})


async def ui_page(request: Request) -> Response:
    return Response(200, b"<!doctype html><title>ui</title>", "text/html; charset=utf-8")


TEST_ROUTES = [
    Route("/boom", frozenset({"GET"}), fail_unexpectedly),
    Route("/typed", frozenset({"GET"}), fail_typed),
    Route("/ui", frozenset({"GET"}), ui_page, ui=True),
]


@pytest.fixture
async def prod(tmp_path, database_url):
    async with running_service(tmp_path, database_url, routes=TEST_ROUTES) as service:
        yield service.client


@pytest.fixture
async def dev(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev", routes=TEST_ROUTES) as service:
        yield service.client


# --- probes ------------------------------------------------------------------------------------------------------


async def test_live(prod):
    response = await prod.get("/live")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert response.headers["content-type"] == "application/json"


async def test_ready_runs_a_query(prod):
    response = await prod.get("/ready")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "database": "connected"})


async def test_health(prod):
    response = await prod.get("/health")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok" and body["database"] == "connected"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["timestamp"])
    assert body["version"] == "0.1.0"
    assert body["uptime"] >= 0
    assert body["schema"]["generation"] == 1 and body["schema"]["age"] >= 0
    assert set(body["pool"]) == {"size", "idle", "used", "pending"} and body["pool"]["size"] == 10


# --- request ids -------------------------------------------------------------------------------------------------


async def test_request_id_is_echoed(prod):
    for path in ("/live", "/nope", "/boom"):
        response = await prod.get(path, headers={"X-Request-Id": "abc-123"})
        assert response.headers["x-request-id"] == "abc-123"


async def test_request_id_is_generated_as_uuid4(prod):
    ids = {(await prod.get("/live")).headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3
    assert all(uuid.UUID(value).version == 4 for value in ids)


async def test_unusable_request_id_is_replaced(prod):
    response = await prod.get("/live", headers={"X-Request-Id": "x" * 201})
    assert uuid.UUID(response.headers["x-request-id"]).version == 4
    response = await prod.get("/live", headers={"X-Request-Id": "has space"})
    assert uuid.UUID(response.headers["x-request-id"]).version == 4


# --- routing answers ---------------------------------------------------------------------------------------------


async def test_unknown_path_is_a_404_problem(prod):
    response = await prod.get("/nope", headers={"X-Request-Id": "r1"})
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM
    assert response.json() == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": "no resource at /nope",
        "instance": "/nope",
        "code": "NOT_FOUND",
        "requestId": "r1",
    }


async def test_wrong_method_is_405_with_allow(prod):
    response = await prod.post("/live")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"
    assert response.json()["code"] == "METHOD_NOT_ALLOWED"


async def test_options_answers_204_with_allow(prod):
    response = await prod.options("/ready")
    assert response.status_code == 204
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"
    assert response.content == b""


async def test_head_answers_like_get_without_a_body(prod):
    get = await prod.get("/live")
    head = await prod.head("/live")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-type"] == "application/json"


# --- errors ------------------------------------------------------------------------------------------------------


async def test_typed_error_is_a_problem_with_its_members(prod):
    response = await prod.get("/typed", headers={"X-Request-Id": "r2"})
    assert response.status_code == 400
    assert response.json() == {
        "type": "about:blank",
        "title": "Page Size Exceeded",
        "status": 400,
        "detail": "first is larger than 1000",
        "instance": "/typed",
        "code": "PAGE_SIZE_EXCEEDED",
        "requestId": "r2",
        "limit": 1000,
        "actual": 5000,
    }


async def test_unexpected_error_is_masked_in_prod(prod, caplog):
    response = await prod.get("/boom", headers={"X-Request-Id": "r3"})
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "INTERNAL_SERVER_ERROR"
    assert body["requestId"] == "r3"
    assert "secret" not in response.text and "app_private" not in response.text
    assert "r3" in body["detail"]
    logged = [r for r in caplog.records if r.name == "svc.http" and r.request_id == "r3"]
    assert logged and "secret internals" in str(logged[0].exc_info[1])


async def test_unexpected_error_shows_its_message_with_full_detail(dev):
    response = await dev.get("/boom")
    assert response.status_code == 500
    assert response.json()["detail"] == "RuntimeError: secret internals: relation app_private.keys"


# --- Server-Timing -----------------------------------------------------------------------------------------------


async def test_server_timing_in_dev(dev):
    response = await dev.get("/live")
    assert re.fullmatch(r"total;dur=\d+(\.\d+)?", response.headers["server-timing"])


async def test_no_server_timing_in_prod(prod):
    assert "server-timing" not in (await prod.get("/live")).headers


# --- security headers --------------------------------------------------------------------------------------------

STRICT = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "strict-transport-security": "max-age=63072000; includeSubDomains",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    "cross-origin-opener-policy": "same-origin",
}
RELAXED = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


def security_headers(response: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items() if name in STRICT}


async def test_strict_preset_in_prod(prod):
    assert security_headers(await prod.get("/live")) == STRICT
    assert security_headers(await prod.get("/nope")) == STRICT


async def test_strict_preset_leaves_policy_and_frame_header_off_ui_pages(prod):
    headers = security_headers(await prod.get("/ui"))
    assert headers == {k: v for k, v in STRICT.items() if k not in ("content-security-policy", "x-frame-options")}


async def test_relaxed_preset_in_dev(dev):
    assert security_headers(await dev.get("/live")) == RELAXED


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"headers": {"preset": "off"}}, {}),
        ({"headers": {"preset": "relaxed"}}, RELAXED),
        (
            {"headers": {"set": {"Strict-Transport-Security": "max-age=31536000", "X-Frame-Options": ""}}},
            {
                **{k: v for k, v in STRICT.items() if k != "x-frame-options"},
                "strict-transport-security": "max-age=31536000",
            },
        ),
        (
            {"headers": {"preset": "off", "set": {"Permissions-Policy": "camera=()"}}},
            {"permissions-policy": "camera=()"},
        ),
    ],
)
async def test_presets_and_overrides(tmp_path, database_url, settings, expected):
    async with running_service(tmp_path, database_url, settings) as service:
        response = await service.client.get("/live")
    names = {*STRICT, "permissions-policy"}
    assert {name: value for name, value in response.headers.items() if name in names} == expected


# --- CORS --------------------------------------------------------------------------------------------------------


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-") or k == "vary"}


async def test_prod_allows_no_origin_by_default(prod):
    response = await prod.get("/live", headers={"Origin": "https://app.example.com"})
    assert cors_headers(response) == {}
    preflight = await prod.options(
        "/live", headers={"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}
    )
    assert preflight.status_code == 204
    assert "access-control-allow-origin" not in preflight.headers


async def test_dev_allows_any_origin(dev):
    response = await dev.get("/live", headers={"Origin": "https://anywhere.example"})
    headers = cors_headers(response)
    assert headers["access-control-allow-origin"] == "*"
    exposed = headers["access-control-expose-headers"].split(", ")
    assert {"X-Request-Id", "ETag", "Location", "X-Total-Count", "RateLimit-Remaining", "Retry-After"} <= set(exposed)


async def test_preflight(dev):
    response = await dev.options(
        "/live",
        headers={
            "Origin": "https://anywhere.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert response.status_code == 204
    assert cors_headers(response) == {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD",
        "access-control-allow-headers": "authorization, content-type, accept, prefer, x-request-id, if-none-match, "
        "if-match, range, x-min-wal-position",
        "access-control-max-age": "600",
    }


async def test_listed_origins_with_credentials(tmp_path, database_url):
    settings = {
        "server": {
            "cors": {
                "origins": ["https://app.example.com"],
                "credentials": True,
                "methods": ["GET"],
                "expose_headers": ["X-Request-Id"],
                "max_age": 60,
            }
        }
    }
    async with running_service(tmp_path, database_url, settings) as service:
        allowed = await service.client.get("/live", headers={"Origin": "https://app.example.com"})
        other = await service.client.get("/live", headers={"Origin": "https://evil.example"})
        preflight = await service.client.options(
            "/live", headers={"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}
        )
        none = await service.client.get("/live")
    assert cors_headers(allowed) == {
        "access-control-allow-origin": "https://app.example.com",
        "access-control-allow-credentials": "true",
        "access-control-expose-headers": "X-Request-Id",
        "vary": "Origin",
    }
    assert cors_headers(other) == {"vary": "Origin"}
    assert cors_headers(none) == {"vary": "Origin"}
    assert cors_headers(preflight) == {
        "access-control-allow-origin": "https://app.example.com",
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": "GET",
        "access-control-allow-headers": "authorization, content-type, accept, prefer, x-request-id, if-none-match, "
        "if-match, range, x-min-wal-position",
        "access-control-max-age": "60",
        "vary": "Origin",
    }


# --- request body limit ------------------------------------------------------------------------------------------


@pytest.fixture
async def small_body_limit(tmp_path, database_url):
    settings = {"limits": {"request_body_bytes": 1000}}
    async with running_service(tmp_path, database_url, settings, routes=[body_route(1000)]) as service:
        yield service.client


async def test_body_within_the_limit_is_read(small_body_limit):
    response = await small_body_limit.post("/echo", content=b"x" * 1000)
    assert response.json() == {"size": 1000}


async def test_declared_body_over_the_limit_is_413_before_reading_it(small_body_limit):
    response = await small_body_limit.post("/echo", content=b"x" * 5000)
    assert response.status_code == 413
    body = response.json()
    assert (body["code"], body["limit"], body["actual"]) == ("PAYLOAD_TOO_LARGE", 1000, 5000)


async def test_streamed_body_over_the_limit_is_413(small_body_limit):
    async def chunks():
        for _ in range(10):
            yield b"y" * 300

    response = await small_body_limit.post("/echo", content=chunks())
    assert response.status_code == 413
    assert response.json()["limit"] == 1000
    assert "actual" not in response.json()
