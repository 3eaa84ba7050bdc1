"""Path relations of ltree columns (SPEC "Fields present on generated types": path columns give
`<field>Ancestors`/`<field>Descendants`; REST embeds `pathAncestors`/`pathDescendants` with `fields`, `filter`,
`order`, `depth`): the rows whose path is above or below a row's, nearest first, checked against the same walk
written by hand with ltree's operators on the local server's category tree (tests/fixtures/search_spatial.sql).
"""

import pytest

from svc.model import EntityRef, prune_model
from tests.search.support import graphql_error, rest_bad_input, statements
from tests.support.graphql import Gql
from tests.support.model import read_catalog_and_model
from tests.support.postgres import execute, fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["search_spatial.sql"]
SETTINGS = {"database": {"schemas": ["places"]}}
QUOTES = '"' * 3


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service


def by_hand(db, row_id: int, relation: str, depth: int | None = None) -> list[str]:
    """The names of the rows whose path is above (`@>`) or below (`<@`) row `row_id`'s, nearest first."""
    distance = "nlevel(me.path) - nlevel(c.path)" if relation == "@>" else "nlevel(c.path) - nlevel(me.path)"
    limit = f" and {distance} <= {depth}" if depth is not None else ""
    rows = fetch(
        db,
        f"select c.name from places.categories c, places.categories me where me.id = %s"
        f" and c.path {relation} me.path and c.path <> me.path{limit} order by {distance}, c.path",
        (row_id,),
    )
    return [name for (name,) in rows]


def names(rows) -> list[str]:
    return [row["name"] for row in rows]


@pytest.mark.parametrize("row_id", [1, 3, 4, 8, 12])
async def test_graphql_path_ancestors_and_descendants_match_the_ltree_walk(service, database_url, row_id):
    data = await Gql(service.client).data(
        "query($id: Int!) { category(rowId: $id) { pathAncestors { name } pathDescendants { name }"
        " near: pathDescendants(maxDepth: 1) { name } up1: pathAncestors(maxDepth: 1) { name } } }",
        {"id": row_id},
    )
    found = data["category"]
    assert names(found["pathAncestors"]) == by_hand(database_url, row_id, "@>")
    assert names(found["pathDescendants"]) == by_hand(database_url, row_id, "<@")
    assert names(found["near"]) == by_hand(database_url, row_id, "<@", depth=1)
    assert names(found["up1"]) == by_hand(database_url, row_id, "@>", depth=1)


async def test_graphql_path_relations_take_a_filter_and_an_order_in_one_statement(service):
    before = await statements(service.client)
    data = await Gql(service.client).data(
        '{ categories(condition: {rowId: 1}) { pathDescendants(filter: {name: {startsWith: "B"}}, orderBy: NAME_DESC)'
        " { name pathAncestors(maxDepth: 1) { name } } } }"
    )
    assert data["categories"] == [
        {
            "pathDescendants": [
                {"name": "Botany", "pathAncestors": [{"name": "Biology"}]},
                {"name": "Biology", "pathAncestors": [{"name": "Science"}]},
            ]
        }
    ]
    assert await statements(service.client) == before + 1


async def test_the_sdl_offers_the_path_relations(tmp_path, database_url):
    dev = {**SETTINGS, "export": {"pin": "off"}}
    async with running_service(tmp_path, database_url, dev, mode="dev") as service:
        response = await service.client.get("/schema.graphql")
    assert response.status_code == 200, response.text
    for name, relation in (("pathAncestors", "an ancestor"), ("pathDescendants", "a descendant")):
        assert (
            f"  {QUOTES}Rows whose `path` is {relation} of this row's, nearest first.{QUOTES}\n"
            f"  {name}(maxDepth: Int, filter: CategoryFilter, orderBy: [CategoryOrderBy!]): [Category!]!\n"
        ) in response.text


async def test_graphql_max_depth_below_one_is_bad_input(service):
    response = await service.client.post(
        "/graphql", json={"query": "{ category(rowId: 1) { pathDescendants(maxDepth: 0) { name } } }"}
    )
    error = graphql_error(response)
    assert error["message"].startswith("maxDepth must be at least 1"), error


@pytest.mark.parametrize("row_id", [1, 2, 9])
async def test_rest_embeds_path_ancestors_and_descendants(service, database_url, row_id):
    response = await service.client.get(
        f"/rest/categories/{row_id}",
        params={
            "include": "pathAncestors,pathDescendants",
            "fields": "id",
            "fields[pathAncestors]": "name",
            "fields[pathDescendants]": "name",
        },
    )
    assert response.status_code == 200, response.text
    found = response.json()
    assert names(found["pathAncestors"]) == by_hand(database_url, row_id, "@>")
    assert names(found["pathDescendants"]) == by_hand(database_url, row_id, "<@")


async def test_rest_path_relations_take_depth_filter_and_order(service, database_url):
    response = await service.client.get(
        "/rest/categories",
        params={
            "filter[id][eq]": "1",
            "fields": "id",
            "include": "pathDescendants",
            "fields[pathDescendants]": "name",
            "depth[pathDescendants]": "2",
            "filter[pathDescendants][name][like]": "%a%",
            "order[pathDescendants]": "name",
        },
    )
    assert response.status_code == 200, response.text
    expected = sorted(n for n in by_hand(database_url, 1, "<@", depth=2) if "a" in n)
    assert response.json() == [{"id": 1, "pathDescendants": [{"name": n} for n in expected]}]


async def test_rest_path_relations_are_not_paged(service):
    response = await service.client.get(
        "/rest/categories/1", params={"include": "pathDescendants", "first[pathDescendants]": "2"}
    )
    assert rest_bad_input(response)["field"] == "first[pathDescendants]"


def test_a_role_that_may_not_read_the_path_has_no_path_relations(database_url, tmp_path):
    execute(
        database_url,
        "do $$ begin create role svc_path_reader nologin; exception when duplicate_object then null; end $$;"
        " grant usage on schema places to svc_path_reader;"
        " grant select (id, name) on places.categories to svc_path_reader;",
    )
    catalog, model = read_catalog_and_model(database_url, tmp_path, SETTINGS, roles=["svc_path_reader"])
    categories = EntityRef("places", "categories")
    walks = [(h.ancestors, h.descendants, h.path) for h in model.entity(categories).hierarchies]
    assert walks == [("pathAncestors", "pathDescendants", "path")]
    assert prune_model(model, catalog, "svc_path_reader").entity(categories).hierarchies == ()
