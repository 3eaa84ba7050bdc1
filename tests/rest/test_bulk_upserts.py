"""Bulk upsert `PUT /rest/{resource}` (SPEC "REST API" -> route table, Writes 6, 7): an array (JSON or CSV) upserted
on `conflict=<unique key columns>` (default the primary key; not a unique key is 400 naming the keys), with
`resolution=merge` (default; `update=<columns>` limits the columns updated, default those the rows set apart from
the key) or `resolution=ignore`; the answer is the rows as they are now, in input order; at most
`limits.bulk_rows` rows; all or nothing."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, problem, rest_service, version

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def tag(database_url: str, key: int, label: str) -> dict:
    return {"id": key, "label": label, "rowVersion": version(database_url, "tags", key)}


def customers(database_url: str, *emails: str) -> list[tuple]:
    return fetch(
        database_url,
        "select email, name, nickname from app.customers where email = any(%s) order by email",
        [list(emails)],
    )


async def test_by_primary_key_updates_and_inserts_in_input_order(rest, database_url):
    await rest.put("/rest/tags/70", json={"label": "seventy"})
    response = await rest.put("/rest/tags", json=[{"id": 71, "label": "seventy-one"}, {"id": 70, "label": "70"}])
    assert_json(response, 200, [tag(database_url, 71, "seventy-one"), tag(database_url, 70, "70")])
    assert fetch(database_url, "select id, label from app.tags where id in (70, 71) order by id") == [
        (70, "70"),
        (71, "seventy-one"),
    ]


async def test_rows_that_leave_the_key_to_its_default_are_inserted_and_answered(rest, database_url):
    await rest.put("/rest/tags/72", json={"label": "seventy-two"})
    response = await rest.put(
        "/rest/tags", json=[{"label": "keyless-1"}, {"id": 72, "label": "72"}, {"label": "keyless-2"}]
    )
    rows = response.json()
    keys = [row["id"] for row in rows]
    assert keys[1] == 72
    assert_json(
        response,
        200,
        [tag(database_url, keys[0], "keyless-1"), tag(database_url, 72, "72"), tag(database_url, keys[2], "keyless-2")],
    )
    assert fetch(database_url, "select count(*) from app.tags where label like 'keyless-%'") == [(2,)]
    # Every row without its key: one statement, every row answered.
    response = await rest.put("/rest/tags", json=[{"label": "keyless-3"}, {"label": "keyless-4"}])
    assert [row["label"] for row in response.json()] == ["keyless-3", "keyless-4"]


async def test_conflict_on_another_unique_key_merges_the_columns_given(rest, database_url):
    await rest.post("/rest/customers", json={"email": "bu1@example.com", "name": "BU One", "nickname": "one"})
    body = [
        {"email": "bu1@example.com", "name": "BU One Renamed", "nickname": "uno"},
        {"email": "bu2@example.com", "name": "BU Two"},
    ]
    response = await rest.put("/rest/customers?conflict=email&fields=email,name,nickname,tier", json=body)
    assert_json(
        response,
        200,
        [
            {"email": "bu1@example.com", "name": "BU One Renamed", "nickname": "uno", "tier": "basic"},
            {"email": "bu2@example.com", "name": "BU Two", "nickname": None, "tier": "basic"},
        ],
    )
    assert customers(database_url, "bu1@example.com", "bu2@example.com") == [
        ("bu1@example.com", "BU One Renamed", "uno"),
        ("bu2@example.com", "BU Two", None),
    ]


async def test_update_names_the_columns_a_merge_changes(rest, database_url):
    await rest.post("/rest/customers", json={"email": "bu3@example.com", "name": "BU Three", "nickname": "three"})
    body = [{"email": "bu3@example.com", "name": "Ignored", "nickname": "tres"}]
    response = await rest.put("/rest/customers?conflict=email&update=nickname&fields=email,name,nickname", json=body)
    assert_json(response, 200, [{"email": "bu3@example.com", "name": "BU Three", "nickname": "tres"}])
    assert customers(database_url, "bu3@example.com") == [("bu3@example.com", "BU Three", "tres")]


async def test_resolution_ignore_leaves_existing_rows_as_they_are(rest, database_url):
    await rest.post("/rest/customers", json={"email": "bu4@example.com", "name": "BU Four"})
    body = [{"email": "bu4@example.com", "name": "Ignored"}, {"email": "bu5@example.com", "name": "BU Five"}]
    response = await rest.put("/rest/customers?conflict=email&resolution=ignore&fields=email,name", json=body)
    assert_json(
        response,
        200,
        [{"email": "bu4@example.com", "name": "BU Four"}, {"email": "bu5@example.com", "name": "BU Five"}],
    )
    assert customers(database_url, "bu4@example.com", "bu5@example.com") == [
        ("bu4@example.com", "BU Four", None),
        ("bu5@example.com", "BU Five", None),
    ]


async def test_a_composite_conflict_key(rest, database_url):
    body = [{"customerId": 1, "number": "A-1", "note": "upserted"}, {"customerId": 1, "number": "A-9", "note": "new"}]
    response = await rest.put("/rest/orders?conflict=customerId,number&fields=customerId,number,note", json=body)
    assert_json(response, 200, body)
    assert fetch(
        database_url,
        "select number, note from app.orders where customer_id = 1 and number in ('A-1', 'A-9') order by number",
    ) == [
        ("A-1", "upserted"),
        ("A-9", "new"),
    ]


async def test_csv_rows(rest, database_url):
    response = await rest.put(
        "/rest/tags?conflict=label", content=b"label\r\nrush\r\ncsv-upsert\r\n", headers={"Content-Type": "text/csv"}
    )
    rows = response.json()
    assert_json(response, 200, [tag(database_url, 2, "rush"), tag(database_url, rows[1]["id"], "csv-upsert")])


async def test_missing_null_sets_columns_other_rows_give(rest, database_url):
    await rest.post("/rest/customers", json={"email": "bu6@example.com", "name": "BU Six", "nickname": "six"})
    body = [
        {"email": "bu6@example.com", "name": "BU Six"},
        {"email": "bu7@example.com", "name": "BU Seven", "nickname": "seven"},
    ]
    response = await rest.put("/rest/customers?conflict=email&missing=null&fields=email,nickname", json=body)
    assert_json(
        response,
        200,
        [{"email": "bu6@example.com", "nickname": None}, {"email": "bu7@example.com", "nickname": "seven"}],
    )


async def test_parameters_are_checked(rest):
    cases = [
        ("conflict=name", "conflict=name is not a unique key of customers (one of: id; email)", "conflict"),
        ("conflict=bogus", "conflict: customers has no column 'bogus'", "conflict"),
        ("resolution=replace", "resolution must be merge or ignore; got 'replace'", "resolution"),
        ("conflict=email&update=bogus", "update: customers has no column 'bogus'", "update"),
        ("missing=skip", "missing must be default or null; got 'skip'", "missing"),
    ]
    for query, detail, field in cases:
        assert_problem(
            await rest.put(f"/rest/customers?{query}", json=[{"email": "p@example.com", "name": "P"}]),
            bad_request(detail, "/rest/customers", field=field),
        )
    assert_problem(
        await rest.put("/rest/customers?filter[id][eq]=1", json=[]),
        bad_request("unknown or misplaced parameter filter[id][eq]", "/rest/customers", field="filter[id][eq]"),
    )


async def test_the_body_is_an_array(rest):
    assert_problem(
        await rest.put("/rest/tags", json={"label": "one"}),
        bad_request("a bulk upsert takes a JSON array (or CSV rows)", "/rest/tags"),
    )


async def test_return_minimal(rest, database_url):
    response = await rest.put("/rest/tags", json=[{"id": 73, "label": "min"}], headers={"Prefer": "return=minimal"})
    assert (response.status_code, response.content) == (204, b"")
    assert fetch(database_url, "select label from app.tags where id = 73") == [("min",)]


async def test_a_failing_row_writes_nothing(rest, database_url):
    body = [{"id": 74, "label": "fails-1"}, {"id": 75, "label": "gift"}]
    assert_problem(
        await rest.put("/rest/tags", json=body),
        problem(
            409,
            "LABEL_TAKEN",
            'duplicate key value violates unique constraint "tags_label_key"',
            "/rest/tags",
            title="Conflict",
            codeType="TagErrorCode",
            fields=["inputs[1].label"],
        ),
    )
    assert fetch(database_url, "select count(*) from app.tags where id in (74, 75)") == [(0,)]


async def test_more_rows_than_bulk_rows_is_413(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "limits": {"bulk_rows": 2}}) as rest:
        assert_problem(
            await rest.put(
                "/rest/tags", json=[{"id": 80, "label": "b80"}, {"id": 81, "label": "b81"}, {"id": 82, "label": "b82"}]
            ),
            problem(
                413,
                "BULK_LIMIT_EXCEEDED",
                "the body holds 3 rows, more than 2",
                "/rest/tags",
                title="Bulk Limit Exceeded",
                limit=2,
                actual=3,
            ),
        )
    assert fetch(database_url, "select count(*) from app.tags where id in (80, 81, 82)") == [(0,)]
