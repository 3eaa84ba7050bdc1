"""Golden files of the compiler (STYLE.md habit 14): for each `golden/X.graphql` (its variables on the first line),
the compiled statement `X.sql` and the database's answer `X.json` are kept beside it, so a review shows exactly
what a change does to the SQL and to the data. `SVC_UPDATE_GOLDEN=1` rewrites them."""

import json
from pathlib import Path

import pytest

from svc.db import Executor, open_pool
from svc.graphql import QueryPlanner, build_graphql_schema
from svc.server import connection_settings
from svc.sql import compile_read
from tests.support.golden import assert_golden, graphql_case, read_statement
from tests.support.model import read_model

DATABASE_FIXTURES = ["reads.sql"]
GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(path.stem for path in GOLDEN.glob("*.graphql"))


@pytest.mark.parametrize("case", CASES)
async def test_golden(case, database_url, tmp_path):
    config, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["app_public"]}})
    schema = build_graphql_schema(model).schema
    operation, coerced = graphql_case(GOLDEN / f"{case}.graphql", schema)
    planned = QueryPlanner(schema, model, config.limits).plan(operation, {}, coerced)
    compiled = compile_read(planned.plan)
    assert_golden(GOLDEN / f"{case}.sql", read_statement(compiled.statement))
    async with open_pool(database_url, connection_settings(config), size=1) as pool:
        row = await Executor(pool).fetch(compiled.statement, planned.params.named())
    answer = {
        key: json.loads(value) if value is not None else None for key, value in zip(compiled.keys, row, strict=True)
    }
    assert_golden(GOLDEN / f"{case}.json", json.dumps(answer, indent=2, ensure_ascii=False) + "\n")
