"""`DELETE /rest/{resource}/{key}` (SPEC "REST API" -> route table, Writes 2-4): 200 with the row as it was
deleted; 404 when there is none; `If-Match` (stale is 412 and deletes nothing; `*`); `?by=<unique key>`;
`Prefer: return=minimal`; a DELETE takes no body."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, problem, rest_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


async def new_order(rest, number: str) -> dict:
    response = await rest.post("/rest/orders", json={"customerId": 2, "number": number})
    assert response.status_code == 201, response.text
    return response.json()


def count(database_url: str, key: int) -> list[tuple]:
    return fetch(database_url, "select count(*) from app.orders where id = %s", [key])


async def test_delete_answers_the_row_as_deleted_then_404(rest, database_url):
    row = await new_order(rest, "D-1")
    path = f"/rest/orders/{row['id']}"
    response = await rest.delete(path)
    # Rows that no longer exist have no system version to show.
    assert_json(response, 200, {**row, "rowVersion": None})
    assert "etag" not in response.headers
    assert count(database_url, row["id"]) == [(0,)]
    assert_problem(
        await rest.delete(path),
        problem(404, "NOT_FOUND", f"no Order has the key {row['id']}", path, title="Not Found"),
    )


async def test_fields_and_include_shape_the_deleted_row(rest):
    row = await new_order(rest, "D-2")
    response = await rest.delete(f"/rest/orders/{row['id']}?fields=number&include=customer&fields[customer]=name")
    assert_json(response, 200, {"number": "D-2", "customer": {"name": "Bob"}})


async def test_a_stale_if_match_is_412_and_deletes_nothing(rest, database_url):
    row = await new_order(rest, "D-3")
    path = f"/rest/orders/{row['id']}"
    await rest.patch(path, json={"note": "changed"})
    assert_problem(
        await rest.delete(path, headers={"If-Match": '"1"'}),
        problem(
            412,
            "STALE_VERSION",
            "the row has changed since that version was read",
            path,
            title="Precondition Failed",
            codeType="OrderErrorCode",
            fields=["If-Match"],
        ),
    )
    assert count(database_url, row["id"]) == [(1,)]
    response = await rest.delete(path, headers={"If-Match": '"2"'})
    assert_json(response, 200, {**row, "note": "changed", "version": 2, "rowVersion": None})
    assert count(database_url, row["id"]) == [(0,)]


async def test_if_match_any_needs_the_row(rest, database_url):
    row = await new_order(rest, "D-4")
    response = await rest.delete(f"/rest/orders/{row['id']}", headers={"If-Match": "*"})
    assert response.status_code == 200, response.text
    assert_problem(
        await rest.delete(f"/rest/orders/{row['id']}", headers={"If-Match": "*"}),
        problem(404, "NOT_FOUND", f"no Order has the key {row['id']}", f"/rest/orders/{row['id']}", title="Not Found"),
    )


async def test_by_a_unique_key(rest, database_url):
    row = await new_order(rest, "D-5")
    response = await rest.delete("/rest/orders/2,D-5?by=customerId,number")
    assert_json(response, 200, {**row, "rowVersion": None})
    assert count(database_url, row["id"]) == [(0,)]


async def test_return_minimal_answers_204(rest, database_url):
    row = await new_order(rest, "D-6")
    response = await rest.delete(f"/rest/orders/{row['id']}", headers={"Prefer": "return=minimal"})
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["preference-applied"] == "return=minimal"
    assert count(database_url, row["id"]) == [(0,)]


async def test_a_delete_takes_no_body(rest, database_url):
    row = await new_order(rest, "D-7")
    path = f"/rest/orders/{row['id']}"
    assert_problem(
        await rest.request("DELETE", path, json={"id": row["id"]}), bad_request("DELETE takes no body", path)
    )
    assert count(database_url, row["id"]) == [(1,)]
