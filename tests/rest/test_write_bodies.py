"""Request bodies of REST writes (SPEC "REST API" -> strictness, media types, Writes 4; "Limits" ->
request_body_bytes): JSON objects and arrays in the GraphQL input shapes, validated to any depth (unknown members
and values that do not fit are 400 naming the path; a required member missing is its typed `<FIELD>_REQUIRED`,
422); CSV rows for POST and bulk PUT (a header row, an empty cell is null, a cell that does not fit names its row
and column); multipart/form-data for one row (POST, PATCH, PUT); any other media type is 415; a body over
`limits.request_body_bytes` is 413."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, problem, rest_service, version

DATABASE_FIXTURES = ["writes.sql", "rest_writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
CSV = {"Content-Type": "text/csv"}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def unsupported(detail: str, instance: str) -> dict:
    return problem(415, "UNSUPPORTED_MEDIA_TYPE", detail, instance, title="Unsupported Media Type")


def required(code: str, code_type: str, field: str, instance: str) -> dict:
    return problem(
        422, code, f"{field} is required", instance, title="Unprocessable Content", codeType=code_type, fields=[field]
    )


# --- JSON --------------------------------------------------------------------------------------------------------


async def test_invalid_json_is_400(rest):
    for body in (b"{nope", b"", b"\xff\xfe"):
        assert_problem(
            await rest.post("/rest/tags", content=body, headers={"Content-Type": "application/json"}),
            bad_request("the request body is not valid JSON", "/rest/tags"),
        )


async def test_a_body_that_is_not_an_object_is_400(rest):
    for body, path in ((b'"x"', "input"), (b"1", "input"), (b"null", "input"), (b'[{"label": "ok"}, 2]', "inputs[1]")):
        assert_problem(
            await rest.post("/rest/tags", content=body, headers={"Content-Type": "application/json"}),
            bad_request(f"{path} must be a JSON object", "/rest/tags", field=path),
        )


async def test_unknown_members_are_400_naming_their_path(rest, database_url):
    cases = [
        ({"label": "u", "bogus": 1}, "input.bogus", "CreateTagInput"),
        ([{"label": "u1"}, {"label": "u2", "bogus": 1}], "inputs[1].bogus", "CreateTagInput"),
        (
            {"label": "u", "orders": {"create": [{"customerId": 1, "number": "U", "bogus": 1}]}},
            "input.orders.create[0].bogus",
            "CreateOrderInput",
        ),
        ({"label": "u", "orders": {"bogus": []}}, "input.orders.bogus", "OrderManyToManyInput"),
    ]
    for body, path, type_name in cases:
        assert_problem(
            await rest.post("/rest/tags", json=body),
            bad_request(f"{path}: {type_name} has no field 'bogus'", "/rest/tags", field=path),
        )
    assert fetch(database_url, "select count(*) from app.tags where label like 'u%'") == [(0,)]


async def test_values_that_do_not_fit_are_400_naming_their_path(rest):
    assert_problem(
        await rest.post("/rest/customers", json={"email": "v@example.com", "name": "V", "deleted": "maybe"}),
        bad_request(
            "input.deleted: Boolean cannot represent a non boolean value: 'maybe'",
            "/rest/customers",
            field="input.deleted",
        ),
    )
    assert_problem(
        await rest.post("/rest/tags", json={"label": "nul\u0000"}),
        bad_request("text may not contain the NUL character", "/rest/tags", field="input.label"),
    )


async def test_a_required_member_missing_or_null_is_its_typed_code(rest, database_url):
    assert_problem(
        await rest.post("/rest/customers", json={"email": "req@example.com"}),
        required("NAME_REQUIRED", "CustomerErrorCode", "input.name", "/rest/customers"),
    )
    assert_problem(
        await rest.post("/rest/tags", json=[{"label": "req-1"}, {"label": None}]),
        required("LABEL_REQUIRED", "TagErrorCode", "inputs[1].label", "/rest/tags"),
    )
    assert_problem(
        await rest.post(
            "/rest/customers", json={"email": "req@example.com", "name": "Req", "orders": {"create": [{}]}}
        ),
        required("NUMBER_REQUIRED", "OrderErrorCode", "input.orders.create[0].number", "/rest/customers"),
    )
    assert fetch(database_url, "select count(*) from app.customers where email = 'req@example.com'") == [(0,)]


async def test_a_json_suffix_media_type_is_json(rest, database_url):
    response = await rest.post(
        "/rest/tags", content=b'{"label": "vnd"}', headers={"Content-Type": "application/vnd.api+json; charset=utf-8"}
    )
    key = response.json()["id"]
    assert_json(response, 201, {"id": key, "label": "vnd", "rowVersion": version(database_url, "tags", key)})


async def test_other_media_types_are_415(rest):
    accepted = "application/json, text/csv, multipart/form-data"
    for content_type in ("text/plain", "application/xml", "application/merge-patch+json"):
        assert_problem(
            await rest.post("/rest/tags", content=b'{"label": "x"}', headers={"Content-Type": content_type}),
            unsupported(f"this request takes {accepted}; got {content_type}", "/rest/tags"),
        )
    assert_problem(
        await rest.post("/rest/tags", content=b'{"label": "x"}'),
        unsupported(f"this request takes {accepted}; got no Content-Type", "/rest/tags"),
    )
    assert_problem(
        await rest.patch("/rest/tags/1", content=b"label\nx\n", headers=CSV),
        unsupported(
            "this request takes application/json, application/merge-patch+json, application/json-patch+json,"
            " multipart/form-data; got text/csv",
            "/rest/tags/1",
        ),
    )
    assert_problem(
        await rest.put("/rest/tags/1", content=b"label\nx\n", headers=CSV),
        unsupported("this request takes application/json, multipart/form-data; got text/csv", "/rest/tags/1"),
    )
    assert_problem(
        await rest.patch("/rest/tags?unfiltered=true", content=b"label\nx\n", headers=CSV),
        unsupported("a write by filter takes application/json; got text/csv", "/rest/tags"),
    )


async def test_a_body_over_request_body_bytes_is_413(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "limits": {"request_body_bytes": 64}}) as rest:
        body = b'{"label": "' + b"x" * 60 + b'"}'
        assert_problem(
            await rest.post("/rest/tags", content=body, headers={"Content-Type": "application/json"}),
            problem(
                413,
                "PAYLOAD_TOO_LARGE",
                "the request body exceeds 64 bytes",
                "/rest/tags",
                title="Content Too Large",
                limit=64,
                actual=len(body),
            ),
        )
    assert fetch(database_url, "select count(*) from app.tags where label like 'xxxx%'") == [(0,)]


# --- CSV ---------------------------------------------------------------------------------------------------------


async def test_csv_rows_with_a_header_row_and_empty_cells_as_null(rest, database_url):
    body = (
        b"email,name,credit,nickname,deleted\r\n"
        b"csv1@example.com,CSV One,1.5,,true\r\n"
        b'csv2@example.com,"Two, Quoted",,nick,false\r\n'
    )
    response = await rest.post("/rest/customers?fields=email,name,credit,nickname,deleted", content=body, headers=CSV)
    assert_json(
        response,
        201,
        [
            {"email": "csv1@example.com", "name": "CSV One", "credit": "1.50", "nickname": None, "deleted": True},
            {"email": "csv2@example.com", "name": "Two, Quoted", "credit": None, "nickname": "nick", "deleted": False},
        ],
    )
    assert fetch(
        database_url, "select email, credit::text, nickname from app.customers where email like 'csv%' order by email"
    ) == [("csv1@example.com", "1.50", None), ("csv2@example.com", None, "nick")]


async def test_csv_header_names_fields_by_rest_or_column_name_and_json_cells(rest, database_url):
    body = b'title,settings\r\nCSV doc,"{""theme"": ""dark""}"\r\n'
    response = await rest.post("/rest/documents?fields=title,settings", content=body, headers=CSV)
    assert_json(response, 201, [{"title": "CSV doc", "settings": {"theme": "dark"}}])
    response = await rest.post(
        "/rest/orders?fields=number,customerId", content=b"customer_id,number\n2,CSV-1\n", headers=CSV
    )
    assert_json(response, 201, [{"number": "CSV-1", "customerId": 2}])


async def test_a_csv_cell_that_does_not_fit_names_its_row_and_column(rest, database_url):
    assert_problem(
        await rest.post("/rest/orders", content=b"customerId,number,quantity\n2,Q-1,3\n2,Q-2,many\n", headers=CSV),
        bad_request(
            "inputs[1].quantity: expected a whole number; got 'many'", "/rest/orders", field="inputs[1].quantity"
        ),
    )
    assert_problem(
        await rest.post("/rest/tags", content=b'label\ncsv-ok\n""\n', headers=CSV),
        required("LABEL_REQUIRED", "TagErrorCode", "inputs[1].label", "/rest/tags"),
    )
    assert fetch(database_url, "select count(*) from app.orders where number like 'Q-%'") == [(0,)]


async def test_malformed_csv_is_400(rest):
    cases = [
        (b"", "the CSV body has no header row", {}),
        (b"label,bogus\nx,y\n", "the CSV header names 'bogus', not a writable field of Tag", {"field": "header"}),
        (b"label,id\nx\n", "CSV record 1 has 1 fields; the header has 2", {"field": "inputs[0]"}),
        (b"label\n\xff\n", "the CSV body is not UTF-8", {}),
    ]
    for body, detail, members in cases:
        assert_problem(
            await rest.post("/rest/tags", content=body, headers=CSV), bad_request(detail, "/rest/tags", **members)
        )


async def test_a_csv_header_alone_creates_nothing(rest):
    assert_json(await rest.post("/rest/tags", content=b"label\r\n", headers=CSV), 201, [])


async def test_csv_over_bulk_rows_is_413(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "limits": {"bulk_rows": 2}}) as rest:
        assert_problem(
            await rest.post("/rest/tags", content=b"label\nb1\nb2\nb3\n", headers=CSV),
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
    assert fetch(database_url, "select count(*) from app.tags where label in ('b1', 'b2', 'b3')") == [(0,)]


# --- multipart/form-data -----------------------------------------------------------------------------------------


async def test_a_form_creates_one_row_with_typed_fields(rest, database_url):
    form = {
        "email": (None, "form@example.com"),
        "name": (None, "Form"),
        "credit": (None, "12.5"),
        "deleted": (None, "true"),
    }
    response = await rest.post("/rest/customers", files=form)
    key = response.json()["id"]
    assert_json(
        response,
        201,
        {
            "id": key,
            "email": "form@example.com",
            "name": "Form",
            "nickname": None,
            "tier": "basic",
            "credit": "12.50",
            "deleted": True,
            "rowVersion": version(database_url, "customers", key),
        },
    )
    assert response.headers["location"] == f"/rest/customers/{key}"


async def test_a_form_patches_and_puts_one_row(rest, database_url):
    created = (await rest.post("/rest/tags", files={"label": (None, "form-tag")})).json()
    path = f"/rest/tags/{created['id']}"
    response = await rest.patch(path, files={"label": (None, "form-patched")})
    assert_json(
        response, 200, {**created, "label": "form-patched", "rowVersion": version(database_url, "tags", created["id"])}
    )
    response = await rest.put("/rest/tags/77", files={"label": (None, "form-put")})
    assert_json(response, 200, {"id": 77, "label": "form-put", "rowVersion": version(database_url, "tags", 77)})


async def test_a_form_patch_of_a_table_that_cannot_be_created(tmp_path, database_url):
    settings = {**SETTINGS, "entities": {"rooms": {"omit_operations": ["create"]}}}
    async with rest_service(tmp_path, database_url, settings) as rest:
        response = await rest.patch("/rest/rooms/2", files={"name": (None, "Green")})
        assert_json(response, 200, {"id": 2, "name": "Green", "rowVersion": version(database_url, "rooms", 2)})


async def test_form_fields_are_checked_like_json_members(rest, database_url):
    cases = [
        ({"label": (None, "x"), "bogus": (None, "y")}, "Tag has no writable field 'bogus'", "input.bogus"),
        (
            {"label": ("label.txt", b"x", "text/plain")},
            "label is not a binary column: it takes a value, not a file",
            "input.label",
        ),
        ([("label", (None, "a")), ("label", (None, "b"))], "the form field label is given twice", "input.label"),
    ]
    for form, detail, field in cases:
        assert_problem(await rest.post("/rest/tags", files=form), bad_request(detail, "/rest/tags", field=field))
    assert_problem(
        await rest.post(
            "/rest/customers", files={"email": (None, "f@example.com"), "name": (None, "F"), "deleted": (None, "maybe")}
        ),
        bad_request("input.deleted: expected true or false; got 'maybe'", "/rest/customers", field="input.deleted"),
    )
    assert_problem(
        await rest.post("/rest/tags", content=b"--b\r\n", headers={"Content-Type": "multipart/form-data"}),
        bad_request("the multipart body cannot be read (check its boundary)", "/rest/tags"),
    )
    assert fetch(database_url, "select count(*) from app.customers where email = 'f@example.com'") == [(0,)]


async def test_a_form_is_one_row_only(rest):
    assert_problem(
        await rest.put("/rest/tags", files={"label": (None, "x")}),
        unsupported("this request takes application/json, text/csv; got multipart/form-data", "/rest/tags"),
    )


async def test_an_omitted_operation_is_403_and_an_impossible_one_405(tmp_path, database_url):
    """SPEC "Errors" -> REST: 403 for an operation not permitted (`omit_operations`, grants); 405 for a method the
    path never has."""
    settings = {**SETTINGS, "entities": {"rooms": {"omit_operations": ["create", "delete"]}}}
    async with rest_service(tmp_path, database_url, settings) as rest:
        created = await rest.post("/rest/rooms", json={"id": 9, "name": "Blue"})
        assert created.status_code == 403 and created.json()["code"] == "PERMISSION_DENIED"
        assert (await rest.delete("/rest/rooms/2")).status_code == 403
        options = await rest.options("/rest/rooms/2")
        assert "DELETE" not in options.headers["allow"] and "PATCH" in options.headers["allow"]
        impossible = await rest.post("/rest/rooms/2", json={})
        assert impossible.status_code == 405 and "POST" not in impossible.headers["allow"]
