"""The federation v2 subgraph (SPEC "Federation and subscriptions", `graphql.federation.enabled`): the subgraph SDL
(`_service { sdl }`, `/subgraph.graphql`) links federation v2 and keys every readable type with a primary key,
`_entities` answers any number of representations of any types in ONE statement and in their order, a global ID
of another type is refused, and types whose reads are omitted are not entities."""

import base64

import pytest
import trio

from tests.support.node_clients import run_client, start_client
from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
FEDERATED = {"database": {"schemas": ["app_public"]}, "graphql": {"federation": {"enabled": True}}}

ENTITIES = """query($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Book { rowId title author { name } }
    ... on Author { name books(first: 1) { title } }
  }
}"""


def global_id(type_name: str, key: int) -> str:
    return base64.b64encode(f"{type_name}:{key}".encode()).decode()


async def statements(client) -> int:
    return (await client.get("/health")).json()["statements"]


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, FEDERATED) as running:
        yield running


async def test_the_subgraph_sdl_links_federation_and_keys_every_readable_type(service):
    response = await service.client.post("/graphql", json={"query": "{ _service { sdl __typename } }"})
    service_ = response.json()["data"]["_service"]
    assert service_["__typename"] == "_Service"
    sdl = service_["sdl"]
    assert sdl.startswith('extend schema @link(url: "https://specs.apollo.dev/federation/v2.3"')
    assert 'type Book implements Node @key(fields: "rowId") @key(fields: "id") {' in sdl
    assert "type PageInfo @shareable {" in sdl
    assert "_entities" not in sdl and "_Service" not in sdl
    served = await service.client.get("/subgraph.graphql")
    assert (served.status_code, served.text) == (200, sdl)
    assert served.headers["content-type"].startswith("text/plain")


async def test_entities_of_several_types_are_read_in_one_statement_in_their_order(service):
    representations = [
        {"__typename": "Book", "rowId": 3},
        {"__typename": "Author", "rowId": 1},
        {"__typename": "Book", "rowId": 999},  # no such row: null in its place
        {"__typename": "Book", "id": global_id("Book", 1)},
        {"__typename": "Book", "rowId": 3},  # asked twice: answered twice
    ]
    before = await statements(service.client)
    response = await service.client.post(
        "/graphql", json={"query": ENTITIES, "variables": {"representations": representations}}
    )
    assert await statements(service.client) - before == 1
    body = response.json()
    assert "errors" not in body, body
    entities = body["data"]["_entities"]
    assert [e and e["__typename"] for e in entities] == ["Book", "Author", None, "Book", "Book"]
    assert entities[0]["title"] == "Kindred" and entities[0]["rowId"] == 3
    assert entities[4] == entities[0]
    assert entities[3]["rowId"] == 1
    assert set(entities[1]) == {"__typename", "name", "books"}


@pytest.mark.parametrize(
    ("representation", "message"),
    [
        ({"__typename": "Book", "id": global_id("Author", 1)}, "a global ID of a Author where a Book key belongs"),
        ({"__typename": "Nope", "rowId": 1}, "'Nope' is not an entity of this subgraph"),
        ({"__typename": "Book"}, "needs its key fields or a global ID"),
        ({"__typename": "Book", "rowId": "x"}, ""),
    ],
)
async def test_a_representation_that_names_no_row_of_its_type_is_refused(service, representation, message):
    before = await statements(service.client)
    response = await service.client.post(
        "/graphql", json={"query": ENTITIES, "variables": {"representations": [representation]}}
    )
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert message in error["message"]
    assert error["path"] == ["_entities"]
    assert await statements(service.client) == before


async def test_without_federation_there_is_no_subgraph(tmp_path, database_url):
    async with running_service(tmp_path, database_url, {"database": {"schemas": ["app_public"]}}) as running:
        response = await running.client.post("/graphql", json={"query": "{ _service { sdl } }"})
        assert response.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert (await running.client.get("/subgraph.graphql")).status_code == 404


async def test_a_type_whose_read_is_omitted_is_not_an_entity(tmp_path, database_url):
    settings = {**FEDERATED, "entities": {"shelves": {"omit_operations": ["read"]}}}
    async with running_service(tmp_path, database_url, settings) as running:
        sdl = (await running.client.get("/subgraph.graphql")).text
        assert "type Shelf {" in sdl and 'type Book implements Node @key(fields: "rowId")' in sdl
        response = await running.client.post(
            "/graphql",
            json={
                "query": "query($r: [_Any!]!) { _entities(representations: $r) { __typename } }",
                "variables": {"r": [{"__typename": "Shelf", "rowId": 1}]},
            },
        )
        assert "'Shelf' is not an entity" in response.json()["errors"][0]["message"]


REVIEWS = """extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

type Query {
  topReviews: [Review!]!
}

type Review {
  body: String!
  book: Book!
}

type Book @key(fields: "id") {
  id: ID!
  reviewCount: Int!
}
"""


@pytest.mark.slow
async def test_apollo_composes_the_subgraph_and_a_gateway_resolves_across_both(service):
    """A real @apollo/gateway (IntrospectAndCompose over `_service { sdl }`) in front of svc and a stub subgraph
    (@apollo/subgraph) that keys Book by svc's global ID: reviews -> books through svc's `_entities` (one
    statement for the whole fetch), and books -> review counts through the stub's."""
    kindred, first = global_id("Book", 3), global_id("Book", 1)
    stub_args = {
        "port": 0,
        "typeDefs": REVIEWS,
        "entities": {"Book": {kindred: {"reviewCount": 2}, first: {"reviewCount": 5}}},
        "root": {"topReviews": [{"body": "Great", "book": {"id": kindred}}, {"body": "Fine", "book": {"id": first}}]},
    }
    async with trio.open_nursery() as nursery:
        stub = await start_client("stub-subgraph", stub_args, nursery, lifetime=90)
        async with stub:
            ready = await stub.wait_for(lambda line: "ready" in line or "error" in line, timeout=30)
            assert ready.get("ready"), ready
            subgraphs = [{"name": "library", "url": f"{service.url}/graphql"}, {"name": "reviews", "url": ready["url"]}]
            composed = await run_client("compose", {"subgraphs": subgraphs}, timeout=60)
            assert composed.returncode == 0, (composed.lines, composed.stderr)
            supergraph = composed.values("supergraph")[0]
            assert 'join__type(graph: LIBRARY, key: "rowId")' in supergraph
            assert "reviewCount" in supergraph and "topReviews" in supergraph
            before = await statements(service.client)
            queries = [
                {"query": "{ topReviews { body book { title author { name } } } }"},
                {"query": "{ books(first: 1) { title reviewCount } }"},
            ]
            run = await run_client("gateway", {"subgraphs": subgraphs, "queries": queries}, timeout=60)
            assert run.returncode == 0, (run.lines, run.stderr)
            across, back = run.values("result")
            assert across == {
                "data": {
                    "topReviews": [
                        {"body": "Great", "book": {"title": "Kindred", "author": {"name": "Octavia"}}},
                        {"body": "Fine", "book": {"title": "A Wizard of Earthsea", "author": {"name": "Ursula"}}},
                    ]
                }
            }, across
            assert back == {"data": {"books": [{"title": "A Wizard of Earthsea", "reviewCount": 5}]}}, back
            # The second query's books read, and the first query's entities: one statement each.
            assert await statements(service.client) - before == 2
        nursery.cancel_scope.cancel()
