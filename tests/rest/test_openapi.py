"""The OpenAPI 3.1 document of the REST API (SPEC "REST API", "Errors" -> REST, "Scalars and value mapping", "Limits",
"Authentication"): valid for several fixture schemas, every operation named and tagged, only the operations an entity
offers, rows and write bodies shaped as the spec says, the 429 and `RateLimit-*` headers only with rate limits on,
bearer security optional or required per `auth.anonymous`, and equal to its reviewed golden copy."""

import json
import re
from functools import partial
from pathlib import Path

import attrs
import pytest
import trio
import yaml
from openapi_spec_validator import validate

from svc.rest import RestIndex, build_openapi, openapi_json, openapi_yaml
from tests.support.golden import assert_golden
from tests.support.model import read_model
from tests.support.postgres import PAGILA, execute, fresh_database

SNAPSHOTS = Path(__file__).parent / "snapshots"
VERSION = "1.2.0"
CASES = {
    "reads": (["reads.sql"], ["app_public"]),
    "writes": (["writes.sql"], ["app"]),
    "model_blog": (["model_blog.sql"], ["app_public"]),
    "model_schemas": (["model_schemas.sql"], ["app", "auth"]),
    "catalog_features": (["catalog_features.sql"], ["app_public", "app_private"]),
    "pagila": (PAGILA, ["public"]),
}
METHODS = ("get", "put", "post", "delete", "patch")
ROW_VERSION = {
    "type": ["string", "null"],
    "description": "The row's version: its `ETag` without quotes, for `If-Match`. Null in rows as they were"
    " (`previous`, deleted rows) and where the role may not read it.",
}
ERRORS = {
    "400": {"$ref": "#/components/responses/BadRequest"},
    "401": {"$ref": "#/components/responses/Unauthorized"},
    "403": {"$ref": "#/components/responses/Forbidden"},
    "503": {"$ref": "#/components/responses/ServiceUnavailable"},
}


@pytest.fixture(scope="module")
def models(pg_server, tmp_path_factory):
    """(config, model) of a case, read once per module (a Trio run of its own: Trio fixtures cannot outlive a test)."""
    read: dict[str, tuple] = {}

    def model_of(name: str):
        if name not in read:
            fixtures, schemas = CASES[name]
            with fresh_database(pg_server, f"openapi_{name}", fixtures) as url:
                settings = {"database": {"schemas": schemas}}
                read[name] = trio.run(partial(read_model, url, tmp_path_factory.mktemp(name), settings))
        return read[name]

    return model_of


def document(models, name: str, **changes):
    """The document of a case; `changes` evolve the configuration (`auth=...`, `limits=...`)."""
    config, model = models(name)
    config = attrs.evolve(config, **changes)
    return build_openapi(model, RestIndex(model, config.database.schemas), config, version=VERSION)


def operations(doc):
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


# --- every case ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_document_is_valid_openapi_3_1_and_renders_as_json_and_yaml(models, name):
    doc = document(models, name)
    validate(doc)
    assert (doc["openapi"], doc["info"]["version"], doc["servers"]) == ("3.1.0", VERSION, [{"url": "/"}])
    assert json.loads(openapi_json(doc)) == doc
    text = openapi_yaml(doc)
    assert yaml.safe_load(text) == doc
    assert "&id" not in text and "*id" not in text  # no YAML aliases


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_operation_has_a_unique_id_a_summary_a_tag_and_the_common_errors(models, name):
    doc = document(models, name)
    ids = [operation["operationId"] for _, _, operation in operations(doc)]
    assert len(ids) == len(set(ids))
    tags = {tag["name"] for tag in doc["tags"]}
    for path, method, operation in operations(doc):
        assert operation["summary"], (path, method)
        assert len(operation["tags"]) == 1 and operation["tags"][0] in tags
        assert {status: operation["responses"][status] for status in ERRORS} == ERRORS
        assert "429" not in operation["responses"]


@pytest.mark.parametrize("name", ["model_schemas", "catalog_features"])
def test_paths_are_the_canonical_paths_of_the_index(models, name):
    config, model = models(name)
    index = RestIndex(model, config.database.schemas)
    doc = document(models, name)
    bases = {
        re.sub(r"/search(/[a-z-]+)?$", "", path.split("/{")[0]).removesuffix("/aggregate") for path in doc["paths"]
    } - {"/rest", "/rest/node", "/rest/search"}
    assert bases == {r.path for r in index.resources} | {f.path for f in index.functions}


