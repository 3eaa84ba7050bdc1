"""REST requests to the service under test, over real HTTP (hypercorn on loopback), and the shapes answers take.

Every request carries `X-Request-Id: rest-test`, so a problem document's `requestId` is known and tests compare
whole documents.
"""

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from svc.db import Executor, open_pool
from svc.graphql import build_graphql_schema
from svc.pipeline import Pipeline, Statements
from svc.plan import MutationPlan
from svc.rest import RestEndpoint, RestRequest, RestResponse
from svc.server import connection_settings
from tests.support.golden import assert_golden, mutation_statements, read_statement
from tests.support.model import read_model
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


#: Response headers REST defines; an `ETag` is a row's system version, which differs from one database to the next.
_HEADERS = (
    "accept-ranges", "content-range", "content-type", "etag", "link", "location", "preference-applied",
    "x-affected-count", "x-next-cursor", "x-previous-cursor", "x-total-count", "x-total-count-estimate",
)  # fmt: skip


def request_of(text: str) -> RestRequest:
    """A request as an `.http` file writes it (the target percent-encoded as it is sent)."""
    head, _, body = text.partition("\n\n")
    start, *lines = head.splitlines()
    method, target = start.split(" ", 1)
    url = urlsplit(target)
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return RestRequest(method, url.path, url.query.encode(), headers, "golden", body.encode())


def golden_response(response: RestResponse) -> dict[str, Any]:
    """A response as golden files keep it: its status, the headers REST defines, its body (an `ETag`, a row's
    system version, differs from one database to the next: it is shown as such)."""
    headers = dict(response.headers)
    if response.content_type is not None:
        headers["Content-Type"] = response.content_type
    shown = {name: value for name, value in headers.items() if name.lower() in _HEADERS}
    if "ETag" in shown:
        shown["ETag"] = "<the row's version>"
    body = json.loads(response.body) if response.body else None
    return {"status": response.status, "headers": dict(sorted(shown.items())), "body": body}


async def assert_rest_golden(case: Path, database_url: str, directory: Path, settings: Mapping[str, Any]) -> None:
    """A golden case `case` (`X.http`, and beside it `X.sql`, `X.json`) answered through the REST stages without
    HTTP, as `RestEndpoint.handle` takes a request: parsed, planned, run through the pipeline, answered."""
    config, model = await read_model(database_url, directory, settings)
    statements = Statements(model, config.limits, config.errors)
    endpoint = RestEndpoint(build_graphql_schema(model).schema, model, config, statements)
    request = request_of(case.with_suffix(".http").read_text())
    api = endpoint.parser.parse(request)
    planned = endpoint.planner.plan(api)
    assert planned is not None
    if isinstance(planned.plan, MutationPlan):
        assert_golden(case.with_suffix(".sql"), mutation_statements(planned.plan, statements))
    else:
        assert_golden(case.with_suffix(".sql"), read_statement(statements.read(planned.plan).statement))
    async with open_pool(database_url, connection_settings(config), size=1) as pool:
        answer = await endpoint.run(api, planned, request, Pipeline(Executor(pool)))
    document = golden_response(endpoint.responder.respond(api, planned, answer))
    assert_golden(case.with_suffix(".json"), json.dumps(document, indent=2, ensure_ascii=False) + "\n")
