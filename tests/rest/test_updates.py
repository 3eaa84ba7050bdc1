"""`PATCH /rest/{resource}/{key}` (SPEC "REST API" -> route table, Writes 1-4): 200 with the row and its `ETag`;
the URL owns the key (a different key in the body is 400; the same key or the row's global ID is fine); a PATCH
with nothing to set is 400; a missing row is 404; `?by=<unique key>` (its columns may change, the primary key's
may not); `If-Match` (matching, stale, `*`); `Prefer: previous` and `return=minimal`."""

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


async def new_customer(rest, email: str, **columns) -> dict:
    response = await rest.post("/rest/customers", json={"email": email, "name": email.partition("@")[0], **columns})
    assert response.status_code == 201, response.text
    return response.json()


async def new_order(rest, number: str, **columns) -> dict:
    response = await rest.post("/rest/orders", json={"customerId": 2, "number": number, **columns})
    assert response.status_code == 201, response.text
    return response.json()


def not_found(detail: str, instance: str) -> dict:
    return problem(404, "NOT_FOUND", detail, instance, title="Not Found")


def stale(instance: str, code_type: str = "OrderErrorCode") -> dict:
    return problem(
        412,
        "STALE_VERSION",
        "the row has changed since that version was read",
        instance,
        title="Precondition Failed",
        codeType=code_type,
        fields=["If-Match"],
    )


async def test_patch_answers_the_row_with_its_etag(rest, database_url):
    row = await new_customer(rest, "patch@example.com")
    key = row["id"]
    response = await rest.patch(f"/rest/customers/{key}", json={"nickname": "pat", "credit": 7})
    row_version = version(database_url, "customers", key)
    assert_json(response, 200, {**row, "nickname": "pat", "credit": "7.00", "rowVersion": row_version})
    assert response.headers["etag"] == etag(row_version)
    assert fetch(database_url, "select nickname, credit::text from app.customers where id = %s", [key]) == [
        ("pat", "7.00")
    ]


async def test_null_sets_null(rest, database_url):
    row = await new_customer(rest, "null@example.com", nickname="gone")
    response = await rest.patch(f"/rest/customers/{row['id']}", json={"nickname": None})
    assert response.json()["nickname"] is None
    assert fetch(database_url, "select nickname from app.customers where id = %s", [row["id"]]) == [(None,)]


async def test_the_url_owns_the_key(rest, database_url):
    row = await new_customer(rest, "owned@example.com")
    key = row["id"]
    path = f"/rest/customers/{key}"
    assert_problem(
        await rest.patch(path, json={"id": key + 1000, "nickname": "x"}),
        bad_request("input.id differs from the key in the URL", path, field="input.id"),
    )
    # The global ID of another row of the type, and one of another type.
    assert_problem(
        await rest.patch(path, json={"id": encode_global_id("Customer", 1), "nickname": "x"}),
        bad_request("input.id differs from the key in the URL", path, field="input.id"),
    )
    assert_problem(
        await rest.patch(path, json={"id": encode_global_id("Tag", key), "nickname": "x"}),
        bad_request("a global ID of a Tag where a Customer key belongs", path, field="input.id"),
    )
    assert fetch(database_url, "select nickname from app.customers where id = %s", [key]) == [(None,)]
    # The same key, under the REST, GraphQL or column name, or the row's global ID, is fine.
    for member, value in (("id", key), ("rowId", key), ("id", encode_global_id("Customer", key))):
        response = await rest.patch(path, json={member: value, "nickname": f"{member}-{value}"})
        assert response.status_code == 200, response.text
        assert response.json()["nickname"] == f"{member}-{value}"


async def test_patch_with_nothing_to_set_is_400(rest, database_url):
    row = await new_customer(rest, "nothing@example.com")
    path = f"/rest/customers/{row['id']}"
    for body in ({}, {"id": row["id"]}):
        assert_problem(await rest.patch(path, json=body), bad_request("PATCH with no fields to set", path))
    assert version(database_url, "customers", row["id"]) == row["rowVersion"]


async def test_a_body_that_is_not_an_object_is_400(rest):
    for body in (b'"x"', b'[{"nickname": "x"}]', b"null", b"1"):
        assert_problem(
            await rest.patch("/rest/customers/2", content=body, headers={"Content-Type": "application/json"}),
            bad_request("input must be a JSON object", "/rest/customers/2", field="input"),
        )


async def test_a_missing_row_is_404(rest):
    assert_problem(
        await rest.patch("/rest/customers/999", json={"nickname": "x"}),
        not_found("no Customer has the key 999", "/rest/customers/999"),
    )
    assert_problem(
        await rest.patch("/rest/customers/not-a-number", json={"nickname": "x"}),
        not_found("no Customer has the key not-a-number", "/rest/customers/not-a-number"),
    )


async def test_the_schema_path_addresses_the_same_row(rest, database_url):
    row = await new_customer(rest, "schema-patch@example.com")
    response = await rest.patch(f"/rest/app/customers/{row['id']}", json={"tier": "gold"})
    assert_json(response, 200, {**row, "tier": "gold", "rowVersion": version(database_url, "customers", row["id"])})


# --- by another unique key ---------------------------------------------------------------------------------------


async def test_by_a_unique_key_whose_columns_may_change(rest, database_url):
    row = await new_customer(rest, "by-old@example.com")
    response = await rest.patch("/rest/customers/by-old@example.com?by=email", json={"nickname": "by"})
    assert response.json()["nickname"] == "by"
    response = await rest.patch(
        "/rest/customers/by-old@example.com?by=email", json={"email": "by-new@example.com", "tier": "gold"}
    )
    row_version = version(database_url, "customers", row["id"])
    assert_json(
        response,
        200,
        {**row, "email": "by-new@example.com", "nickname": "by", "tier": "gold", "rowVersion": row_version},
    )
    assert response.headers["etag"] == etag(row_version)
    assert fetch(database_url, "select email from app.customers where id = %s", [row["id"]]) == [
        ("by-new@example.com",)
    ]