def test_the_same_model_gives_the_same_document(models):
    assert openapi_json(document(models, "catalog_features")) == openapi_json(document(models, "catalog_features"))


def test_the_document_equals_its_reviewed_copy(models):
    assert_golden(SNAPSHOTS / "reads.openapi.yaml", openapi_yaml(document(models, "reads")))


# --- rows and bodies -----------------------------------------------------------------------------------------------


def test_a_row_has_every_column_under_its_rest_name_then_row_version(models):
    """SPEC "Scalars and value mapping": BigInt and Decimal strings, enums and ranges by reference, JSON any value,
    nullable columns admit null; dates and times are described strings (no `format: date-time`)."""
    book = document(models, "reads")["components"]["schemas"]["Book"]
    nullable_ref = lambda name: {"anyOf": [{"$ref": f"#/components/schemas/{name}"}, {"type": "null"}]}  # noqa: E731
    assert "required" not in book and "additionalProperties" not in book
    assert book["properties"] == {
        "id": {"type": "integer", "format": "int32"},
        "authorId": {"type": "integer", "format": "int32"},
        "title": {"type": "string"},
        "genre": nullable_ref("Genre"),
        "pages": {"type": ["integer", "null"], "format": "int32"},
        "price": {
            "type": ["string", "null"],
            "pattern": r"^(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|NaN|[-+]?Infinity)$",
            "description": "An arbitrary-precision decimal number, as a string.",
        },
        "rating": {"type": ["number", "null"], "format": "double"},
        "copiesSold": {
            "type": ["string", "null"],
            "pattern": "^[-+]?[0-9]+$",
            "description": "A 64-bit integer, as a string (JSON numbers lose precision past 2^53).",
        },
        "inPrint": {"type": "boolean"},
        "published": {
            "type": ["string", "null"],
            "description": "An ISO 8601 date (`2024-05-01`), or `infinity`/`-infinity`.",
        },
        "addedAt": {
            "type": ["string", "null"],
            "description": "An ISO 8601 timestamp with a UTC offset (`2024-05-01T12:00:00+00:00`), or"
            " `infinity`/`-infinity`.",
        },
        "opensAt": {
            "type": ["string", "null"],
            "description": "A time of day (`12:00:00`; with its UTC offset for `timetz`).",
        },
        "loanPeriod": {
            "type": ["string", "null"],
            "description": "A span of time as PostgreSQL writes it (`1 day 02:00:00`); ISO 8601 (`P1DT2H`) is read"
            " too.",
        },
        "isbn": {"type": ["string", "null"], "format": "uuid"},
        "tags": {"type": ["array", "null"], "items": {"type": ["string", "null"]}},
        "scores": {"type": ["array", "null"], "items": {"type": ["integer", "null"], "format": "int32"}},
        "available": nullable_ref("DateRange"),
        "details": {"description": "Any JSON value."},
        "rawDetails": {"description": "Any JSON value."},
        "rowVersion": ROW_VERSION,
    }


def test_enums_ranges_composites_and_bytea(models):
    schemas = document(models, "catalog_features")["components"]["schemas"]
    assert schemas["AgeRating"] == {"type": "string", "enum": ["ALL_AGES", "PG_13", "_16", "ADULTS_ONLY"]}
    assert schemas["PostalAddress"] == {
        "type": "object",
        "properties": {name: {"type": ["string", "null"]} for name in ("street", "city", "postcode", "country")},
        "description": "An address as printed on a parcel.",
    }
    assert schemas["Customer"]["properties"]["address"] == {
        "anyOf": [{"$ref": "#/components/schemas/PostalAddress"}, {"type": "null"}]
    }
    assert schemas["PriceRange"]["properties"] == {
        "start": {"anyOf": [{"$ref": "#/components/schemas/PriceRangeBound"}, {"type": "null"}]},
        "end": {"anyOf": [{"$ref": "#/components/schemas/PriceRangeBound"}, {"type": "null"}]},
    }
    assert schemas["PriceRangeBound"]["required"] == ["value", "inclusive"]
    # A multirange is a list of ranges; bytea is PostgreSQL's hex text in rows.
    assert schemas["Sale"]["properties"]["skippedDays"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/DateRange"},
    }
    assert schemas["Product"]["properties"]["thumbnail"] == {
        "type": ["string", "null"],
        "description": "Bytes, as PostgreSQL's hex text (`\\x` followed by two hex digits per byte).",
    }


