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


@pytest.fixture
def planned(monkeypatch) -> list[dict]:
    """The coerced variables of each planning run of a query, as plain values."""
    from svc.graphql import QueryPlanner
    from svc.plan import plain

    runs: list[dict] = []
    plan = QueryPlanner.plan

    def counted(self, operation, fragments, variables):
        runs.append({name: plain(value) for name, value in variables.coerced.items()})
        return plan(self, operation, fragments, variables)

    monkeypatch.setattr(QueryPlanner, "plan", counted)
    return runs


async def test_a_query_is_planned_once_per_variable_shape_and_each_request_binds_its_own_values(
    tmp_path, database_url, planned
):
    query = "query($id: Int!) { book(rowId: $id) { rowId title } }"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        answers = []
        for variables in ({"id": 1}, {"id": 1}, {"id": 2}, {"id": 3}):
            before = await statements(service.client)
            response = await service.client.post("/graphql", json={"query": query, "variables": variables})
            answers.append(response.json()["data"]["book"]["rowId"])
            assert await statements(service.client) - before == 1
        # Each answer is its own variables' (a kept plan is bound to each request's values), one statement each.
        assert answers == [1, 1, 2, 3]
        assert planned == [{"id": 1}]


async def test_a_value_the_planner_reads_keys_the_plan_and_a_bound_value_does_not(tmp_path, database_url, planned):
    # `first` is checked and sizes the page while planning: each value has its own plan. The title is only bound.
    query = "query($first: Int!, $title: String) { books(first: $first, condition: {title: $title}) { rowId } }"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:

        async def rows(variables: dict) -> list[int]:
            response = await service.client.post("/graphql", json={"query": query, "variables": variables})
            return [book["rowId"] for book in response.json()["data"]["books"]]

        assert await rows({"first": 5, "title": "A Wizard of Earthsea"}) == [1]
        assert await rows({"first": 5, "title": "nothing by this name"}) == []
        assert await rows({"first": 0, "title": "A Wizard of Earthsea"}) == []
        assert await rows({"first": 5, "title": None}) == []  # null is another shape: `title IS NULL`
    assert [run["first"] for run in planned] == [5, 0, 5]


async def test_a_bad_value_bound_to_a_kept_plan_is_refused_as_planning_refuses_it(tmp_path, database_url, planned):
    query = "query($title: String) { books(condition: {title: $title}) { rowId } }"
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        await service.client.post("/graphql", json={"query": query, "variables": {"title": "A"}})
        before = await statements(service.client)
        response = await service.client.post("/graphql", json={"query": query, "variables": {"title": "a\x00b"}})
        (error,) = response.json()["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT"
        assert error["message"] == "text may not contain the NUL character"
        assert error["path"] == ["books"]
        assert await statements(service.client) == before


async def test_kept_plans_are_bounded_least_recently_used_out(tmp_path, database_url, monkeypatch, planned):
    from svc.graphql import _endpoint

    monkeypatch.setattr(_endpoint, "PLAN_CACHE_SIZE", 2)
    query = "query($first: Int!) { books(first: $first) { rowId } }"  # `first` keys the plan
    async with running_service(tmp_path, database_url, SCHEMAS) as service:
        for first in (1, 2, 1, 3, 1, 2):
            response = await service.client.post("/graphql", json={"query": query, "variables": {"first": first}})
            assert len(response.json()["data"]["books"]) == first
    # 1 and 2 kept; 1 used, 3 pushes 2 out; 1 still kept; 2 planned again.
    assert [run["first"] for run in planned] == [1, 2, 3, 2]


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
