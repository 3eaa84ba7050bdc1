"""Several schemas under /rest (SPEC "REST API" -> several schemas, reserved words): `/rest/{resource}` is the default
schema's resource, else the same-named one elsewhere; each schema with resources or functions has `/rest/{schema}/...`
where another schema's resource is 404; an unknown schema is 404; a table named like a schema is reached at the
schema path (with a startup warning); a schema or table named with a reserved word is not served; `Link`, `Location`
and the error `instance` keep the path used."""

import logging

import pytest

from svc.plan import encode_global_id
from tests.support.rest_reads import headers, links, problem, rest_client

DATABASE_FIXTURES = ["model_schemas.sql", "rest_schemas.sql"]
SETTINGS = {
    "database": {"schemas": ["app", "auth", "search"]},
    "functions": {"auth.version": {"field_name": "authVersion"}},
}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


def without_versions(rows):
    return [{k: v for k, v in row.items() if k != "rowVersion"} for row in rows]


async def test_the_index_gives_each_resource_its_canonical_path(rest):
    response = await rest.get("/rest")
    assert response.json() == {
        "resources": [
            {"name": "audit_log", "schema": "app", "type": "AppAuditLog", "path": "/rest/audit_log"},
            {"name": "auth", "schema": "app", "type": "Auth", "path": "/rest/app/auth"},  # /rest/auth is a schema
            {"name": "page_infos", "schema": "app", "type": "AppPageInfo", "path": "/rest/page_infos"},
            {"name": "post_filters", "schema": "app", "type": "AppPostFilter", "path": "/rest/post_filters"},
            {"name": "posts", "schema": "app", "type": "Post", "path": "/rest/posts"},
            {"name": "audit_log", "schema": "auth", "type": "AuthAuditLog", "path": "/rest/auth/audit_log"},
            {"name": "sessions", "schema": "auth", "type": "Session", "path": "/rest/sessions"},
        ],
        "functions": [
            {"name": "version", "schema": "app", "path": "/rest/rpc/version", "mutation": False},
            {"name": "session_count", "schema": "auth", "path": "/rest/rpc/session_count", "mutation": False},
            {"name": "version", "schema": "auth", "path": "/rest/auth/rpc/version", "mutation": False},
        ],
        "openapi": None,
    }


async def test_a_schema_path_lists_that_schemas_resources(rest):
    response = await rest.get("/rest/auth")
    assert response.json() == {
        "resources": [
            {"name": "audit_log", "schema": "auth", "type": "AuthAuditLog", "path": "/rest/auth/audit_log"},
            {"name": "sessions", "schema": "auth", "type": "Session", "path": "/rest/sessions"},
        ],
        "functions": [
            {"name": "session_count", "schema": "auth", "path": "/rest/rpc/session_count", "mutation": False},
            {"name": "version", "schema": "auth", "path": "/rest/auth/rpc/version", "mutation": False},
        ],
        "openapi": None,
    }


@pytest.mark.parametrize(
    ("path", "rows"),
    [
        ("/rest/audit_log", [{"id": 1, "message": "app one"}, {"id": 2, "message": "app two"}]),  # default first
        ("/rest/app/audit_log", [{"id": 1, "message": "app one"}, {"id": 2, "message": "app two"}]),
        ("/rest/auth/audit_log", [{"id": 1, "login": "auth one"}]),
        ("/rest/sessions", [{"id": 1, "startedAt": "2024-01-01T00:00:00+00:00"}]),  # only in auth: the shortcut
        ("/rest/auth/sessions", [{"id": 1, "startedAt": "2024-01-01T00:00:00+00:00"}]),
        ("/rest/app/auth", [{"id": 1, "provider": "github"}]),  # a table named like a schema
    ],
)
async def test_shortcuts_and_schema_paths(rest, path, rows):
    response = await rest.get(path)
    assert response.status_code == 200
    assert without_versions(response.json()) == rows


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/rest/rpc/version", "app"),
        ("/rest/app/rpc/version", "app"),
        ("/rest/auth/rpc/version", "auth"),
        ("/rest/rpc/session_count", "1"),
        ("/rest/auth/rpc/session_count", "1"),
    ],
)
async def test_functions_by_shortcut_and_schema_path(rest, path, value):
    response = await rest.get(path)
    assert (response.status_code, response.json()) == (200, value)


@pytest.mark.parametrize(
    ("path", "detail"),
    [
        ("/rest/app/sessions", "no resource 'sessions' at /rest/app/sessions"),  # another schema's resource
        ("/rest/auth/posts", "no resource 'posts' at /rest/auth/posts"),
        ("/rest/app/rpc/session_count", "no function 'session_count' at /rest/app/rpc/session_count"),
        ("/rest/nope/sessions", "no resource 'nope' at /rest/nope/sessions"),  # unknown schema
        ("/rest/public/posts", "no resource 'public' at /rest/public/posts"),  # a schema not configured
        ("/rest/auth/auth", "no resource 'auth' at /rest/auth/auth"),
    ],
)
async def test_another_schemas_resource_and_an_unknown_schema_are_404(rest, path, detail):
    response = await rest.get(path)
    assert response.status_code == 404
    assert problem(response) == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": detail,
        "instance": path,
        "code": "NOT_FOUND",
    }


@pytest.mark.parametrize("path", ["/rest/things", "/rest/search/things", "/rest/node", "/rest/app/node"])
async def test_reserved_words_name_no_schema_and_no_table(rest, path):
    """The schema `search` and the table `app.node` exist and are exposed to GraphQL, not to REST."""
    response = await rest.get(path)
    assert response.status_code == 404
    assert problem(response)["code"] == "NOT_FOUND"


async def test_startup_warns_of_a_table_named_like_a_schema_and_of_reserved_names(tmp_path, database_url, caplog):
    with caplog.at_level(logging.WARNING):
        async with rest_client(tmp_path, database_url, SETTINGS):
            pass
    messages = [record.getMessage() for record in caplog.records]
    assert "table app.auth is reached only at /rest/app/auth: /rest/auth is the path of schema auth" in messages
    reserved = "is not served by REST: {!r} is a reserved path word (rpc, search, node)"
    assert f"table app.node {reserved.format('node')}" in messages
    assert f"table search.things {reserved.format('search')}" in messages


async def test_links_locations_and_instances_keep_the_path_used(rest):
    page = await rest.get("/rest/app/audit_log", params={"first": "1", "fields": "id"})
    assert page.json() == [{"id": 1}]
    assert links(page)["next"].startswith("/rest/app/audit_log?fields=id&first=1&after=")
    assert (await rest.get(links(page)["next"])).json() == [{"id": 2}]
    shortcut = await rest.get("/rest/audit_log", params={"first": "1", "fields": "id"})
    assert links(shortcut)["next"].startswith("/rest/audit_log?fields=id&first=1&after=")
    error = await rest.get("/rest/auth/audit_log", params={"first": "x"})
    assert problem(error)["instance"] == "/rest/auth/audit_log"


async def test_global_ids_lead_to_each_schemas_row(rest):
    app = await rest.get(f"/rest/node/{encode_global_id('AppAuditLog', 2)}")
    auth = await rest.get(f"/rest/node/{encode_global_id('AuthAuditLog', 1)}")
    assert (app.status_code, headers(app, "location")) == (303, {"location": "/rest/audit_log/2"})
    assert (auth.status_code, headers(auth, "location")) == (303, {"location": "/rest/auth/audit_log/1"})
    row = await rest.get(auth.headers["location"], params={"fields": "login"})
    assert row.json() == {"login": "auth one"}