def test_a_create_body_requires_what_has_no_default_and_no_relation_to_fill_it(models):
    schemas = document(models, "writes")["components"]["schemas"]
    customer = schemas["CustomerCreate"]
    assert customer["required"] == ["email", "name"]
    assert customer["additionalProperties"] is False
    assert customer["properties"]["email"] == {"type": "string", "maxLength": 40}
    assert list(customer["properties"]) == [
        "id", "email", "name", "nickname", "tier", "credit", "deleted", "addressesByCustomerId", "orders",
    ]  # fmt: skip
    # The reverse of the one-to-one `addresses.primary_for` takes no nested writes (as in GraphQL).
    # customer_id is NOT NULL but the to-one `customer` member can fill it.
    order = schemas["OrderCreate"]
    assert order["required"] == ["number"]
    assert order["properties"]["customer"] == {"$ref": "#/components/schemas/CustomerToOne"}
    assert schemas["CustomerToOne"]["properties"] == {
        "connect": {"$ref": "#/components/schemas/CustomerKey"},
        "create": {"$ref": "#/components/schemas/CustomerCreate"},
        "connectOrCreate": {"$ref": "#/components/schemas/CustomerConnectOrCreate"},
    }


def test_a_deprecated_table_has_deprecated_operations(models):
    doc = document(models, "model_blog")
    assert {op.get("deprecated") for path, _, op in operations(doc) if path.startswith("/rest/people")} == {True}
    assert not [op for path, _, op in operations(doc) if path.startswith("/rest/posts") and "deprecated" in op]


def test_generated_columns_are_not_written_and_an_update_needs_a_member(models):
    schemas = document(models, "model_blog")["components"]["schemas"]
    assert "id" not in schemas["PersonCreate"]["properties"]  # generated always as identity
    assert "id" in schemas["Person"]["properties"]
    update = schemas["PersonUpdate"]
    assert (update["minProperties"], update["additionalProperties"], "required" in update) == (1, False, False)