async def test_by_a_composite_unique_key_in_the_order_given(rest, database_url):
    row = await new_order(rest, "BY-1")
    response = await rest.patch("/rest/orders/BY-1,2?by=number,customerId", json={"number": "BY-2", "note": "moved"})
    assert_json(response, 200, {**row, "number": "BY-2", "note": "moved", "version": 2, "rowVersion": "2"})
    assert fetch(database_url, "select number, note from app.orders where id = %s", [row["id"]]) == [("BY-2", "moved")]


async def test_by_a_unique_key_the_primary_key_cannot_change(rest, database_url):
    row = await new_customer(rest, "by-pk@example.com")
    path = "/rest/customers/by-pk@example.com"
    assert_problem(
        await rest.patch(f"{path}?by=email", json={"id": row["id"] + 1000}),
        bad_request("input.id: the primary key cannot change in a write by another key", path, field="input.id"),
    )
    assert fetch(database_url, "select count(*) from app.customers where id = %s", [row["id"]]) == [(1,)]


async def test_by_names_a_whole_unique_key(rest):
    path = "/rest/customers/Bob"
    assert_problem(
        await rest.patch(f"{path}?by=name", json={"nickname": "x"}),
        bad_request("by=name is not a unique key of customers (one of: id; email)", path, field="by"),
    )
    assert_problem(
        await rest.patch(f"{path}?by=bogus", json={"nickname": "x"}),
        bad_request("by=bogus: unknown column", path, field="by"),
    )
    assert_problem(
        await rest.patch("/rest/customers/nobody@example.com?by=email", json={"nickname": "x"}),
        not_found("no Customer has the key nobody@example.com", "/rest/customers/nobody@example.com"),
    )


# --- If-Match ----------------------------------------------------------------------------------------------------


async def test_if_match_with_the_current_version(rest, database_url):
    row = await new_order(rest, "IM-1")
    path = f"/rest/orders/{row['id']}"
    response = await rest.patch(path, json={"note": "matched"}, headers={"If-Match": '"1"'})
    assert_json(response, 200, {**row, "note": "matched", "version": 2, "rowVersion": "2"})
    assert response.headers["etag"] == '"2"'


async def test_a_stale_if_match_is_412_and_writes_nothing(rest, database_url):
    row = await new_order(rest, "IM-2")
    path = f"/rest/orders/{row['id']}"
    await rest.patch(path, json={"note": "first"})
    assert_problem(await rest.patch(path, json={"note": "second"}, headers={"If-Match": '"1"'}), stale(path))
    assert fetch(database_url, "select note, version from app.orders where id = %s", [row["id"]]) == [("first", 2)]


async def test_if_match_of_a_system_version(rest, database_url):
    row = await new_customer(rest, "xmin@example.com")
    path = f"/rest/customers/{row['id']}"
    response = await rest.patch(path, json={"nickname": "one"}, headers={"If-Match": etag(row["rowVersion"])})
    assert response.status_code == 200, response.text
    assert_problem(
        await rest.patch(path, json={"nickname": "two"}, headers={"If-Match": etag(row["rowVersion"])}),
        stale(path, "CustomerErrorCode"),
    )
    assert fetch(database_url, "select nickname from app.customers where id = %s", [row["id"]]) == [("one",)]


async def test_if_match_any_needs_the_row_to_exist(rest):
    row = await new_order(rest, "IM-3")
    response = await rest.patch(f"/rest/orders/{row['id']}", json={"note": "any"}, headers={"If-Match": "*"})
    assert_json(response, 200, {**row, "note": "any", "version": 2, "rowVersion": "2"})
    assert_problem(
        await rest.patch("/rest/orders/999", json={"note": "any"}, headers={"If-Match": "*"}),
        not_found("no Order has the key 999", "/rest/orders/999"),
    )


async def test_a_malformed_if_match_is_400(rest):
    assert_problem(
        await rest.patch("/rest/orders/1", json={"note": "x"}, headers={"If-Match": "1"}),
        bad_request("malformed entity tag '1': quote it (\"123\")", "/rest/orders/1"),
    )


# --- Prefer ------------------------------------------------------------------------------------------------------


async def test_prefer_previous_answers_the_row_and_the_row_as_it_was(rest):
    row = await new_order(rest, "PV-1", note="before")
    response = await rest.patch(f"/rest/orders/{row['id']}", json={"note": "after"}, headers={"Prefer": "previous"})
    assert_json(
        response,
        200,
        {
            "row": {**row, "note": "after", "version": 2, "rowVersion": "2"},
            "previous": {**row, "note": "before", "rowVersion": None},
        },
    )
    assert response.headers["preference-applied"] == "previous"
    assert response.headers["etag"] == '"2"'


async def test_return_minimal_answers_204_and_wins_over_previous(rest, database_url):
    row = await new_order(rest, "RM-1")
    path = f"/rest/orders/{row['id']}"
    for prefer, row_version in (("return=minimal", 2), ("previous, return=minimal", 3)):
        response = await rest.patch(path, json={"note": f"v{row_version}"}, headers={"Prefer": prefer})
        assert (response.status_code, response.content) == (204, b"")
        assert response.headers["preference-applied"] == "return=minimal"
        assert response.headers["etag"] == etag(str(row_version))
    assert fetch(database_url, "select note from app.orders where id = %s", [row["id"]]) == [("v3",)]
