"""Golden files of the write compiler (STYLE.md habit 14): for each `golden/writes/X.graphql` (a mutation, its
variables on the first line) the statements its fields compile to, each write's then its payload read's, are kept
in `X.sql`, and the answer's data in `X.json`. Each case runs in a transaction that is rolled back, so every case
starts from the fixture's rows. `SVC_UPDATE_GOLDEN=1` rewrites them."""

import json
from pathlib import Path

import pytest

from svc.db import Executor, Transaction, open_pool
from svc.graphql import MutationPlanner, QueryPlanner, build_graphql_schema
from svc.pipeline import Context, Pipeline, Statements
from svc.server import connection_settings
from tests.support.golden import assert_golden, graphql_case, mutation_statements
from tests.support.model import read_model

DATABASE_FIXTURES = ["writes.sql"]
GOLDEN = Path(__file__).parent / "golden" / "writes"
CASES = sorted(path.stem for path in GOLDEN.glob("*.graphql"))


class _Rollback(Exception):
    def __init__(self, data: bytes) -> None:
        super().__init__("rolled back")
        self.data = data


@pytest.mark.parametrize("case", CASES)
async def test_write_golden(case, database_url, tmp_path):
    config, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["app"]}})
    schema = build_graphql_schema(model).schema
    operation, coerced = graphql_case(GOLDEN / f"{case}.graphql", schema)
    plan = MutationPlanner(QueryPlanner(schema, model, config.limits)).plan(operation, {}, coerced)
    statements = Statements(model, config.limits, config.errors)
    assert_golden(GOLDEN / f"{case}.sql", mutation_statements(plan, statements))
    async with open_pool(database_url, connection_settings(config), size=1) as pool:
        pipeline = Pipeline(Executor(pool))

        async def work(tx: Transaction) -> None:
            payloads = await pipeline.write(statements, plan, Context("golden"), transaction=tx)
            members = (json.dumps(p.step.key).encode() + b":" + p.json() for p in payloads)
            raise _Rollback(b"{" + b",".join(members) + b"}")

        with pytest.raises(_Rollback) as answered:
            await pipeline.executor.run(work)
    data = json.loads(answered.value.data)
    assert_golden(GOLDEN / f"{case}.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
