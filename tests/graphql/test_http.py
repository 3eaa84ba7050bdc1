"""`/graphql` over HTTP (SPEC "Endpoints" -> service-level, "GraphQL behaviour"): POST with a JSON body, GET with URL
parameters (queries only: a mutation over GET is 405), typed answers to malformed requests, `graphql.enabled: false`
is 404, the SDL over HTTP when `graphql.sdl` is on, and introspection only when `graphql.introspection` is on."""

import pytest

from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def client(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        yield service.client


async def test_get_with_url_parameters(client):
    response = await client.get(
        "/graphql",
        params={
            "query": "query Q($id: Int!) { book(rowId: $id) { title } }",
            "variables": '{"id": 3}',
            "operationName": "Q",
        },
    )
    assert (response.status_code, response.json()) == (200, {"data": {"book": {"title": "Kindred"}}})
    assert response.headers["content-type"] == "application/json"


async def test_a_mutation_over_get_is_405(client):
    response = await client.get(
        "/graphql", params={"query": 'mutation { createShelf(input: {rowId: 9, label: "x"}) { shelf { label } } }'}
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["errors"][0]["extensions"]["code"] == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 400, "BAD_USER_INPUT"),
        ({"content": b"[1, 2]", "headers": {"content-type": "application/json"}}, 400, "BAD_USER_INPUT"),
        (
            {"content": b"query=x", "headers": {"content-type": "application/x-www-form-urlencoded"}},
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        ({"json": {"query": "{ books { rowId } }", "extra": 1}}, 400, "BAD_USER_INPUT"),
        ({"json": {"query": 5}}, 400, "BAD_USER_INPUT"),
        ({"json": {"query": "{ book(rowId: 1) { title } }", "variables": [1]}}, 400, "BAD_USER_INPUT"),
        ({"json": {}}, 400, "BAD_USER_INPUT"),
        ({"json": {"query": "query A { __typename } query B { __typename }"}}, 400, "BAD_USER_INPUT"),
        ({"json": {"query": "query A { __typename }", "operationName": "B"}}, 400, "BAD_USER_INPUT"),
        ({"json": {"query": "{ books { nope } }"}}, 400, "GRAPHQL_VALIDATION_FAILED"),
        ({"json": {"query": "{ books { "}}, 400, "GRAPHQL_PARSE_FAILED"),
        # A validation message quoting the words of a syntax error is still a validation failure.
        ({"json": {"query": '{ books(first: "Syntax Error") { title } }'}}, 400, "GRAPHQL_VALIDATION_FAILED"),
        (
            {"json": {"query": "fragment A on Book { ...B } fragment B on Book { ...A } { books { ...A } }"}},
            400,
            "GRAPHQL_VALIDATION_FAILED",
        ),
    ],
)
async def test_malformed_requests(client, kwargs, status, code):
    response = await client.post("/graphql", **kwargs)
    assert response.status_code == status
    body = response.json()
    code_found = body["errors"][0]["extensions"]["code"] if "errors" in body else body["code"]
    assert code_found == code


async def test_several_operations_with_an_operation_name(client):
    response = await client.post(
        "/graphql",
        json={"query": "query A { a: add(a: 1, b: 1) } query B { b: add(a: 2, b: 2) }", "operationName": "B"},
    )
    assert response.json() == {"data": {"b": 4}}


async def test_the_body_limit(tmp_path, database_url):
    async with running_service(tmp_path, database_url, {**SCHEMAS, "limits": {"request_body_bytes": 100}}) as service:
        response = await service.client.post("/graphql", json={"query": "{ books { rowId title } }" + " " * 100})
    assert response.status_code == 413
    # Refused before GraphQL runs, and still answered as a GraphQL response.
    assert response.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"


async def test_graphql_disabled_is_404(tmp_path, database_url):
    async with running_service(tmp_path, database_url, {**SCHEMAS, "graphql": {"enabled": False}}) as service:
        response = await service.client.post("/graphql", json={"query": "{ __typename }"})
    assert response.status_code == 404


async def test_introspection_is_off_in_prod_and_on_in_dev(tmp_path, database_url):
    query = {"query": "{ __schema { queryType { name } } }"}
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        response = await service.client.post("/graphql", json=query)
        assert response.status_code == 400
        assert response.json()["errors"][0]["extensions"]["code"] == "INTROSPECTION_DISABLED"
        plain = await service.client.post("/graphql", json={"query": "{ __typename }"})
        assert plain.json() == {"data": {"__typename": "Query"}}
        assert (await service.client.get("/schema.graphql")).status_code == 404
    async with running_service(
        tmp_path / "dev", database_url, {**SCHEMAS, "export": {"pin": "off"}}, mode="dev"
    ) as service:
        response = await service.client.post(
            "/graphql",
            json={
                "query": '{ __schema { queryType { name } } __type(name: "Book") { name } book(rowId: 1) { title } }'
            },
        )
        assert response.json() == {
            "data": {
                "__schema": {"queryType": {"name": "Query"}},
                "__type": {"name": "Book"},
                "book": {"title": "A Wizard of Earthsea"},
            }
        }
        sdl = await service.client.get("/schema.graphql")
        assert sdl.status_code == 200 and sdl.headers["content-type"] == "text/plain; charset=utf-8"
        assert "type Book implements Node" in sdl.text
