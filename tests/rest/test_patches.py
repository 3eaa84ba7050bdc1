"""Merge patch and JSON Patch of one row (SPEC "REST API" -> route table, Writes 8): `application/merge-patch+json`
(null sets NULL, objects merge into JSON columns) and `application/json-patch+json` (add, remove, replace, move,
copy and test against the row as the API shows it; a failing operation is 422 PATCH_FAILED and writes nothing; a
malformed patch is 400; on a collection 415); the row is read and written with the version read as the expected
one, so `If-Match` and the URL's key hold as for any PATCH."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, rest_service

DATABASE_FIXTURES = ["writes.sql", "rest_writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


async def new_document(rest, title: str, settings: dict) -> dict:
    response = await rest.post("/rest/documents", json={"title": title, "content": "\\x00ff", "settings": settings})
    assert response.status_code == 201, response.text
    return response.json()


def settings_of(database_url: str, key: int) -> list[tuple]:
    return fetch(database_url, "select title, content, settings from app.documents where id = %s", [key])


# --- merge patch -------------------------------------------------------------------------------------------------


# --- JSON Patch --------------------------------------------------------------------------------------------------


async def test_a_patch_that_changes_nothing_writes_nothing(rest, database_url):
    row = await new_order(rest)
    path = f"/rest/orders/{row['id']}"
    response = await rest.patch(path, json=[{"op": "test", "path": "/number", "value": "JP-0"}], headers=JSON_PATCH)
    assert_json(response, 200, row)
    assert response.headers["etag"] == '"1"'
    response = await rest.patch(path, json={"note": None}, headers=MERGE)
    assert_json(response, 200, row)
    assert fetch(database_url, "select version from app.orders where id = %s", [row["id"]]) == [(1,)]


async def new_order(rest) -> dict:
    await rest.delete("/rest/orders?filter[number][eq]=JP-0")
    response = await rest.post("/rest/orders", json={"customerId": 2, "number": "JP-0"})
    assert response.status_code == 201, response.text
    return response.json()
