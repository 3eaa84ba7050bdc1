"""`PUT /rest/{resource}/{key}` (SPEC "REST API" -> route table, Writes 1-3): insert or update the row the URL
names, 200 either way, with `ETag`; the URL owns the key (a body key that differs is 400); with `If-Match` the row
must exist (404) and have that version (412), `*` only needs it to exist; `Prefer: previous` (null for an inserted
row) and `return=minimal`."""

import pytest

from svc.plan import encode_global_id
from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, etag, problem, rest_service, version

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def not_found(instance: str, type_name: str = "Order") -> dict:
    return problem(
        404, "NOT_FOUND", f"no {type_name} has the key {instance.rsplit('/', 1)[1]}", instance, title="Not Found"
    )


async def test_put_inserts_a_missing_row_with_the_urls_key(rest, database_url):
    response = await rest.put("/rest/tags/50", json={"label": "fifty"})
    row_version = version(database_url, "tags", 50)
    assert_json(response, 200, {"id": 50, "label": "fifty", "rowVersion": row_version})
    assert response.headers["etag"] == etag(row_version)
    assert "location" not in response.headers
    assert fetch(database_url, "select label from app.tags where id = 50") == [("fifty",)]


async def test_put_updates_an_existing_row(rest, database_url):
    await rest.put("/rest/tags/51", json={"label": "fifty-one"})
    response = await rest.put("/rest/tags/51", json={"label": "renamed"})
    assert_json(response, 200, {"id": 51, "label": "renamed", "rowVersion": version(database_url, "tags", 51)})
    assert fetch(database_url, "select label from app.tags where id = 51") == [("renamed",)]


async def test_prefer_previous_is_null_for_an_inserted_row(rest, database_url):
    response = await rest.put("/rest/tags/52", json={"label": "before"}, headers={"Prefer": "previous"})
    first = version(database_url, "tags", 52)
    assert_json(response, 200, {"row": {"id": 52, "label": "before", "rowVersion": first}, "previous": None})
    assert response.headers["preference-applied"] == "previous"
    response = await rest.put("/rest/tags/52", json={"label": "after"}, headers={"Prefer": "previous"})
    assert_json(
        response,
        200,
        {
            "row": {"id": 52, "label": "after", "rowVersion": version(database_url, "tags", 52)},
            "previous": {"id": 52, "label": "before", "rowVersion": None},
        },
    )


async def test_a_body_key_must_be_the_urls(rest, database_url):
    assert_problem(
        await rest.put("/rest/tags/53", json={"id": 54, "label": "x"}),
        bad_request("input.id differs from the key in the URL", "/rest/tags/53", field="input.id"),
    )
    assert fetch(database_url, "select count(*) from app.tags where id in (53, 54)") == [(0,)]
    for key in (53, encode_global_id("Tag", 53)):
        response = await rest.put("/rest/tags/53", json={"id": key, "label": "same key"})
        assert_json(response, 200, {"id": 53, "label": "same key", "rowVersion": version(database_url, "tags", 53)})


async def test_a_composite_key_comes_from_the_url(rest, database_url):
    response = await rest.put("/rest/order_tags/2,2", json={})
    ((row_version,),) = fetch(database_url, "select xmin::text from app.order_tags where order_id = 2 and tag_id = 2")
    assert_json(response, 200, {"orderId": 2, "tagId": 2, "rowVersion": row_version})
    # Again: the row exists and nothing changes.
    response = await rest.put("/rest/order_tags/2,2", json={"orderId": 2})
    assert response.status_code == 200, response.text
    assert fetch(database_url, "select count(*) from app.order_tags where order_id = 2") == [(1,)]


async def test_a_put_that_creates_needs_the_required_members(rest, database_url):
    assert_problem(
        await rest.put("/rest/tags/55", json={}),
        problem(
            422,
            "LABEL_REQUIRED",
            "input.label is required",
            "/rest/tags/55",
            title="Unprocessable Content",
            codeType="TagErrorCode",
            fields=["input.label"],
        ),
    )
    assert fetch(database_url, "select count(*) from app.tags where id = 55") == [(0,)]


async def test_put_takes_one_object(rest):
    assert_problem(
        await rest.put("/rest/tags/56", json=[{"label": "x"}]),
        bad_request("PUT takes one row: a JSON object", "/rest/tags/56"),
    )


async def test_if_match_updates_an_existing_row_of_that_version(rest, database_url):
    body = {"customerId": 2, "number": "PUT-1", "note": "one"}
    response = await rest.put("/rest/orders/60", json=body)
    row = response.json()
    assert (row["version"], response.headers["etag"]) == (1, '"1"')
    response = await rest.put("/rest/orders/60", json={**body, "note": "two"}, headers={"If-Match": '"1"'})
    assert_json(response, 200, {**row, "note": "two", "version": 2, "rowVersion": "2"})
    assert response.headers["etag"] == '"2"'
    assert_problem(
        await rest.put("/rest/orders/60", json={**body, "note": "three"}, headers={"If-Match": '"1"'}),
        problem(
            412,
            "STALE_VERSION",
            "the row has changed since that version was read",
            "/rest/orders/60",
            title="Precondition Failed",
            codeType="OrderErrorCode",
            fields=["If-Match"],
        ),
    )
    response = await rest.put("/rest/orders/60", json={**body, "note": "any"}, headers={"If-Match": "*"})
    assert_json(response, 200, {**row, "note": "any", "version": 3, "rowVersion": "3"})
    assert fetch(database_url, "select note, version from app.orders where id = 60") == [("any", 3)]


async def test_if_match_needs_the_row_to_exist(rest, database_url):
    body = {"customerId": 2, "number": "PUT-2"}
    for if_match in ('"1"', "*"):
        assert_problem(
            await rest.put("/rest/orders/61", json=body, headers={"If-Match": if_match}),
            not_found("/rest/orders/61"),
        )
    assert fetch(database_url, "select count(*) from app.orders where id = 61") == [(0,)]


async def test_return_minimal_answers_204_with_the_etag(rest, database_url):
    response = await rest.put("/rest/tags/57", json={"label": "minimal"}, headers={"Prefer": "return=minimal"})
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["etag"] == etag(version(database_url, "tags", 57))
    assert response.headers["preference-applied"] == "return=minimal"
