"""JSON Schema columns (SPEC "Extension integrations", issue 23): a CHECK calling pg_jsonschema's schema-match
function with a literal schema, in the three forms read (the call alone, `column IS NULL OR call`, `call AND other`)
or on the column's domain, is checked before any SQL: a rejected value is `<COLUMN>_INVALID` (the CHECK's code; REST
422, a GraphQL error) with `validationErrors` `{path, message}`, and a bulk write names the failing row; with
`extensions.integrations.pg_jsonschema: off` nothing is checked before SQL. pg_jsonschema itself cannot be
installed here: the fixture's functions of the same names accept everything, so any refusal is the service's."""

import json

import pytest
from openapi_spec_validator import validate

from svc.catalog._checks import json_schema
from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["json_schema.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
VALID = {"name": "Boots", "details": {"sku": "BT-1", "sizes": [40, 41]}, "dimensions": {"w": 1, "h": 2}}


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as running:
        yield running


def count(database_url: str) -> int:
    return fetch(database_url, "select count(*) from app.products")[0][0]


@pytest.mark.parametrize(
    ("definition", "column", "schema"),
    [
        ("""CHECK (app.jsonb_matches_schema('{"type": "object"}'::json, details))""", "details", '{"type": "object"}'),
        (
            """CHECK (((tags IS NULL) OR app.json_matches_schema('{"type": "array"}'::json, tags)))""",
            "tags",
            '{"type": "array"}',
        ),
        (
            """CHECK ((jsonb_matches_schema('{"a": "it''s"}'::json, d) AND (length((d)::text) < 200)))""",
            "d",
            """{"a": "it's"}""",
        ),
        ("""CHECK (jsonb_matches_schema('{}'::json, VALUE))""", "VALUE", "{}"),
        ("""CHECK (jsonb_matches_schema('{}'::json, other))""", "d", None),  # another column
        ("""CHECK (((d IS NULL) AND jsonb_matches_schema('{}'::json, d)))""", "d", "{}"),
        ("""CHECK ((jsonb_matches_schema(schema_column, d)))""", "d", None),  # not a literal
        ("""CHECK (((d IS NULL) OR (d <> 'null'::jsonb)))""", "d", None),
    ],
)
def test_the_forms_a_schema_check_is_read_in(definition, column, schema):
    assert json_schema(definition, column) == schema


async def test_a_value_its_schema_rejects_is_422_naming_each_failure_and_nothing_is_written(service, database_url):
    before = count(database_url)
    bad = {**VALID, "details": {"sku": "bt1", "sizes": [0, 41], "colour": "red"}}
    response = await service.client.post("/rest/products", json=bad)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "DETAILS_INVALID"
    assert problem["fields"] == ["input.details"]
    assert problem["validationErrors"] == [
        {"path": "", "message": "Additional properties are not allowed ('colour' was unexpected)"},
        {"path": "/sizes/0", "message": "0 is less than the minimum of 1"},
        {"path": "/sku", "message": "'bt1' does not match '^[A-Z]+-[0-9]+$'"},
    ]
    assert count(database_url) == before
    response = await service.client.post("/rest/products", json=VALID)
    assert response.status_code == 201, response.text
    assert count(database_url) == before + 1


async def test_each_form_and_the_domain_are_checked_with_their_own_codes(service, database_url):
    before = count(database_url)
    cases = [
        ({"tags": ["a", 1]}, "TAGS_INVALID", "/1"),
        ({"dimensions": {"w": 1}}, "PRODUCT_DIMENSIONS", ""),
        ({"settings": {"theme": "blue"}}, "SETTINGS_INVALID", "/theme"),
    ]
    for change, code, path in cases:
        response = await service.client.post("/rest/products", json={**VALID, **change})
        assert response.status_code == 422, response.text
        assert (response.json()["code"], response.json()["validationErrors"][0]["path"]) == (code, path)
    # null where the column allows it, and JSON of a column without a schema check, pass.
    response = await service.client.post("/rest/products", json={**VALID, "tags": None, "extra": [1, "x"]})
    assert response.status_code == 201, response.text
    assert count(database_url) == before + 1


async def test_a_bulk_write_names_the_failing_row(service, database_url):
    before = count(database_url)
    rows = [VALID, {**VALID, "details": {"sku": "OK-2"}}, {**VALID, "details": {}}]
    response = await service.client.post("/rest/products", json=rows)
    assert response.status_code == 422, response.text
    assert response.json()["fields"] == ["inputs[2].details"]
    assert response.json()["validationErrors"] == [{"path": "", "message": "'sku' is a required property"}]
    assert count(database_url) == before


async def test_graphql_writes_refuse_the_same_value_with_the_same_code(service, database_url):
    before = count(database_url)
    mutation = "mutation($input: CreateProductInput!) { createProduct(input: $input) { product { rowId } } }"
    body = {"query": mutation, "variables": {"input": {**VALID, "details": {"sku": 7}}}}
    answer = (await service.client.post("/graphql", json=body)).json()
    assert answer["data"] is None  # refused while planning, as a value too long is
    (error,) = answer["errors"]
    assert error["extensions"]["code"] == "DETAILS_INVALID"
    assert error["extensions"]["validationErrors"] == [{"path": "/sku", "message": "7 is not of type 'string'"}]
    assert count(database_url) == before


async def test_with_the_integration_off_nothing_is_checked_before_sql(tmp_path, database_url):
    before = count(database_url)
    settings = {**SETTINGS, "extensions": {"integrations": {"pg_jsonschema": "off"}}}
    async with running_service(tmp_path, database_url, settings) as service:
        response = await service.client.post("/rest/products", json={**VALID, "details": {"anything": True}})
        assert response.status_code == 201, response.text  # the fixture's function accepts everything
    assert count(database_url) == before + 1


async def test_a_self_reference_and_an_older_draft_are_checked_as_written(service):
    tree = {"label": "a", "children": [{"label": "b", "children": [{"label": 3}]}]}
    response = await service.client.post("/rest/products", json={**VALID, "tree": tree})
    assert response.status_code == 422, response.text
    assert response.json()["validationErrors"] == [
        {"path": "/children/0/children/0/label", "message": "3 is not of type 'string'"}
    ]
    response = await service.client.post("/rest/products", json={**VALID, "legacy": [0]})  # draft 4: exclusive
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "LEGACY_INVALID"
    response = await service.client.post(
        "/rest/products", json={**VALID, "tree": tree["children"][0] | {"children": []}, "legacy": [1]}
    )
    assert response.status_code == 201, response.text


async def test_openapi_types_each_column_by_its_schema(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS, mode="dev") as service:
        document = (await service.client.get("/openapi.json")).json()
    validate(document)
    schemas = document["components"]["schemas"]
    for name in ("Product", "ProductCreate"):
        properties = schemas[name]["properties"]
        assert properties["details"]["required"] == ["sku"]
        assert properties["details"]["additionalProperties"] is False
        # nullable columns admit null; a domain's schema is its component; a self-reference makes one
        assert properties["tags"]["type"] == ["array", "null"]
        assert {"$ref": "#/components/schemas/Json.Settings"} in properties["settings"]["anyOf"]
        assert {"$ref": "#/components/schemas/Json.products.tree"} in properties["tree"]["anyOf"]
        # draft 4 in 2020-12's words
        assert properties["legacy"]["prefixItems"] == [{"type": "integer", "exclusiveMinimum": 0}]
        assert properties["legacy"]["items"] is False and "$schema" not in properties["legacy"]
        assert properties["extra"] == {"description": "Any JSON value."}  # a CHECK that is not a schema: any JSON
    assert schemas["Json.Settings"]["properties"]["theme"] == {"enum": ["dark", "light"]}
    tree = schemas["Json.products.tree"]["properties"]["children"]["items"]
    assert tree == {"$ref": "#/components/schemas/Json.products.tree"}


async def test_an_import_line_its_schema_rejects_names_its_line_and_imports_nothing(service, database_url):
    before = count(database_url)
    lines = [VALID, VALID, {**VALID, "details": {"sku": "no"}}]
    body = "\n".join(json.dumps(line) for line in lines) + "\n"
    response = await service.client.post("/import/Product", content=body)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert (problem["code"], problem["line"]) == ("DETAILS_INVALID", 3)
    assert problem["validationErrors"] == [{"path": "/sku", "message": "'no' does not match '^[A-Z]+-[0-9]+$'"}]
    assert count(database_url) == before


async def test_the_active_integrations_are_logged_at_startup(tmp_path, database_url, caplog):
    caplog.set_level("INFO", logger="svc")
    for switch, expected in (("auto", "pg_jsonschema (6 JSON Schema columns)"), ("off", "none")):
        caplog.clear()
        settings = {**SETTINGS, "extensions": {"integrations": {"pg_jsonschema": switch}}}
        async with running_service(tmp_path / switch, database_url, settings):
            pass
        logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("extension integrations")]
        assert logged == [f"extension integrations active: {expected}"]
