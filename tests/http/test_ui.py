"""The interactive UI pages over real TCP (SPEC "Endpoints" -> service-level, "Runtime modes", "Operations"): GraphiQL
at /graphiql and Scalar at /scalar in dev mode (404 in prod unless switched on), every asset from the package,
gzip-compressed or plain as the client accepts, cached for a year (the pages not at all), the security headers of UI
pages, and no reference to anything but the service itself. tests/http/test_ui_browser.py renders them."""

import gzip
import re
from importlib import resources

import httpx
import pytest

from svc.http._ui import accepts_gzip
from tests.http.test_app import RELAXED, STRICT, security_headers
from tests.support.service import running_service

UI_FILES = resources.files("svc.http") / "ui"
MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".ttf": "font/ttf",
}
YEAR = "public, max-age=31536000, immutable"
#: Hosts that serve code, styles or fonts to pages; a bundle naming one would load from it.
CDN_HOSTS = ("esm.sh", "unpkg.com", "cdn.jsdelivr.net", "cdnjs.cloudflare.com", "fonts.googleapis.com",
             "fonts.gstatic.com", "cdn.skypack.dev", "ga.jspm.io")  # fmt: skip


def assets(ui: str) -> dict[str, bytes]:
    """The files the package holds for one UI: served name -> plain bytes."""
    files = {}
    for file in (UI_FILES / ui).iterdir():
        stored = file.read_bytes()
        files[file.name.removesuffix(".gz")] = gzip.decompress(stored) if file.name.endswith(".gz") else stored
    return files


def referenced(page: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]*)"', page)


