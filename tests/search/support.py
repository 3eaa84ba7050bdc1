"""What the search tests share: the service's answers as (key, score) lists, hand-written SQL's beside them, and the
error shapes (REST problem documents, GraphQL error codes).

Scores are compared with a relative tolerance: the service may carry a `real` (word_similarity, ts_rank) through
JSON as its shortest text, which differs from psycopg's float in the last digits.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pytest

from tests.support.rest_reads import problem

#: The relative tolerance of score comparisons.
TOLERANCE = 1e-6
#: What a bad search input may answer over GraphQL; never INTERNAL_SERVER_ERROR.
INPUT_CODES = {"BAD_USER_INPUT"}
#: `first` over `search.max_limit`: the contract lets the implementation answer like a too large page of a list.
TOO_MANY_CODES = {"PAGE_SIZE_EXCEEDED", "BAD_USER_INPUT"}
#: `search.max_limit`'s default.
MAX_LIMIT = 50


def approx(values: Sequence[float]) -> Any:
    return pytest.approx(list(values), rel=TOLERANCE, abs=1e-12)


def assert_ranked(got: Sequence[tuple[Any, float]], expected: Sequence[tuple[Any, float]]) -> None:
    """The same keys in the same order, each with its score."""
    assert [key for key, _ in got] == [key for key, _ in expected], (got, expected)
    assert [score for _, score in got] == approx([float(score) for _, score in expected])


def graphql_hits(results: Mapping[str, Any], key: str = "rowId") -> list[tuple[Any, float]]:
    """(node key, score) of a `<Type>SearchResults`."""
    return [(hit["node"][key], hit["score"]) for hit in results["hits"]]


def rest_hits(body: Mapping[str, Any], key: str = "id") -> list[tuple[Any, float]]:
    """(row key, score) of a REST search answer."""
    return [(hit["row"][key], hit["score"]) for hit in body["hits"]]


async def statements(client: httpx.AsyncClient) -> int:
    """The statements the service has sent so far (`/health`)."""
    return (await client.get("/health")).json()["statements"]


async def rest_ok(client: httpx.AsyncClient, path: str, body: Any) -> dict[str, Any]:
    response = await client.post(path, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json"), response.headers
    return response.json()


def rest_bad_input(response: httpx.Response, *codes: str) -> dict[str, Any]:
    """A 400 problem document (never a 500) with one of `codes` (default BAD_USER_INPUT); its members."""
    assert response.status_code == 400, (response.status_code, response.text)
    body = problem(response)
    assert body["code"] in (codes or INPUT_CODES), body
    return body


def rest_not_found(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 404, (response.status_code, response.text)
    body = problem(response)
    assert body["code"] == "NOT_FOUND", body
    return body


def graphql_error(response: httpx.Response, *codes: str) -> dict[str, Any]:
    """The first error of a failed GraphQL request, never an internal one, with one of `codes` (default
    BAD_USER_INPUT)."""
    assert response.status_code != 500, response.text
    body = response.json()
    assert body.get("errors"), body
    error = body["errors"][0]
    code = error.get("extensions", {}).get("code")
    assert code != "INTERNAL_SERVER_ERROR", body
    assert code in (codes or INPUT_CODES), body
    return error


def vector_literal(values: Sequence[float]) -> str:
    """A pgvector text literal of Python floats (as the service is sent them)."""
    return "[" + ",".join(repr(float(v)) for v in values) + "]"
