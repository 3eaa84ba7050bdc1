"""The OpenAPI document served and pinned (SPEC "Service-level endpoints", "Configuration" -> openapi, "Versioning"):
JSON at `openapi.path`, YAML with `Accept: application/yaml`; served in dev, in prod only when switched on (or when
the Scalar reference needs it), never with `openapi.enabled` off; at startup a pinned file that differs refuses to
serve (`export.pin: fail`) naming JSON pointers, or is logged (`warn`)."""

import json
import logging

import pytest
import yaml
from openapi_spec_validator import validate

from svc.config import load_config
from svc.server import StartupError, serve
from tests.support.process import run_svc
from tests.support.service import running_service

DATABASE_FIXTURES = ["model_blog.sql"]


async def test_the_document_in_json_and_yaml(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        response = await service.client.get("/openapi.json")
        assert response.status_code == 200 and response.headers["content-type"] == "application/json"
        document = response.json()
        validate(document)
        assert document["openapi"].startswith("3.1")
        assert {"/rest", "/rest/posts", "/rest/posts/{id}"} <= set(document["paths"])
        as_yaml = await service.client.get("/openapi.json", headers={"Accept": "application/yaml"})
        assert as_yaml.headers["content-type"].startswith("application/yaml")
        assert yaml.safe_load(as_yaml.text) == document
        # Never rate-limited and never authenticated: not an API route.
        assert "ratelimit-limit" not in {k.lower() for k in response.headers}


@pytest.mark.parametrize(
    ("settings", "served"),
    [
        ({}, False),  # prod: off by default
        ({"openapi": {"spec": True}}, True),
        ({"openapi": {"ui": True}}, True),  # the reference reads it
        ({"openapi": {"spec": True, "enabled": False}}, False),
        ({"openapi": {"spec": True, "path": "/api/spec.json"}}, True),
    ],
)
async def test_when_the_document_is_served(tmp_path, database_url, settings, served):
    async with running_service(tmp_path, database_url, settings) as service:
        path = settings.get("openapi", {}).get("path", "/openapi.json")
        response = await service.client.get(path)
        assert response.status_code == (200 if served else 404)
        rest = await service.client.get("/rest")
        assert rest.status_code == (404 if settings.get("openapi", {}).get("enabled") is False else 200)


def export(tmp_path, database_url) -> None:
    (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0}\n")
    result = run_svc("schema", "export", cwd=tmp_path, env={"DATABASE_URL": database_url})
    assert result.returncode == 0, result.stderr


def drift(tmp_path) -> None:
    """Re-order the pinned document's keys (no drift) and change one type (drift)."""
    path = tmp_path / "openapi.json"
    document = json.loads(path.read_text())
    document["components"]["schemas"]["Post"]["properties"]["title"]["type"] = "integer"
    path.write_text(json.dumps(document, sort_keys=True, indent=4))


async def test_a_pinned_document_that_differs_refuses_to_serve(tmp_path, database_url):
    export(tmp_path, database_url)
    loaded = load_config(cwd=tmp_path, environ={"DATABASE_URL": database_url})
    async with running_service(tmp_path, database_url) as service:  # re-formatted, re-ordered: no drift
        assert (await service.client.get("/ready")).status_code == 200
    drift(tmp_path)
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    message = str(info.value)
    assert "openapi.json differs from the generated OpenAPI document (1 items)" in message
    assert "~ /components/schemas/Post/properties/title/type" in message


async def test_a_pinned_document_that_differs_is_logged_under_warn(tmp_path, database_url, caplog):
    export(tmp_path, database_url)
    drift(tmp_path)
    async with running_service(tmp_path, database_url, {"export": {"pin": "warn"}}) as service:
        assert (await service.client.get("/ready")).status_code == 200
    warning = next(r for r in caplog.records if "generated OpenAPI document" in r.getMessage())
    assert warning.levelno == logging.WARNING