@pytest.fixture
async def dev(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        yield service.client


@pytest.fixture
async def prod(tmp_path, database_url):
    async with running_service(tmp_path, database_url) as service:
        yield service.client


# --- the pages ---------------------------------------------------------------------------------------------------


async def test_graphiql_page_loads_its_script_and_stylesheet_from_the_service(dev):
    response = await dev.get("/graphiql")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    files = assets("graphiql")
    sources = referenced(response.text)
    assert sorted(sources) == sorted(f"graphiql/{name}" for name in files if name.startswith("graphiql-app-"))
    assert '<div id="graphiql">' in response.text


async def test_scalar_page_shows_the_document_at_openapi_path(dev):
    response = await dev.get("/scalar")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert '<div id="app" data-url="openapi.json">' in response.text
    assert sorted(referenced(response.text)) == sorted(f"scalar/{name}" for name in assets("scalar"))


async def test_scalar_page_follows_a_configured_openapi_path(tmp_path, database_url):
    settings = {"openapi": {"path": "/docs/api.json"}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        response = await service.client.get("/scalar")
    assert '<div id="app" data-url="docs/api.json">' in response.text


async def test_the_scalar_starter_keeps_scalar_offline(dev):
    (name,) = [name for name in assets("scalar") if name.startswith("scalar-app-")]
    starter = (await dev.get(f"/scalar/{name}")).text
    # Scalar's default fonts come from its font host, the agent and MCP buttons talk to its cloud.
    assert "withDefaultFonts:!1" in starter
    assert "telemetry:!1" in starter
    assert "agent:{disabled:!0}" in starter and "mcp:{disabled:!0}" in starter


# --- the assets --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ui", ["graphiql", "scalar"])
async def test_every_asset_is_served_gzip_compressed_when_accepted(dev, ui):
    files = assets(ui)
    assert files
    for name, plain in files.items():
        response = await dev.get(f"/{ui}/{name}", headers={"Accept-Encoding": "gzip, deflate, br"})
        assert response.status_code == 200, name
        assert response.headers["content-type"] == MEDIA_TYPES[name[name.rfind(".") :]], name
        assert response.headers["content-encoding"] == "gzip"
        assert response.headers["cache-control"] == YEAR
        assert response.headers["vary"] == "Accept-Encoding"
        assert int(response.headers["content-length"]) < len(plain)
        assert response.content == plain  # httpx decompressed it


@pytest.mark.parametrize("ui", ["graphiql", "scalar"])
async def test_every_asset_is_served_plain_otherwise(dev, ui):
    for name, plain in assets(ui).items():
        response = await dev.get(f"/{ui}/{name}", headers={"Accept-Encoding": "identity"})
        assert response.status_code == 200, name
        assert response.headers["content-type"] == MEDIA_TYPES[name[name.rfind(".") :]], name
        assert "content-encoding" not in response.headers
        assert response.headers["content-length"] == str(len(plain))
        assert response.headers["cache-control"] == YEAR
        assert response.content == plain


async def test_without_accept_encoding_an_asset_is_plain(dev):
    name = next(iter(assets("graphiql")))
    request = dev.build_request("GET", f"/graphiql/{name}")
    del request.headers["accept-encoding"]
    response = await dev.send(request)
    assert response.status_code == 200
    assert "content-encoding" not in response.headers


@pytest.mark.parametrize(
    ("header", "gzip_allowed"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP", True),
        ("x-gzip", True),
        ("deflate, gzip;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip; q=0.000", False),
        ("*", True),
        ("*;q=0", False),
        ("br, *", True),
        ("*, gzip;q=0", False),
        ("identity", False),
        ("br, deflate", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_accept_encoding_allows_gzip(header, gzip_allowed):
    assert accepts_gzip(header) is gzip_allowed


async def test_head_answers_like_get_without_a_body(dev):
    name = next(iter(assets("scalar")))
    for path in ("/graphiql", "/scalar", f"/scalar/{name}"):
        for encoding in ("gzip", "identity"):
            get = await dev.get(path, headers={"Accept-Encoding": encoding})
            head = await dev.head(path, headers={"Accept-Encoding": encoding})
            assert head.status_code == 200
            assert head.content == b""
            for header in ("content-length", "content-type", "cache-control"):
                assert head.headers[header] == get.headers[header], (path, header)
            assert head.headers.get("content-encoding") == get.headers.get("content-encoding")


async def test_only_get_and_head(dev):
    response = await dev.post("/graphiql")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"


# --- when they are served ----------------------------------------------------------------------------------------


async def test_prod_serves_no_ui(prod):
    paths = ["/graphiql", "/scalar", *(f"/graphiql/{name}" for name in assets("graphiql"))]
    for path in paths:
        response = await prod.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("settings", "graphiql", "scalar"),
    [
        ({"graphql": {"ui": True}}, 200, 404),
        ({"openapi": {"ui": True}}, 404, 200),
        # A page whose API is switched off would only show errors.
        ({"graphql": {"ui": True, "enabled": False}, "openapi": {"ui": True, "enabled": False}}, 404, 404),
    ],
)
async def test_switches(tmp_path, database_url, settings, graphiql, scalar):
    async with running_service(tmp_path, database_url, settings) as service:
        assert (await service.client.get("/graphiql")).status_code == graphiql
        assert (await service.client.get("/scalar")).status_code == scalar


async def test_dev_ui_switched_off(tmp_path, database_url):
    settings = {"graphql": {"ui": False}, "openapi": {"ui": False}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        assert (await service.client.get("/graphiql")).status_code == 404
        assert (await service.client.get("/scalar")).status_code == 404


# --- security headers, tokens and rate limits --------------------------------------------------------------------

UI_ON = {"graphql": {"ui": True}, "openapi": {"ui": True}}


async def test_strict_preset_leaves_policy_and_frame_header_off_ui_pages_and_assets(tmp_path, database_url):
    ui_strict = {k: v for k, v in STRICT.items() if k not in ("content-security-policy", "x-frame-options")}
    async with running_service(tmp_path, database_url, UI_ON) as service:
        paths = ["/graphiql", "/scalar", *(f"/graphiql/{name}" for name in assets("graphiql"))]
        for path in paths:
            assert security_headers(await service.client.get(path)) == ui_strict, path
        assert security_headers(await service.client.get("/live")) == STRICT


async def test_relaxed_preset_on_ui_pages(dev):
    assert security_headers(await dev.get("/graphiql")) == RELAXED
    assert security_headers(await dev.get("/scalar")) == RELAXED


async def test_ui_routes_take_no_token_and_are_never_rate_limited(tmp_path, database_url):
    limits = {"limits": {"rate_limit": {"enabled": True, "anonymous": {"requests_per_minute": 1, "burst": 1}}}}
    async with running_service(tmp_path, database_url, {**UI_ON, **limits}) as service:
        bad_token = {"Authorization": "Bearer not-a-token"}
        for _ in range(3):
            for path in ("/graphiql", "/scalar"):
                response = await service.client.get(path, headers=bad_token)
                assert response.status_code == 200
                assert "ratelimit-limit" not in response.headers
        assert (await service.client.post("/graphql", json={"query": "{ __typename }"})).status_code == 200
        assert (await service.client.post("/graphql", json={"query": "{ __typename }"})).status_code == 429


# --- nothing from elsewhere --------------------------------------------------------------------------------------


async def test_pages_reference_only_the_service(dev):
    for path in ("/graphiql", "/scalar"):
        for url in referenced((await dev.get(path)).text):
            # Relative to the page: no scheme, no host, not even the root (so a path prefix in front works too).
            assert httpx.URL(url).scheme == "" and not url.startswith("/"), url


@pytest.mark.parametrize("ui", ["graphiql", "scalar"])
async def test_stylesheets_and_scripts_load_nothing_from_elsewhere(dev, ui):
    for name in assets(ui):
        text = (await dev.get(f"/{ui}/{name}")).text
        if name.endswith(".css"):
            for url in re.findall(r"url\(\s*['\"]?([^'\")]*)", text):
                assert url.startswith("data:") or httpx.URL(url).scheme == "", (name, url[:80])
            assert "@import" not in text, name
        if name.endswith(".js"):
            for host in CDN_HOSTS:
                assert host not in text, (name, host)
            # Workers and imported scripts come from the service (the page's own origin).
            assert not re.search(r"(new Worker|importScripts|import)\(\s*['\"`]https?:", text), name