def test_the_problem_document(models):
    doc = document(models, "reads")
    problem = doc["components"]["schemas"]["Problem"]
    assert problem["required"] == ["code", "requestId"]
    assert list(problem["properties"]) == [
        "type", "title", "status", "detail", "instance", "code", "requestId", "fields", "field", "limit", "actual",
        "retryAfter", "validationErrors", "hint", "databaseDetail",
    ]  # fmt: skip
    assert doc["components"]["responses"]["Unauthorized"] == {
        "description": "A missing or invalid token.",
        "headers": {"WWW-Authenticate": {"$ref": "#/components/headers/WWW-Authenticate"}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


# --- which operations ----------------------------------------------------------------------------------------------


def test_a_table_has_every_operation(models):
    paths = document(models, "reads")["paths"]
    assert set(paths["/rest/books"]) == {"get", "post", "put", "patch", "delete"}
    assert set(paths["/rest/books/search"]) == {"post"}
    assert set(paths["/rest/books/{id}"]) == {"parameters", "get", "put", "patch", "delete"}
    assert paths["/rest/books/{id}"]["parameters"] == [
        {
            "name": "id",
            "in": "path",
            "required": True,
            "description": "The primary key (`id`), or the row's global ID.",
            "schema": {"type": "integer", "format": "int32"},
        }
    ]
    ids = {method: operation["operationId"] for method, operation in paths["/rest/books"].items()}
    assert ids == {"get": "listBooks", "post": "createBook", "put": "upsertBooks", "patch": "updateBooks",
                   "delete": "deleteBooks"}  # fmt: skip
    # A composite key: `{key}`, the values comma-separated.
    assert "/rest/book_shelves/{key}" in paths


def test_an_entity_without_a_key_has_no_row_paths(models):
    paths = document(models, "writes")["paths"]
    assert set(paths["/rest/notes"]) == {"get", "post"}  # no key: no collection update, delete or upsert
    rest = {"/rest/notes/search", "/rest/notes/aggregate"}
    assert not [path for path in paths if path.startswith("/rest/notes/") and path not in rest]
    # A materialized view with a unique index (lookups in GraphQL) but no primary key: no row path either.
    catalog = document(models, "catalog_features")
    assert not [path for path in catalog["paths"] if path.startswith("/rest/category_sales/{")]
    assert "rowVersion" not in catalog["components"]["schemas"]["CategorySale"]["properties"]


def test_a_view_without_writes_has_no_post(models):
    paths = document(models, "reads")["paths"]
    assert set(paths["/rest/fiction"]) == {"get"}
    assert set(paths["/rest/author_totals"]) == {"get"}
    assert paths["/rest/fiction/search"]["post"]["operationId"] == "searchFictions"


def test_a_volatile_function_has_only_post(models):
    paths = document(models, "writes")["paths"]
    assert set(paths["/rest/rpc/add_tag"]) == {"post"}
    post = paths["/rest/rpc/add_tag"]["post"]
    assert post["operationId"] == "addTag"
    assert post["requestBody"]["content"]["application/json"]["schema"] == {
        "type": "object",
        "properties": {
            "args": {
                "type": "object",
                "properties": {"wanted": {"type": ["string", "null"]}},
                "additionalProperties": False,
                "required": ["wanted"],
            }
        },
        "additionalProperties": False,
        "required": ["args"],
    }
    assert {"409", "422"} <= set(post["responses"])
    # A STABLE function: GET (arguments in the query string) and POST.
    stable = document(models, "reads")["paths"]["/rest/rpc/add"]
    assert (stable["get"]["operationId"], stable["post"]["operationId"]) == ("add", "addPost")
    assert stable["get"]["parameters"] == [
        {"name": name, "in": "query", "required": True, "schema": {"type": "integer", "format": "int32"}}
        for name in ("a", "b")
    ]


def test_function_results_by_return_kind(models):
    paths = document(models, "reads")["paths"]

    def result(name):
        return paths[f"/rest/rpc/{name}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]

    assert result("books_by_genre") == {"type": "array", "items": {"$ref": "#/components/schemas/Book"}}
    assert result("longest_book") == {"anyOf": [{"$ref": "#/components/schemas/Book"}, {"type": "null"}]}
    assert result("genre_counts") == {"type": "array", "items": {"$ref": "#/components/schemas/GenreCountsRecord"}}
    assert result("all_titles") == {"type": "array", "items": {"type": ["string", "null"]}}
    listed = [p.get("$ref", p.get("name")) for p in paths["/rest/rpc/books_by_genre"]["get"]["parameters"]]
    assert listed == ["wanted", *(f"#/components/parameters/{n}" for n in
                                  ("filter", "order", "first", "after", "fields", "include", "PreferCount"))]  # fmt: skip
    void = document(models, "catalog_features")["paths"]["/rest/rpc/touch_customer"]["post"]["responses"]
    # A VOLATILE function is a write: its answer carries the primary's WAL position for read-your-writes.
    assert void["204"] == {"description": "Done.", "headers": {"X-WAL-Position": header_ref("X-WAL-Position")}}
    stable = paths["/rest/rpc/books_by_genre"]["get"]["responses"]["200"]
    assert "headers" not in stable or "X-WAL-Position" not in stable["headers"]


def test_a_function_named_like_a_generated_operation_is_prefixed(models):
    paths = document(models, "catalog_features")["paths"]
    assert paths["/rest/products/search"]["post"]["operationId"] == "searchProducts"
    function = paths["/rest/rpc/search_products"]
    assert (function["get"]["operationId"], function["post"]["operationId"]) == (
        "rpcSearchProducts",
        "rpcSearchProductsPost",
    )


def test_a_bytea_column_has_its_own_path(models):
    paths = document(models, "catalog_features")["paths"]
    column = paths["/rest/products/{id}/thumbnail"]
    assert (column["get"]["operationId"], column["put"]["operationId"]) == (
        "getProductThumbnail",
        "updateProductThumbnail",
    )
    assert column["get"]["responses"]["200"]["content"] == {"*/*": {}}
    assert column["put"]["requestBody"] == {"required": True, "content": {"*/*": {}}}
    assert "/rest/staff/{staffId}/picture" in document(models, "pagila")["paths"]


def test_other_schemas_resources_are_listed_at_their_schema_path(models):
    doc = document(models, "model_schemas")
    assert {"/rest/audit_log", "/rest/auth/audit_log", "/rest/sessions"} <= set(doc["paths"])
    assert "/rest/app/audit_log" not in doc["paths"]  # served, but not listed
    assert "are served but not listed" in doc["info"]["description"]
    assert {"audit_log", "auth/audit_log"} <= {tag["name"] for tag in doc["tags"]}
    assert doc["paths"]["/rest/auth/audit_log"]["get"]["operationId"] == "listAuthAuditLogs"


def test_list_parameters_statuses_and_headers(models):
    listing = document(models, "reads")["paths"]["/rest/books"]["get"]
    assert [p["$ref"].rsplit("/", 1)[1] for p in listing["parameters"]] == [
        "filter", "order", "first", "after", "last", "before", "offset", "fields", "include", "cursors", "window",
        "partition", "running", "inner", "anti", "path", "args", "PreferCount", "Range",
    ]  # fmt: skip
    assert list(listing["responses"]) == ["200", "206", "400", "401", "403", "406", "416", "503"]
    ok = listing["responses"]["200"]
    assert list(ok["content"]) == ["application/json", "application/x-ndjson", "text/csv"]
    assert list(ok["headers"]) == [
        "Link", "Accept-Ranges", "Content-Range", "X-Total-Count", "X-Total-Count-Estimate", "Preference-Applied",
    ]  # fmt: skip
    filter_ = document(models, "reads")["components"]["parameters"]["filter"]
    assert (filter_["style"], filter_["explode"], filter_["schema"]) == (
        "deepObject",
        True,
        {"type": "object", "additionalProperties": True},
    )


def header_ref(name):
    return {"$ref": f"#/components/headers/{name}"}


def test_writes_answer_their_statuses(models):
    paths = document(models, "writes")["paths"]
    create = paths["/rest/customers"]["post"]["responses"]
    assert list(create) == ["201", "204", "400", "401", "403", "404", "409", "413", "415", "422", "503"]
    assert list(create["201"]["headers"]) == ["Location", "ETag", "X-WAL-Position"]
    assert "X-WAL-Position" not in paths["/rest/customers/{id}"]["get"]["responses"]["200"]["headers"]
    update = paths["/rest/customers/{id}"]["patch"]
    assert list(update["requestBody"]["content"]) == [
        "application/json", "application/merge-patch+json", "application/json-patch+json", "multipart/form-data",
    ]  # fmt: skip
    assert list(update["responses"]) == [
        "200", "204", "400", "401", "403", "404", "409", "412", "413", "415", "422", "503",
    ]  # fmt: skip
    read = paths["/rest/customers/{id}"]["get"]["responses"]
    assert (list(read["200"]["headers"]), list(read)) == (
        ["ETag"],
        ["200", "304", "400", "401", "403", "404", "503"],
    )


# --- configuration -------------------------------------------------------------------------------------------------


def test_rate_limits_add_429_and_the_rate_limit_headers_only_when_on(models):
    config, _ = models("reads")
    off = document(models, "reads")
    assert not [name for name in off["components"]["headers"] if name.startswith("RateLimit")]
    assert "TooManyRequests" not in off["components"]["responses"]

    limits = attrs.evolve(config.limits, rate_limit=attrs.evolve(config.limits.rate_limit, enabled=True))
    on = document(models, "reads", limits=limits)
    validate(on)
    rate_headers = {name: {"$ref": f"#/components/headers/{name}"} for name in
                    ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")}  # fmt: skip
    for path, method, operation in operations(on):
        responses = operation["responses"]
        assert responses["429"] == {"$ref": "#/components/responses/TooManyRequests"}, (path, method)
        for status, response in responses.items():
            if status.startswith("2"):
                assert rate_headers.items() <= response["headers"].items(), (path, method, status)
    assert list(on["components"]["responses"]["TooManyRequests"]["headers"]) == ["Retry-After", *rate_headers]


def test_bearer_security_is_optional_while_anonymous_access_is_on(models):
    config, _ = models("reads")
    doc = document(models, "reads")
    assert doc["security"] == [{"bearer": []}, {}]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    required = document(models, "reads", auth=attrs.evolve(config.auth, anonymous=False))
    assert required["security"] == [{"bearer": []}]


def test_a_name_a_graphql_type_takes_is_written_with_a_dot(pg_server, tmp_path):
    """`FilmCreate` and `Problem` are tables' types here: the REST API's own schemas step aside to `Film.Create` and
    `svc.Problem` (dots never occur in GraphQL names)."""
    with fresh_database(pg_server, "openapi_names", []) as url:
        execute(url, "create schema app_public")
        execute(url, "create table app_public.films (id integer primary key, title text not null)")
        execute(url, "create table app_public.film_creates (id integer primary key)")
        execute(url, "create table app_public.problems (id integer primary key)")
        config, model = trio.run(partial(read_model, url, tmp_path))
    doc = build_openapi(model, RestIndex(model, config.database.schemas), config, version=VERSION)
    validate(doc)
    schemas = doc["components"]["schemas"]
    assert {"Film", "Film.Create", "FilmCreate", "FilmCreateCreate", "Problem", "svc.Problem"} <= set(schemas)
    assert schemas["Film.Create"]["required"] == ["id", "title"]
    assert schemas["FilmCreate"]["properties"] == {
        "id": {"type": "integer", "format": "int32"},
        "rowVersion": ROW_VERSION,
    }
    assert doc["components"]["responses"]["NotFound"]["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/svc.Problem"
    }
