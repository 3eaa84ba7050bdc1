"""The OpenAPI document's webhooks (SPEC "Events" -> "Change events and schedules": "A table with
`entities.<table>.events` ... gets one OpenAPI webhook per change named `<table>.<operation>`"; "Other fixed shapes":
the payload `{id, createdAt, table, op, old, new}`, `old` null for an insert, `new` null for a delete, `old`/`new` of
the table's row schema): one webhook per configured operation, signed per Standard Webhooks, its row the very schema
REST rows have (a real row the REST API answers matches it), none at all without events, and per role under `rbac`
only for the tables the role sees."""

import base64
import json
from functools import partial
from typing import Any

import attrs
import pytest
import trio
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from svc.model import prune_model
from svc.rest import RestIndex, build_openapi, openapi_json, openapi_yaml
from tests.support.model import read_catalog_and_model, read_model
from tests.support.postgres import fresh_database
from tests.support.rest import rest_service
from tests.support.service import configure

DATABASE_FIXTURES = ["reads.sql"]
VERSION = "1.2.0"
ENVIRON = {"HOOK_SECRET": "whsec_" + base64.b64encode(b"0123456789abcdef").decode()}
TARGET = {"targets": {"default": {"url": "http://127.0.0.1:9/hook", "secret_env": "HOOK_SECRET"}}}
#: books has a BigInt, a Decimal, an enum, a range and JSON columns; authors only some operations.
SETTINGS = {
    "events": TARGET,
    "entities": {
        "books": {"events": {"description": "Books as the catalogue changes."}},
        "authors": {"events": {"operations": ["delete", "insert"]}},
    },
}
HEADERS = [{"$ref": f"#/components/parameters/{name}"} for name in
           ("WebhookId", "WebhookTimestamp", "WebhookSignature")]  # fmt: skip
BOOK = {"$ref": "#/components/schemas/Book"}


@pytest.fixture(scope="module")
def models(database_url, tmp_path_factory):
    """(config, model) with and without events, read once (a Trio run of its own, as in test_openapi.py)."""
    read = partial(read_model, database_url, environ=ENVIRON)
    return {
        "events": trio.run(partial(read, tmp_path_factory.mktemp("events"), SETTINGS)),
        "none": trio.run(partial(read, tmp_path_factory.mktemp("none"))),
    }


def build(config, model) -> dict[str, Any]:
    return build_openapi(model, RestIndex(model, config.database.schemas), config, version=VERSION)


@pytest.fixture(scope="module")
def doc(models):
    return build(*models["events"])


