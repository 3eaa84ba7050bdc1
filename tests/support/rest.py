"""REST requests to the service under test, over real HTTP (hypercorn on loopback), and the shapes answers take.

Every request carries `X-Request-Id: rest-test`, so a problem document's `requestId` is known and tests compare
whole documents.
"""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.postgres import fetch
from tests.support.service import running_service

REQUEST_ID = "rest-test"
PROBLEM = "application/problem+json"
JSON = "application/json"


@asynccontextmanager
async def rest_service(
    directory: Path,
    database_url: str,
    settings: Mapping[str, Any] | None = None,
    *,
    mode: str = "prod",
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """The running service's HTTP client (base URL set, `X-Request-Id` sent with every request)."""
    async with running_service(directory, database_url, settings, mode=mode, environ=environ) as service:
        service.client.headers["X-Request-Id"] = REQUEST_ID
        yield service.client


def problem(status: int, code: str, detail: str, instance: str, *, title: str, **members: Any) -> dict[str, Any]:
    """The whole problem document the service answers with (SPEC "Other fixed shapes")."""
    return {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        "code": code,
        "requestId": REQUEST_ID,
        **members,
    }


def bad_request(detail: str, instance: str, **members: Any) -> dict[str, Any]:
    return problem(400, "BAD_USER_INPUT", detail, instance, title="Bad Request", **members)


def assert_problem(response: httpx.Response, document: Mapping[str, Any]) -> None:
    """`response` is the problem `document`: its status, media type and every member."""
    assert (response.status_code, response.headers.get("content-type")) == (document["status"], PROBLEM), (
        response.status_code,
        response.text,
    )
    assert response.json() == document


def assert_json(response: httpx.Response, status: int, body: Any) -> None:
    assert (response.status_code, response.headers.get("content-type")) == (status, JSON), response.text
    assert response.json() == body


def version(database_url: str, table: str, key: int) -> str:
    """A row's system version (`xmin`), as `rowVersion` and `ETag` carry it."""
    ((value,),) = fetch(database_url, f"select xmin::text from app.{table} where id = %s", [key])
    return value


def etag(value: str) -> str:
    return f'"{value}"'
