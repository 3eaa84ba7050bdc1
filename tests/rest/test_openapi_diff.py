"""The OpenAPI pinning diff (SPEC "Versioning": added (+), gone (-) and changed (~) items as JSON Pointers; "the
OpenAPI comparison ignores formatting and key order")."""

import json

import yaml

from svc.rest import diff_openapi, openapi_json, openapi_yaml

PINNED = {
    "openapi": "3.1.0",
    "info": {"title": "svc REST API", "version": "1.2.0"},
    "paths": {
        "/rest/films": {"get": {"operationId": "listFilms", "responses": {"200": {"description": "Rows."}}}},
        "/rest/films/{filmId}": {"get": {"operationId": "getFilm"}},
    },
    "components": {
        "schemas": {
            "Film": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "rating": {"type": ["string", "null"]}},
                "required": ["title"],
            },
            "a~b/c": {"type": "string"},
        }
    },
}


def changed(document, edit):
    copy = json.loads(json.dumps(document))
    edit(copy)
    return copy


def test_the_same_document_has_no_differences():
    assert diff_openapi(PINNED, json.loads(json.dumps(PINNED))) == []


def test_key_order_and_formatting_do_not_count():
    reordered = json.loads(json.dumps(PINNED, sort_keys=True))
    assert list(reordered) != list(PINNED)
    assert diff_openapi(PINNED, reordered) == []
    # A YAML rendering, and a JSON one indented otherwise, read back as the same document.
    assert diff_openapi(yaml.safe_load(openapi_yaml(PINNED)), PINNED) == []
    assert diff_openapi(json.loads(json.dumps(PINNED, indent=7)), json.loads(openapi_json(PINNED))) == []
    # YAML may write a status without quotes: a number key is the same member.
    unquoted = yaml.safe_load(openapi_yaml(PINNED).replace("'200':", "200:"))
    assert 200 in unquoted["paths"]["/rest/films"]["get"]["responses"]
    assert diff_openapi(unquoted, PINNED) == []


def test_added_gone_and_changed_members_are_json_pointers():
    def edit(doc):
        doc["paths"]["/rest/films/search"] = {"post": {"operationId": "searchFilms"}}
        del doc["paths"]["/rest/films/{filmId}"]
        doc["components"]["schemas"]["Film"]["properties"]["title"]["type"] = "integer"
        doc["components"]["schemas"]["Film"]["properties"]["year"] = {"type": "integer"}
        doc["info"]["version"] = "1.3.0"

    assert diff_openapi(PINNED, changed(PINNED, edit)) == [
        "~ /components/schemas/Film/properties/title/type",
        "+ /components/schemas/Film/properties/year",
        "~ /info/version",
        "+ /paths/~1rest~1films~1search",
        "- /paths/~1rest~1films~1{filmId}",
    ]


def test_pointers_escape_tilde_and_slash():
    def edit(doc):
        doc["components"]["schemas"]["a~b/c"]["type"] = "number"

    assert diff_openapi(PINNED, changed(PINNED, edit)) == ["~ /components/schemas/a~0b~1c/type"]


def test_lists_compare_item_by_item_or_whole_when_their_length_changed():
    def retype(doc):
        doc["components"]["schemas"]["Film"]["properties"]["rating"]["type"] = ["number", "null"]

    def require(doc):
        doc["components"]["schemas"]["Film"]["required"].append("rating")

    assert diff_openapi(PINNED, changed(PINNED, retype)) == ["~ /components/schemas/Film/properties/rating/type/0"]
    assert diff_openapi(PINNED, changed(PINNED, require)) == ["~ /components/schemas/Film/required"]


def test_a_boolean_is_not_a_number_but_one_is_one_point_zero():
    assert diff_openapi({"minimum": 1}, {"minimum": 1.0}) == []
    assert diff_openapi({"x": 1}, {"x": True}) == ["~ /x"]
    assert diff_openapi({"x": {}}, {"x": []}) == ["~ /x"]


def test_webhooks_added_gone_and_changed():
    """Events configured after the pin add `/webhooks` as one item; then each webhook is named by its key (a
    `<table>.<operation>` name, dots and all) and its members as anywhere else."""
    hook = {
        "post": {
            "operationId": "filmsInsert",
            "requestBody": {"content": {"application/json": {"schema": {"properties": {"op": {"const": "insert"}}}}}},
            "responses": {"2XX": {"description": "Delivered."}},
        }
    }
    with_hooks = changed(PINNED, lambda doc: doc.update(webhooks={"films.insert": hook}))
    assert diff_openapi(PINNED, with_hooks) == ["+ /webhooks"]
    assert diff_openapi(with_hooks, PINNED) == ["- /webhooks"]

    def edit(doc):
        doc["webhooks"]["films.delete"] = doc["webhooks"].pop("films.insert")

    assert diff_openapi(with_hooks, changed(with_hooks, edit)) == [
        "+ /webhooks/films.delete",
        "- /webhooks/films.insert",
    ]

    def retype(doc):
        doc["webhooks"]["films.insert"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {}

    assert diff_openapi(with_hooks, changed(with_hooks, retype)) == [
        "- /webhooks/films.insert/post/requestBody/content/application~1json/schema/properties"
    ]
