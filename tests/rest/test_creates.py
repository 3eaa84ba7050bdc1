"""`POST /rest/{resource}` (SPEC "REST API" -> route table, Writes 3, 4, 7; "Limits" -> bulk_rows): an object is
created with 201, `Location` under the path used and `ETag`; an array creates every row in one request, in input
order, at most `limits.bulk_rows` rows (nested rows counted), all or nothing; `missing=default|null`;
`Prefer: return=minimal`."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, etag, problem, rest_service, version

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def customer(key: int, email: str, name: str, row_version: str, **columns) -> dict:
    """A customer row as REST answers it (defaults filled in)."""
    row = {"id": key, "email": email, "name": name, "nickname": None, "tier": "basic", "credit": None}
    return {**row, "deleted": False, **columns, "rowVersion": row_version}


async def test_an_object_is_created_with_location_and_etag(rest, database_url):
    response = await rest.post("/rest/customers", json={"email": "cy@example.com", "name": "Cy", "credit": "12.5"})
    key = response.json()["id"]
    row_version = version(database_url, "customers", key)
    assert_json(response, 201, customer(key, "cy@example.com", "Cy", row_version, credit="12.50"))
    assert response.headers["location"] == f"/rest/customers/{key}"
    assert response.headers["etag"] == etag(row_version)
    assert fetch(database_url, "select email, name, credit::text from app.customers where id = %s", [key]) == [
        ("cy@example.com", "Cy", "12.50")
    ]
    # The Location names the row.
    assert_json(await rest.get(response.headers["location"]), 200, response.json())


async def test_location_keeps_the_schema_path_used(rest, database_url):
    response = await rest.post("/rest/app/tags", json={"label": "schema-path"})
    key = response.json()["id"]
    assert_json(response, 201, {"id": key, "label": "schema-path", "rowVersion": version(database_url, "tags", key)})
    assert response.headers["location"] == f"/rest/app/tags/{key}"


async def test_a_composite_key_is_comma_separated_in_the_location(rest, database_url):
    response = await rest.post("/rest/order_tags", json={"orderId": 3, "tagId": 2})
    ((row_version,),) = fetch(database_url, "select xmin::text from app.order_tags where order_id = 3 and tag_id = 2")
    assert_json(response, 201, {"orderId": 3, "tagId": 2, "rowVersion": row_version})
    assert response.headers["location"] == "/rest/order_tags/3,2"
    assert response.headers["etag"] == etag(row_version)


async def test_the_etag_is_the_version_column_where_one_is_configured(rest, database_url):
    response = await rest.post("/rest/orders?fields=number,version,rowVersion", json={"customerId": 2, "number": "V-1"})
    assert_json(response, 201, {"number": "V-1", "version": 1, "rowVersion": "1"})
    assert response.headers["etag"] == '"1"'


async def test_a_row_without_a_key_has_no_location_nor_etag(rest, database_url):
    response = await rest.post("/rest/notes", json={"body": "keyless"})
    assert_json(response, 201, {"body": "keyless"})
    assert "location" not in response.headers
    assert "etag" not in response.headers
    assert fetch(database_url, "select body from app.notes where body = 'keyless'") == [("keyless",)]


async def test_an_array_creates_every_row_in_input_order(rest, database_url):
    response = await rest.post(
        "/rest/tags", json=[{"label": "zz-last"}, {"label": "aa-first"}, {"id": 40, "label": "mm-middle"}]
    )
    rows = response.json()
    keys = [row["id"] for row in rows]
    assert keys[2] == 40
    assert_json(
        response,
        201,
        [
            {"id": key, "label": label, "rowVersion": version(database_url, "tags", key)}
            for key, label in zip(keys, ["zz-last", "aa-first", "mm-middle"], strict=True)
        ],
    )
    assert "location" not in response.headers
    assert fetch(database_url, "select id, label from app.tags where id = any(%s) order by label", [keys]) == sorted(
        zip(keys, ["zz-last", "aa-first", "mm-middle"], strict=True), key=lambda row: row[1]
    )


async def test_an_empty_array_creates_nothing(rest):
    assert_json(await rest.post("/rest/tags", json=[]), 201, [])


async def test_missing_default_fills_omitted_columns_with_their_defaults(rest, database_url):
    body = [{"email": "md1@example.com", "name": "MD1", "tier": "gold"}, {"email": "md2@example.com", "name": "MD2"}]
    for path in ("/rest/customers", "/rest/customers?missing=default"):
        response = await rest.post(path, json=body)
        assert response.status_code == 201, response.text
        assert [(row["email"], row["tier"]) for row in response.json()] == [
            ("md1@example.com", "gold"),
            ("md2@example.com", "basic"),
        ]
        await rest.delete("/rest/customers?filter[email][startsWith]=md")


async def test_missing_null_sets_columns_other_rows_give_to_null(rest, database_url):
    body = [
        {"email": "mn1@example.com", "name": "MN1", "nickname": "one", "deleted": True},
        {"email": "mn2@example.com", "name": "MN2", "deleted": False},
    ]
    response = await rest.post("/rest/customers?missing=null&fields=email,nickname,tier", json=body)
    assert_json(
        response,
        201,
        [
            {"email": "mn1@example.com", "nickname": "one", "tier": "basic"},
            {"email": "mn2@example.com", "nickname": None, "tier": "basic"},
        ],
    )
    # A column no row gives keeps its default; a NOT NULL column one row omits is refused for that row.
    body = [{"email": "mn3@example.com", "name": "MN3", "tier": "gold"}, {"email": "mn4@example.com", "name": "MN4"}]
    assert_problem(
        await rest.post("/rest/customers?missing=null", json=body),
        problem(
            422,
            "TIER_REQUIRED",
            'null value in column "tier" of relation "customers" violates not-null constraint',
            "/rest/customers",
            title="Unprocessable Content",
            codeType="CustomerErrorCode",
            fields=["inputs[1].tier"],
        ),
    )
    assert fetch(
        database_url, "select count(*) from app.customers where email in ('mn3@example.com', 'mn4@example.com')"
    ) == [(0,)]


async def test_missing_takes_default_or_null(rest):
    assert_problem(
        await rest.post("/rest/tags?missing=skip", json=[{"label": "m"}]),
        bad_request("missing must be default or null; got 'skip'", "/rest/tags", field="missing"),
    )


async def test_return_minimal_answers_204_with_location_and_etag(rest, database_url):
    response = await rest.post(
        "/rest/customers", json={"email": "min@example.com", "name": "Min"}, headers={"Prefer": "return=minimal"}
    )
    ((key, row_version),) = fetch(
        database_url, "select id, xmin::text from app.customers where email = 'min@example.com'"
    )
    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["location"] == f"/rest/customers/{key}"
    assert response.headers["etag"] == etag(row_version)
    assert response.headers["preference-applied"] == "return=minimal"
    assert "content-type" not in response.headers


async def test_return_minimal_of_an_array(rest, database_url):
    response = await rest.post(
        "/rest/tags", json=[{"label": "min-1"}, {"label": "min-2"}], headers={"Prefer": "return=minimal"}
    )
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["preference-applied"] == "return=minimal"
    assert fetch(database_url, "select label from app.tags where label like 'min-%' order by label") == [
        ("min-1",),
        ("min-2",),
    ]


async def test_fields_and_include_shape_the_answer(rest, database_url):
    response = await rest.post(
        "/rest/orders?fields=number&include=customer&fields[customer]=name",
        json={"customerId": 1, "number": "F-1"},
    )
    assert_json(response, 201, {"number": "F-1", "customer": {"name": "Ann"}})


# --- limits.bulk_rows --------------------------------------------------------------------------------------------


@pytest.fixture
async def limited(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "limits": {"bulk_rows": 2}}) as client:
        yield client


def bulk_limit(actual: int, detail: str, instance: str = "/rest/tags") -> dict:
    return problem(413, "BULK_LIMIT_EXCEEDED", detail, instance, title="Bulk Limit Exceeded", limit=2, actual=actual)


async def test_an_array_over_bulk_rows_is_413_and_writes_nothing(limited, database_url):
    body = [{"label": "over-1"}, {"label": "over-2"}, {"label": "over-3"}]
    assert_problem(await limited.post("/rest/tags", json=body), bulk_limit(3, "the body holds 3 rows, more than 2"))
    assert fetch(database_url, "select count(*) from app.tags where label like 'over-%'") == [(0,)]
    response = await limited.post("/rest/tags", json=body[:2])
    assert [row["label"] for row in response.json()] == ["over-1", "over-2"]


async def test_nested_rows_count_toward_bulk_rows(limited, database_url):
    body = {
        "email": "bulk-nested@example.com",
        "name": "BN",
        "orders": {"create": [{"number": "BN-1"}, {"number": "BN-2"}]},
    }
    assert_problem(
        await limited.post("/rest/customers", json=body),
        bulk_limit(3, "the request writes 3 rows, more than 2", "/rest/customers"),
    )
    assert fetch(database_url, "select count(*) from app.customers where email = 'bulk-nested@example.com'") == [(0,)]
