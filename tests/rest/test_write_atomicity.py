"""All or nothing (SPEC "REST API" -> Writes 4, 9): each REST write is one transaction; when any part of it fails in
the database (a row of an array, a nested write, a bulk upsert's row, a write by filter, a stale If-Match, a
failing JSON Patch) every table's rows are exactly what they were before.

Sequences are left out on purpose: PostgreSQL never rolls back `nextval`."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import rest_service

DATABASE_FIXTURES = ["writes.sql", "rest_writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}
MISSING_TAG = {"orderTags": {"create": [{"tagId": 99}]}}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}

#: (method, path, request members, status): each fails after some of its rows were written.
FAILING = [
    ("POST", "/rest/tags", {"json": [{"label": "at-1"}, {"label": "gift"}]}, 409),
    (
        "POST",
        "/rest/customers",
        {
            "json": [
                {"email": "at1@example.com", "name": "At1"},
                {"email": "at2@example.com", "name": "At2", "credit": 6000},
            ]
        },
        422,
    ),
    (
        "POST",
        "/rest/customers",
        {"json": {"email": "at@example.com", "name": "At", "orders": {"create": [{"number": "AT-1", **MISSING_TAG}]}}},
        409,
    ),
    (
        "POST",
        "/rest/orders",
        {"json": {"number": "AT-2", "customer": {"create": {"email": "at@example.com", "name": "At"}}, **MISSING_TAG}},
        409,
    ),
    ("POST", "/rest/tags", {"content": b"label\nat-3\nrush\n", "headers": {"Content-Type": "text/csv"}}, 409),
    (
        "PUT",
        "/rest/tags",
        {"json": [{"id": 1, "label": "renamed"}, {"label": "at-4"}, {"id": 2, "label": "renamed"}]},
        409,
    ),
    ("PUT", "/rest/orders/70", {"json": {"customerId": 1, "number": "AT-3", **MISSING_TAG}}, 409),
    (
        "PATCH",
        "/rest/customers/1",
        {"json": {"nickname": "changed", "addressesByCustomerId": {"create": [{"city": "New"}, {"city": ""}]}}},
        422,
    ),
    (
        "PATCH",
        "/rest/customers/1",
        {
            "json": {
                "nickname": "changed",
                "orders": {
                    "update": [{"where": {"id": 1}, "data": {"note": "x"}}, {"where": {"id": 3}, "data": {"note": "y"}}]
                },
            }
        },
        404,
    ),
    ("PATCH", "/rest/orders/1", {"json": {"note": "x", **MISSING_TAG}}, 409),
    (
        "PATCH",
        "/rest/orders/1",
        {"json": {"note": "x", "tags": {"create": [{"label": "at-5"}]}}, "headers": {"If-Match": '"9"'}},
        412,
    ),
    (
        "PATCH",
        "/rest/documents/1",
        {
            "json": [{"op": "replace", "path": "/title", "value": "x"}, {"op": "test", "path": "/title", "value": "y"}],
            "headers": JSON_PATCH,
        },
        422,
    ),
    ("PATCH", "/rest/tags?unfiltered=true", {"json": {"label": "same"}}, 409),
    ("DELETE", "/rest/customers?filter[id][in]=1,2", {}, 409),
    ("DELETE", "/rest/customers/1", {}, 409),
]


def rows(database_url: str) -> dict[str, str]:
    """Every table's rows as sorted JSON text."""
    tables = [t for (t,) in fetch(database_url, "select tablename from pg_tables where schemaname = 'app'")]
    return {
        table: fetch(
            database_url, f"select coalesce(json_agg(t::text order by t::text), '[]')::text from app.{table} t"
        )[0][0]
        for table in tables
    }


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


@pytest.mark.parametrize("case", FAILING, ids=[f"{m} {p}" for m, p, _, _ in FAILING])
async def test_a_failing_write_leaves_every_table_as_it_was(rest, database_url, case):
    method, path, members, status = case
    before = rows(database_url)
    response = await rest.request(method, path, **members)
    assert (response.status_code, response.headers["content-type"]) == (status, "application/problem+json"), (
        response.text
    )
    assert rows(database_url) == before
