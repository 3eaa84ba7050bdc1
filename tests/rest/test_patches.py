"""Merge patch and JSON Patch of one row (SPEC "REST API" -> route table, Writes 8): `application/merge-patch+json`
(null sets NULL, objects merge into JSON columns) and `application/json-patch+json` (add, remove, replace, move,
copy and test against the row as the API shows it; a failing operation is 422 PATCH_FAILED and writes nothing; a
malformed patch is 400; on a collection 415); the row is read and written with the version read as the expected
one, so `If-Match` and the URL's key hold as for any PATCH."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, etag, problem, rest_service, version

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


async def test_a_merge_patch_sets_null_and_merges_objects_into_json_columns(rest, database_url):
    row = await new_document(rest, "Merge", {"theme": "dark", "size": {"w": 10, "h": 20}, "tags": [1, 2]})
    key = row["id"]
    patch = {"content": None, "settings": {"size": {"w": None, "d": 3}, "tags": [3], "lang": "en"}}
    response = await rest.patch(f"/rest/documents/{key}", json=patch, headers=MERGE)
    settings = {"theme": "dark", "size": {"h": 20, "d": 3}, "tags": [3], "lang": "en"}
    row_version = version(database_url, "documents", key)
    assert_json(response, 200, {**row, "content": None, "settings": settings, "rowVersion": row_version})
    assert response.headers["etag"] == etag(row_version)
    assert settings_of(database_url, key) == [("Merge", None, settings)]


async def test_a_merge_patch_of_plain_columns(rest, database_url):
    response = await rest.patch("/rest/orders/3", json={"note": "merged", "quantity": 6}, headers=MERGE)
    assert response.status_code == 200, response.text
    assert fetch(database_url, "select note, quantity from app.orders where id = 3") == [("merged", 6)]


async def test_a_merge_patch_is_an_object(rest):
    assert_problem(
        await rest.patch("/rest/documents/1", json=[{"title": "x"}], headers=MERGE),
        bad_request("a merge patch of a row is a JSON object", "/rest/documents/1"),
    )


async def test_a_merge_patch_keeps_the_url_key(rest, database_url):
    row = await new_document(rest, "Keyed", {})
    path = f"/rest/documents/{row['id']}"
    assert_problem(
        await rest.patch(path, json={"id": row["id"] + 1000}, headers=MERGE),
        bad_request("input.id differs from the key in the URL", path, field="input.id"),
    )
    assert_problem(
        await rest.patch(path, json={"bogus": 1}, headers=MERGE),
        bad_request("input.bogus: UpdateDocumentInput has no field 'bogus'", path, field="input.bogus"),
    )


# --- JSON Patch --------------------------------------------------------------------------------------------------


async def test_json_patch_operations_against_the_row_as_shown(rest, database_url):
    row = await new_document(rest, "Ops", {"theme": "dark", "size": {"w": 10}})
    key = row["id"]
    operations = [
        {"op": "test", "path": "/title", "value": "Ops"},
        {"op": "replace", "path": "/settings/theme", "value": "light"},
        {"op": "add", "path": "/settings/size/h", "value": 20},
        {"op": "move", "from": "/settings/theme", "path": "/settings/mode"},
        {"op": "copy", "from": "/title", "path": "/settings/name"},
        {"op": "remove", "path": "/content"},
        {"op": "replace", "path": "/title", "value": "Ops 2"},
    ]
    response = await rest.patch(f"/rest/documents/{key}", json=operations, headers=JSON_PATCH)
    settings = {"mode": "light", "size": {"w": 10, "h": 20}, "name": "Ops"}
    row_version = version(database_url, "documents", key)
    assert_json(
        response, 200, {"id": key, "title": "Ops 2", "content": None, "settings": settings, "rowVersion": row_version}
    )
    assert response.headers["etag"] == etag(row_version)
    assert settings_of(database_url, key) == [("Ops 2", None, settings)]


@pytest.mark.parametrize(
    ("media", "patch"),
    [
        (JSON_PATCH, [{"op": "replace", "path": "/settings/theme", "value": "light"}]),
        (MERGE, {"settings": {"theme": "light"}}),
    ],
)
async def test_a_patch_keeps_every_digit_of_the_numbers_it_rewrites(rest, database_url, media, patch):
    """A JSON column's numbers are read back as they are (not as floats), so patching a member beside them writes
    them again with every digit."""
    precise, huge = "0.1000000000000000055511151231257827", "1" + "0" * 400
    settings = '{"ratio": ' + precise + ', "big": ' + huge + ', "theme": "dark"}'
    (key,) = fetch(
        database_url, "insert into app.documents (title, settings) values ('Digits', %s) returning id", [settings]
    )[0]
    response = await rest.patch(f"/rest/documents/{key}", json=patch, headers=media)
    assert response.status_code == 200, response.text
    assert precise in response.text and huge in response.text
    stored = "select settings->>'ratio', settings->>'big', settings->>'theme' from app.documents where id = %s"
    assert fetch(database_url, stored, [key]) == [(precise, huge, "light")]


async def test_a_failing_test_is_422_and_writes_nothing(rest, database_url):
    row = await new_document(rest, "Tested", {"theme": "dark"})
    path = f"/rest/documents/{row['id']}"
    operations = [
        {"op": "replace", "path": "/title", "value": "Changed"},
        {"op": "test", "path": "/settings/theme", "value": "light"},
    ]
    response = await rest.patch(path, json=operations, headers=JSON_PATCH)
    assert_problem(
        response,
        problem(
            422,
            "PATCH_FAILED",
            "the patch cannot be applied: dark (<class 'str'>) is not equal to tested value light (<class 'str'>)",
            path,
            title="Patch Failed",
        ),
    )
    assert settings_of(database_url, row["id"]) == [("Tested", b"\x00\xff", {"theme": "dark"})]
    assert version(database_url, "documents", row["id"]) == row["rowVersion"]


async def test_a_path_that_does_not_exist_is_422(rest):
    response = await rest.patch(
        "/rest/documents/1", json=[{"op": "remove", "path": "/settings/nothing"}], headers=JSON_PATCH
    )
    assert_problem(
        response,
        problem(
            422,
            "PATCH_FAILED",
            "the patch cannot be applied: can't remove a non-existent object 'nothing'",
            "/rest/documents/1",
            title="Patch Failed",
        ),
    )


async def test_a_malformed_patch_is_400(rest):
    cases = [
        ({"op": "replace", "path": "/title", "value": "x"}, "a JSON Patch is an array of operations"),
        ([{"op": "frob", "path": "/title"}], "invalid JSON Patch: Unknown operation 'frob'"),
        ([{"path": "/title"}], "invalid JSON Patch: Operation does not contain 'op' member"),
    ]
    for body, detail in cases:
        assert_problem(
            await rest.patch("/rest/documents/1", json=body, headers=JSON_PATCH),
            bad_request(detail, "/rest/documents/1"),
        )


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


async def test_the_key_and_unknown_members_hold_for_json_patch(rest, database_url):
    row = await new_order(rest)
    path = f"/rest/orders/{row['id']}"
    assert_problem(
        await rest.patch(path, json=[{"op": "replace", "path": "/id", "value": 999}], headers=JSON_PATCH),
        bad_request("input.id differs from the key in the URL", path, field="input.id"),
    )
    assert_problem(
        await rest.patch(path, json=[{"op": "add", "path": "/bogus", "value": 1}], headers=JSON_PATCH),
        bad_request("input.bogus: UpdateOrderInput has no field 'bogus'", path, field="input.bogus"),
    )
    assert fetch(database_url, "select version from app.orders where id = %s", [row["id"]]) == [(1,)]


async def test_if_match_and_missing_rows(rest, database_url):
    row = await new_order(rest)
    path = f"/rest/orders/{row['id']}"
    operations = [{"op": "replace", "path": "/note", "value": "checked"}]
    assert_problem(
        await rest.patch(path, json=operations, headers={**JSON_PATCH, "If-Match": '"7"'}),
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
    response = await rest.patch(path, json=operations, headers={**JSON_PATCH, "If-Match": '"1"'})
    assert_json(response, 200, {**row, "note": "checked", "version": 2, "rowVersion": "2"})
    for headers in (JSON_PATCH, MERGE):
        assert_problem(
            await rest.patch("/rest/orders/999", json=operations if headers is JSON_PATCH else {}, headers=headers),
            problem(404, "NOT_FOUND", "no Order has the key 999", "/rest/orders/999", title="Not Found"),
        )


async def test_prefer_previous_and_return_minimal(rest):
    row = await new_order(rest)
    path = f"/rest/orders/{row['id']}"
    response = await rest.patch(path, json={"note": "after"}, headers={**MERGE, "Prefer": "previous"})
    assert_json(
        response,
        200,
        {"row": {**row, "note": "after", "version": 2, "rowVersion": "2"}, "previous": {**row, "rowVersion": None}},
    )
    response = await rest.patch(
        path, json=[{"op": "remove", "path": "/note"}], headers={**JSON_PATCH, "Prefer": "return=minimal"}
    )
    assert (response.status_code, response.content, response.headers["etag"]) == (204, b"", '"3"')


async def test_patches_are_refused_on_a_collection(rest, database_url):
    for headers, body in ((JSON_PATCH, [{"op": "replace", "path": "/note", "value": "x"}]), (MERGE, {"note": "x"})):
        assert_problem(
            await rest.patch("/rest/orders?unfiltered=true", json=body, headers=headers),
            problem(
                415,
                "UNSUPPORTED_MEDIA_TYPE",
                f"a write by filter takes application/json; got {headers['Content-Type']}",
                "/rest/orders",
                title="Unsupported Media Type",
            ),
        )
    assert fetch(database_url, "select count(*) from app.orders where note = 'x'") == [(0,)]


async def test_the_row_version_can_be_tested_but_not_written(rest, database_url):
    row = await new_order(rest)
    path = f"/rest/orders/{row['id']}"
    operations = [{"op": "test", "path": "/rowVersion", "value": "1"}, {"op": "replace", "path": "/note", "value": "v"}]
    response = await rest.patch(path, json=operations, headers=JSON_PATCH)
    assert_json(response, 200, {**row, "note": "v", "version": 2, "rowVersion": "2"})
    assert_problem(
        await rest.patch(path, json=operations, headers=JSON_PATCH),
        problem(
            422,
            "PATCH_FAILED",
            "the patch cannot be applied: 2 (<class 'str'>) is not equal to tested value 1 (<class 'str'>)",
            path,
            title="Patch Failed",
        ),
    )
    assert_problem(
        await rest.patch(path, json=[{"op": "replace", "path": "/rowVersion", "value": "9"}], headers=JSON_PATCH),
        bad_request("input.rowVersion: UpdateOrderInput has no field 'rowVersion'", path, field="input.rowVersion"),
    )
    assert fetch(database_url, "select note, version from app.orders where id = %s", [row["id"]]) == [("v", 2)]