def request_schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    return document["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]["schema"]


def validator(document: dict[str, Any], name: str) -> Draft202012Validator:
    """A validator of the webhook's request body, its `$ref`s resolved within the document."""
    registry = Registry().with_resource("urn:openapi", Resource.from_contents(document, DRAFT202012))
    pointer = f"urn:openapi#/webhooks/{name}/post/requestBody/content/application~1json/schema"
    return Draft202012Validator(
        {"$ref": pointer}, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


# --- the webhooks --------------------------------------------------------------------------------------------------


def test_each_configured_operation_is_a_webhook_named_table_dot_operation(doc):
    # Tables in the model's order, operations insert, update, delete whatever order the configuration gave.
    assert list(doc["webhooks"]) == ["authors.insert", "authors.delete", "books.insert", "books.update", "books.delete"]
    validate(doc)
    assert json.loads(openapi_json(doc)) == doc
    assert yaml.safe_load(openapi_yaml(doc)) == doc


def test_a_webhook_is_a_signed_post_tagged_with_its_resource(doc):
    post = doc["webhooks"]["books.update"]["post"]
    assert list(doc["webhooks"]["books.update"]) == ["post"]
    assert (post["operationId"], post["tags"], post["summary"]) == (
        "booksUpdate",
        ["books"],
        "A row of `books` was updated",
    )
    assert post["description"].startswith("Books as the catalogue changes.\n\nSent to the table's webhook target")
    assert doc["webhooks"]["authors.insert"]["post"]["description"].startswith("Sent to the table's webhook target")
    # Signed, not authenticated with our bearer scheme: the document-wide requirement does not apply.
    assert post["parameters"] == HEADERS and post["security"] == []
    parameters = doc["components"]["parameters"]
    assert [
        (p["name"], p["in"], p["required"]) for p in (parameters[h["$ref"].rsplit("/", 1)[1]] for h in HEADERS)
    ] == [
        ("webhook-id", "header", True),
        ("webhook-timestamp", "header", True),
        ("webhook-signature", "header", True),
    ]
    assert parameters["WebhookTimestamp"]["schema"] == {"type": "integer", "minimum": 0}
    assert post["responses"] == {
        "2XX": {"description": "Delivered."},
        "410": {"description": "Gone: delivery to this target stops."},
        "default": {
            "description": "Retried with backoff, then dead-lettered (also when no answer comes within the target's"
            " timeout)."
        },
    }
    ids = [op["operationId"] for item in [*doc["paths"].values(), *doc["webhooks"].values()]
           for method, op in item.items() if method != "parameters"]  # fmt: skip
    assert len(ids) == len(set(ids))
    assert "books" in {tag["name"] for tag in doc["tags"]}


def test_the_payload_is_the_closed_envelope_with_old_and_new_per_operation(doc):
    schema = request_schema(doc, "books.insert")
    assert doc["webhooks"]["books.insert"]["post"]["requestBody"]["required"] is True
    assert schema["required"] == ["id", "createdAt", "table", "op", "old", "new"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert (properties["id"]["format"], properties["createdAt"]["format"]) == ("uuid", "date-time")
    assert (properties["table"]["const"], properties["op"]["const"]) == ("books", "insert")

    def sides(name):
        properties = request_schema(doc, name)["properties"]
        return [{k: v for k, v in properties[side].items() if k != "description"} for side in ("old", "new")]

    assert sides("books.insert") == [{"type": "null"}, BOOK]
    assert sides("books.update") == [BOOK, BOOK]
    assert sides("books.delete") == [BOOK, {"type": "null"}]
    assert sides("authors.delete") == [{"$ref": "#/components/schemas/Author"}, {"type": "null"}]


def test_old_and_new_refer_to_the_row_schema_rest_answers_with(doc, models):
    """Shared, not copied: the `$ref` is the one `GET /rest/books/{id}` answers, and the schema is the REST row's,
    the same as in a document without events."""
    got = doc["paths"]["/rest/books/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert request_schema(doc, "books.update")["properties"]["new"]["$ref"] == got["$ref"]
    without = build(*models["none"])
    assert doc["components"]["schemas"] == without["components"]["schemas"]
    assert doc["paths"] == without["paths"]  # REST operations keep their operationIds


def test_without_events_there_is_no_webhooks_member(models):
    doc = build(*models["none"])
    assert "webhooks" not in doc
    assert not {"WebhookId", "WebhookTimestamp", "WebhookSignature"} & set(doc["components"]["parameters"])
    # Nor when the tables that have them are not in the model.
    config, model = models["events"]
    bare = attrs.evolve(model, entities=tuple(attrs.evolve(e, events=None) for e in model.entities))
    assert build(config, bare) == doc


# --- real rows against the payload schema --------------------------------------------------------------------------


async def test_rows_the_rest_api_answers_make_valid_payloads(doc, database_url, tmp_path):
    """A POST, a PATCH and a DELETE answer the rows an insert, an update and a delete event carry."""
    async with rest_service(tmp_path, database_url, SETTINGS, environ=ENVIRON) as client:
        created = await client.post("/rest/books", json={"id": 900, "authorId": 1, "title": "Tehanu",
                                                         "genre": "FICTION", "copiesSold": "9007199254740993"})  # fmt: skip
        assert created.status_code == 201, created.text
        before = (await client.get("/rest/books/1")).json()
        updated = await client.patch("/rest/books/1", json={"pages": 206})
        assert updated.status_code == 200, updated.text
        deleted = await client.delete("/rest/books/900")
        assert deleted.status_code == 200, deleted.text
    assert before["copiesSold"] == "9007199254740993" and before["genre"] == "FICTION"
    event = {"id": "0b4c3e8e-3f1a-4d1e-9c56-8f0e5b7f2a10", "createdAt": "2026-01-01T00:00:00Z", "table": "books"}
    payloads = {
        "books.insert": {**event, "op": "insert", "old": None, "new": created.json()},
        "books.update": {**event, "op": "update", "old": before, "new": updated.json()},
        "books.delete": {**event, "op": "delete", "old": deleted.json(), "new": None},
    }
    for name, payload in payloads.items():
        assert list(validator(doc, name).iter_errors(payload)) == [], name

    def refused(name, payload):
        return [error.message for error in validator(doc, name).iter_errors(payload)]

    insert = payloads["books.insert"]
    assert refused("books.insert", {**insert, "old": before})
    assert refused("books.delete", insert)  # op and the null side are those of another operation
    assert refused("books.insert", {**insert, "extra": 1})
    assert refused("books.insert", {**insert, "id": "not a uuid"})
    assert refused("books.insert", {**insert, "new": {**insert["new"], "copiesSold": 9007199254740993}})
    assert refused("books.insert", {**insert, "new": {**insert["new"], "genre": "fiction"}})
    assert refused("books.insert", {key: value for key, value in insert.items() if key != "createdAt"})


# --- other schemas, reserved names and roles -----------------------------------------------------------------------


def test_other_schemas_tables_are_named_with_their_schema(pg_server, tmp_path):
    settings = {
        "database": {"schemas": ["app", "auth"]},
        "events": TARGET,
        "entities": {"auth.audit_log": {"events": {"operations": ["insert"]}}, "node": {"events": {}}},
    }
    with fresh_database(pg_server, "openapi_webhooks_schemas", ["model_schemas.sql"]) as url:
        config, model = trio.run(partial(read_model, url, tmp_path, settings, environ=ENVIRON))
    doc = build(config, model)
    validate(doc)
    assert list(doc["webhooks"]) == ["node.insert", "node.update", "node.delete", "auth.audit_log.insert"]
    audit = doc["webhooks"]["auth.audit_log.insert"]["post"]
    assert (audit["operationId"], audit["tags"]) == ("authAuditLogInsert", ["auth/audit_log"])
    assert request_schema(doc, "auth.audit_log.insert")["properties"]["table"]["const"] == "auth.audit_log"
    assert request_schema(doc, "auth.audit_log.insert")["properties"]["new"]["$ref"] == (
        "#/components/schemas/AuthAuditLog"
    )
    # `node` is a reserved word: the table is not served, but its changes are still sent and described.
    assert not [path for path in doc["paths"] if path.startswith("/rest/node/") and path != "/rest/node/{id}"]
    node = doc["webhooks"]["node.update"]["post"]
    tags = {tag["name"]: tag["description"] for tag in doc["tags"]}
    assert node["tags"] == ["app.node"] and "REST does not serve" in tags["app.node"]
    assert tags["node"] == "Rows by their global ID."  # not the tag of `/rest/node/{id}`
    assert request_schema(doc, "node.update")["properties"]["old"]["$ref"] == "#/components/schemas/AppNode"
    assert "label" in doc["components"]["schemas"]["AppNode"]["properties"]


def test_a_role_s_document_has_the_webhooks_of_the_tables_it_sees(pg_server, tmp_path):
    """rbac: the clerk sees employees (not their salary) and not secrets; the whole document has both."""
    settings = {
        "database": {"schemas": ["app"]},
        "events": TARGET,
        "entities": {"employees": {"events": {}}, "secrets": {"events": {"operations": ["insert"]}}},
    }
    with fresh_database(pg_server, "openapi_webhooks_rbac", ["rbac.sql"]) as url:
        catalog, model = read_catalog_and_model(url, tmp_path, settings, roles=["svc_rbac_clerk"], environ=ENVIRON)
    config = configure(tmp_path, settings, database_url=url, environ=ENVIRON).config
    whole = build(config, model)
    assert list(whole["webhooks"]) == ["employees.insert", "employees.update", "employees.delete", "secrets.insert"]
    clerk = build(config, prune_model(model, catalog, "svc_rbac_clerk"))
    validate(clerk)
    assert list(clerk["webhooks"]) == ["employees.insert", "employees.update", "employees.delete"]
    assert "Secret" not in clerk["components"]["schemas"]
    employee = request_schema(clerk, "employees.insert")["properties"]["new"]["$ref"].rsplit("/", 1)[1]
    assert "salary" in whole["components"]["schemas"][employee]["properties"]
    assert "salary" not in clerk["components"]["schemas"][employee]["properties"]
