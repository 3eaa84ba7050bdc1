"""REST reads against the service under test, over real HTTP (hypercorn on loopback): a client bound to the
service, and the parts of an answer the read tests compare whole (status, the headers REST defines, the body).

Problem documents carry a random `requestId`: `problem()` checks that it is the response's `X-Request-Id` and
leaves it out, so the rest of the document can be compared whole.
"""

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.service import running_service

#: Response headers REST defines for reads (SPEC "REST API"); `headers()` returns these when present.
REST_HEADERS = (
    "allow", "accept-post", "accept-patch", "accept-ranges", "content-range", "content-type", "etag", "link",
    "location", "preference-applied", "x-total-count", "x-total-count-estimate", "x-next-cursor",
    "x-previous-cursor",
)  # fmt: skip


@asynccontextmanager
async def rest_client(
    directory: Path, database_url: str, settings: Mapping[str, Any] | None = None, *, mode: str = "prod"
) -> AsyncIterator[httpx.AsyncClient]:
    async with running_service(directory, database_url, settings, mode=mode) as service:
        yield service.client


def headers(response: httpx.Response, *names: str) -> dict[str, str]:
    """The REST headers of a response (or those named), by lower-case name."""
    wanted = names or REST_HEADERS
    return {name: response.headers[name] for name in wanted if name in response.headers}


def problem(response: httpx.Response) -> dict[str, Any]:
    """A problem document without its `requestId` (checked against `X-Request-Id`)."""
    assert response.headers["content-type"] == "application/problem+json", response.text
    body = response.json()
    assert body.pop("requestId") == response.headers["x-request-id"]
    return body


def bad_request(response: httpx.Response) -> dict[str, Any]:
    """A 400 problem's members that name what was wrong: `code`, `field` and the other extensions."""
    assert response.status_code == 400, response.text
    body = problem(response)
    assert (body["type"], body["status"]) == ("about:blank", 400)
    return {k: v for k, v in body.items() if k not in ("type", "title", "status", "instance", "detail")}


def ids(response: httpx.Response, key: str = "id") -> list[Any]:
    """The `key` of each row of a JSON list that must have succeeded."""
    assert response.status_code in (200, 206), response.text
    return [row[key] for row in response.json()]


def ndjson(response: httpx.Response) -> list[Any]:
    """The objects of an NDJSON body: one per line, each line ending in a newline."""
    text = response.text
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def links(response: httpx.Response) -> dict[str, str]:
    """The targets of an RFC 8288 `Link` header by relation: `{"next": "/rest/books?..."}`."""
    found = {}
    for entry in response.headers.get("link", "").split(", <"):
        if not entry:
            continue
        target, _, relation = entry.partition(">; rel=")
        found[relation.strip('"')] = target.lstrip("<")
    return found
