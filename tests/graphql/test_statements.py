"""One statement per request (SPEC "What the service does" rule 1; ARCHITECTURE.md "One statement per request",
"Shape-keyed SQL"): a request sends exactly one statement however deep its selections nest and however many root
fields it has, and the compiled text depends only on the operation's shape, not on its values."""

import pytest

from tests.support.service import running_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}

NESTED = """query($first: Int!, $after: Cursor) {
  authors(first: $first) { name mentor { name } books(first: 5) { title shelves(first: 5) { label books(first: 5) { title } } }
    booksConnection(first: 1, after: $after) { totalCount edges { cursor node { title author { name } } } } }
  book(rowId: 1) { title author { name } }
  add(a: 1, b: 2)
}"""


async def statements(client) -> int:
    return (await client.get("/health")).json()["statements"]


async def test_each_request_sends_exactly_one_statement(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        for first in (1, 2, 4):
            before = await statements(service.client)
            response = await service.client.post("/graphql", json={"query": NESTED, "variables": {"first": first}})
            assert response.status_code == 200 and "errors" not in response.json()
            assert len(response.json()["data"]["authors"]) == first
            assert await statements(service.client) - before == 1


async def test_limits_refuse_before_any_statement(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        before = await statements(service.client)
        response = await service.client.post("/graphql", json={"query": "{ books(first: 100000) { rowId } }"})
        assert response.json()["errors"][0]["extensions"]["code"] == "PAGE_SIZE_EXCEEDED"
        assert await statements(service.client) == before


@pytest.fixture
async def planner(tmp_path, database_url):
    from graphql import parse
    from graphql.execution.values import get_variable_values

    from svc.graphql import QueryPlanner, build_graphql_schema
    from svc.sql import compile_read
    from tests.support.model import read_model

    config, model = await read_model(database_url, tmp_path, SCHEMAS)
    schema = build_graphql_schema(model).schema
    planner = QueryPlanner(schema, model, config.limits)

    def compiled(query: str, variables: dict) -> tuple[str, dict]:
        operation = parse(query).definitions[0]
        coerced = get_variable_values(schema, operation.variable_definitions or (), variables)
        planned = planner.plan(operation, {}, coerced)
        return compile_read(planned.plan).statement, planned.params.named()

    return compiled


async def test_the_sql_text_depends_only_on_the_shape(planner):
    query = """query($id: Int!, $title: String, $first: Int) {
      author(rowId: $id) { books(first: $first, filter: {title: {startsWith: $title}}) { title shelves { label } } } }"""
    one, params_one = planner(query, {"id": 1, "title": "A", "first": 5})
    two, params_two = planner(query, {"id": 3, "title": "Stories", "first": 50})
    assert one == two
    assert params_one != params_two
    other_shape, _ = planner(
        query.replace("shelves { label }", "shelves { rowId }"), {"id": 1, "title": "A", "first": 5}
    )
    assert other_shape != one


async def test_values_never_appear_in_the_sql_text(planner):
    statement, params = planner(
        'query { books(filter: {title: {equalTo: "Robert\'); drop table books; --"}}) { rowId } }', {}
    )
    assert "drop table" not in statement
    assert "Robert'); drop table books; --" in params.values()


async def test_a_repeated_query_is_planned_once_and_other_variables_are_planned_anew(
    tmp_path, database_url, monkeypatch
):
    from svc.graphql import QueryPlanner

    planned: list[dict] = []
    plan = QueryPlanner.plan

    def counted(self, operation, fragments, variables):
        planned.append(dict(variables.coerced))
        return plan(self, operation, fragments, variables)

    monkeypatch.setattr(QueryPlanner, "plan", counted)
    query = "query($id: Int!) { book(rowId: $id) { rowId title } }"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        answers = []
        for variables in ({"id": 1}, {"id": 1}, {"id": 2}, {"id": 1}):
            response = await service.client.post("/graphql", json={"query": query, "variables": variables})
            answers.append(response.json()["data"]["book"]["rowId"])
            before = await statements(service.client)
        # Each answer is its own variables' (a kept plan carries its values), each request still one statement.
        assert answers == [1, 1, 2, 1]
        assert planned == [{"id": 1}, {"id": 2}]
        response = await service.client.post("/graphql", json={"query": query, "variables": {"id": 2}})
        assert response.json()["data"]["book"]["rowId"] == 2
        assert await statements(service.client) - before == 1
        assert len(planned) == 2


async def test_kept_plans_are_bounded_least_recently_used_out(tmp_path, database_url, monkeypatch):
    from svc.graphql import QueryPlanner, _endpoint

    monkeypatch.setattr(_endpoint, "PLAN_CACHE_SIZE", 2)
    planned: list[int] = []
    plan = QueryPlanner.plan

    def counted(self, operation, fragments, variables):
        planned.append(variables.coerced["id"])
        return plan(self, operation, fragments, variables)

    monkeypatch.setattr(QueryPlanner, "plan", counted)
    query = "query($id: Int!) { book(rowId: $id) { rowId } }"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        for id_ in (1, 2, 1, 3, 1, 2):
            response = await service.client.post("/graphql", json={"query": query, "variables": {"id": id_}})
            assert response.json()["data"]["book"]["rowId"] == id_
    # 1 and 2 kept; 1 used, 3 pushes 2 out; 1 still kept; 2 planned again.
    assert planned == [1, 2, 3, 2]


async def test_a_repeated_mutation_is_planned_once_and_still_writes_each_time(tmp_path, database_url, monkeypatch):
    from svc.graphql import MutationPlanner

    planned: list[dict] = []
    plan = MutationPlanner.plan

    def counted(self, operation, fragments, variables):
        planned.append(dict(variables.coerced))
        return plan(self, operation, fragments, variables)

    monkeypatch.setattr(MutationPlanner, "plan", counted)
    mutation = (
        "mutation($id: Int!, $label: String!) { createShelf(input: {rowId: $id, label: $label}) { shelf { label } } }"
    )
    async with running_service(tmp_path, database_url, SCHEMAS) as service:

        async def create(id_: int, label: str) -> dict:
            variables = {"id": id_, "label": label}
            return (await service.client.post("/graphql", json={"query": mutation, "variables": variables})).json()

        assert (await create(900, "kept"))["data"] == {"createShelf": {"shelf": {"label": "kept"}}}
        # The kept plan runs again: the row exists now, so the same write is refused, typed.
        again = await create(900, "kept")
        assert again["data"] == {"createShelf": None}
        assert again["errors"][0]["extensions"]["code"] == "ID_TAKEN"
        assert (await create(901, "other"))["data"] == {"createShelf": {"shelf": {"label": "other"}}}
    assert planned == [{"id": 900, "label": "kept"}, {"id": 901, "label": "other"}]
