"""Collection PATCH and DELETE by filter (SPEC "REST API" -> route table, Writes 5; "Limits" -> bulk_rows,
require_filter): 200 with the rows (in key order) and `X-Affected-Count`; only `filter` and `unfiltered` are taken
(any other parameter is 400 naming it); no filter is 400 FILTER_REQUIRED unless `unfiltered=true`; more matching
rows than `limits.bulk_rows` is 413 BULK_LIMIT_EXCEEDED with limit and actual, and nothing is written; the PATCH
body is the columns to set (null sets NULL), in JSON only."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, problem, rest_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


async def tags(rest, *labels: str) -> list[dict]:
    response = await rest.post("/rest/tags", json=[{"label": label} for label in labels])
    assert response.status_code == 201, response.text
    return response.json()


def versions(database_url: str, keys: list[int]) -> dict[int, str]:
    return dict(fetch(database_url, "select id, xmin::text from app.tags where id = any(%s)", [keys]))


async def test_patch_by_filter_answers_the_rows_and_their_count(rest, database_url):
    response = await rest.patch("/rest/orders?filter[customerId][eq]=1&filter[quantity][lt]=5", json={"note": "pf"})
    rows = response.json()
    assert_json(response, 200, [row | {"note": "pf"} for row in rows])
    assert [(row["id"], row["customerId"], row["note"]) for row in rows] == [(1, 1, "pf"), (2, 1, "pf")]
    assert response.headers["x-affected-count"] == "2"
    assert fetch(database_url, "select id from app.orders where note = 'pf' order by id") == [(1,), (2,)]
    # A JSON filter in the GraphQL filter shape, beside a bracket one.
    response = await rest.patch(
        '/rest/tags?filter={"label": {"in": ["gift", "rush"]}}&filter[id][eq]=2', json={"label": "urgent"}
    )
    assert_json(response, 200, [{"id": 2, "label": "urgent", "rowVersion": versions(database_url, [2])[2]}])
    assert response.headers["x-affected-count"] == "1"


async def test_rows_come_in_key_order(rest, database_url):
    created = await tags(rest, "ko-3", "ko-1", "ko-2")
    keys = sorted(row["id"] for row in created)
    # Touch the first rows last, so the table's physical order differs from the key order.
    await rest.patch(f"/rest/tags?filter[id][eq]={keys[0]}", json={"label": "ko-0"})
    response = await rest.patch("/rest/orders?filter[customerId][eq]=1", json={"note": "ko"})
    assert [row["id"] for row in response.json()] == [1, 2]
    response = await rest.delete("/rest/tags?filter[label][startsWith]=ko-")
    assert [row["id"] for row in response.json()] == keys
    assert response.headers["x-affected-count"] == "3"


async def test_null_sets_null_and_every_matching_row_is_written(rest, database_url):
    response = await rest.patch("/rest/customers?filter[id][in]=1,2", json={"nickname": None})
    rows = response.json()
    assert [(row["id"], row["nickname"]) for row in rows] == [(1, None), (2, None)]
    assert response.headers["x-affected-count"] == "2"
    assert fetch(database_url, "select count(*) from app.customers where id in (1, 2) and nickname is null") == [(2,)]


async def test_delete_by_filter_answers_the_rows_as_deleted(rest, database_url):
    created = await tags(rest, "del-1", "del-2")
    response = await rest.delete("/rest/tags?filter[label][like]=del-%25")
    assert_json(response, 200, [{"id": row["id"], "label": row["label"], "rowVersion": None} for row in created])
    assert response.headers["x-affected-count"] == "2"
    assert fetch(database_url, "select count(*) from app.tags where label like 'del-%'") == [(0,)]


async def test_no_matching_row_answers_an_empty_list(rest):
    for response in (
        await rest.delete("/rest/tags?filter[label][eq]=nothing"),
        await rest.patch("/rest/tags?filter[label][eq]=nothing", json={"label": "still-nothing"}),
    ):
        assert_json(response, 200, [])
        assert response.headers["x-affected-count"] == "0"


async def test_return_minimal_answers_204_with_the_count(rest, database_url):
    await tags(rest, "rm-1", "rm-2")
    response = await rest.delete("/rest/tags?filter[label][startsWith]=rm-", headers={"Prefer": "return=minimal"})
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["x-affected-count"] == "2"
    assert response.headers["preference-applied"] == "return=minimal"
    assert fetch(database_url, "select count(*) from app.tags where label like 'rm-%'") == [(0,)]


async def test_only_filter_and_unfiltered_are_taken(rest, database_url):
    for parameter in ("order=id", "first=1", "include=orders", "fields=label", "offset=1", "by=label"):
        name = parameter.split("=")[0]
        for method in ("PATCH", "DELETE"):
            body = {"json": {"label": "x"}} if method == "PATCH" else {}
            response = await rest.request(method, f"/rest/tags?filter[id][eq]=1&{parameter}", **body)
            assert_problem(
                response,
                bad_request(
                    f"unknown or misplaced parameter {name} (this route takes filter, unfiltered)",
                    "/rest/tags",
                    field=name,
                ),
            )
    assert fetch(database_url, "select label from app.tags where id = 1") == [("gift",)]


async def test_a_bad_filter_is_400_naming_it(rest):
    assert_problem(
        await rest.delete("/rest/tags?filter[bogus][eq]=1"),
        bad_request("Tag has no filterable field 'bogus'", "/rest/tags", field="filter[bogus]"),
    )


async def test_without_a_filter_is_filter_required(rest, database_url):
    for method, body in (("PATCH", {"json": {"label": "all"}}), ("DELETE", {})):
        for query in ("", "?unfiltered=false"):
            assert_problem(
                await rest.request(method, f"/rest/tags{query}", **body),
                problem(
                    400,
                    "FILTER_REQUIRED",
                    "a write by filter needs a filter (or unfiltered=true to touch every row)",
                    "/rest/tags",
                    title="Filter Required",
                    field="filter",
                ),
            )
    assert_problem(
        await rest.delete("/rest/tags?unfiltered=yes"),
        bad_request("unfiltered must be true or false", "/rest/tags", field="unfiltered"),
    )
    assert fetch(database_url, "select count(*) from app.tags where label = 'all'") == [(0,)]


async def test_unfiltered_true_writes_every_row(rest, database_url):
    response = await rest.patch("/rest/rooms?unfiltered=true", json={"name": "Same"})
    assert [(row["id"], row["name"]) for row in response.json()] == [(1, "Same"), (2, "Same")]
    assert response.headers["x-affected-count"] == "2"
    assert fetch(database_url, "select distinct name from app.rooms") == [("Same",)]


async def test_the_patch_body_is_columns_in_json(rest, database_url):
    assert_problem(
        await rest.patch("/rest/tags?filter[id][eq]=1", json={}),
        bad_request("PATCH with no fields to set", "/rest/tags"),
    )
    assert_problem(
        await rest.patch("/rest/orders?filter[id][eq]=1", json={"customer": {"connect": {"id": 2}}}),
        bad_request("a bulk update does not write related rows (customer)", "/rest/orders", field="input.customer"),
    )
    assert_problem(
        await rest.patch("/rest/tags?filter[id][eq]=1", json=[{"label": "x"}]),
        bad_request("input must be a JSON object", "/rest/tags", field="input"),
    )
    assert_problem(
        await rest.request("DELETE", "/rest/tags?filter[id][eq]=1", content=b"{}"),
        bad_request("DELETE takes no body", "/rest/tags"),
    )
    assert fetch(database_url, "select label from app.tags where id = 1") == [("gift",)]


async def test_typed_errors_name_the_set_fields(rest, database_url):
    await tags(rest, "same-1", "same-2")
    assert_problem(
        await rest.patch("/rest/tags?filter[label][startsWith]=same-", json={"label": "same"}),
        problem(
            409,
            "LABEL_TAKEN",
            'duplicate key value violates unique constraint "tags_label_key"',
            "/rest/tags",
            title="Conflict",
            codeType="TagErrorCode",
            fields=["input.label"],
        ),
    )
    assert fetch(database_url, "select label from app.tags where label like 'same%' order by label") == [
        ("same-1",),
        ("same-2",),
    ]


# --- limits.bulk_rows --------------------------------------------------------------------------------------------


async def test_more_rows_than_bulk_rows_is_413_and_writes_nothing(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "limits": {"bulk_rows": 2}}) as rest:
        for method, body in (("PATCH", {"json": {"note": "too many"}}), ("DELETE", {})):
            assert_problem(
                await rest.request(method, "/rest/orders?filter[quantity][gt]=0", **body),
                problem(
                    413,
                    "BULK_LIMIT_EXCEEDED",
                    "3 rows match, more than 2 a write by filter may touch",
                    "/rest/orders",
                    title="Bulk Limit Exceeded",
                    limit=2,
                    actual=3,
                ),
            )
        assert fetch(database_url, "select count(*) from app.orders where note = 'too many'") == [(0,)]
        assert fetch(database_url, "select count(*) from app.orders where id in (1, 2, 3)") == [(3,)]
        # Up to the limit is fine.
        response = await rest.patch("/rest/orders?filter[customerId][eq]=1", json={"note": "two"})
        assert response.headers["x-affected-count"] == "2"
