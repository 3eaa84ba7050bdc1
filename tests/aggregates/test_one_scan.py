"""SPEC "Aggregates": `totalCount`, `aggregates` and every `groupedAggregates` alias of one connection are computed
in ONE scan of the rows it selects (GROUPING SETS), shown by the plan PostgreSQL makes of the compiled statement."""

import json

import psycopg
import pytest
from graphql import parse
from graphql.execution.values import get_variable_values

from svc.graphql import QueryPlanner, build_graphql_schema
from svc.sql import compile_read
from tests.support.model import read_model
from tests.support.postgres import PAGILA

DATABASE_FIXTURES = PAGILA
SETTINGS = {"database": {"schemas": ["public"]}}

QUERY = """{ rentalsConnection(filter: {staffId: {equalTo: 1}}) {
  totalCount
  aggregates { count max { rentalDate } distinctCount { customerId } }
  late: aggregates(filter: {returnDate: {isNull: true}}) { count }
  byMonth: groupedAggregates(groupBy: [RENTAL_DATE_TRUNCATED_TO_MONTH]) { keys count }
  byCustomer: groupedAggregates(groupBy: [CUSTOMER_ID, INVENTORY_ID], having: {count: {greaterThan: 1}}) { keys }
  filled: groupedAggregates(groupBy: [RENTAL_DATE_TRUNCATED_TO_MONTH], fillGaps: true, filter: {customerId: {lessThan: 9}}) { count }
} }"""


def scans(plan: dict, table: str) -> int:
    """Plan nodes reading `table` (scans of any kind)."""
    own = 1 if plan.get("Relation Name") == table else 0
    return own + sum(scans(child, table) for child in plan.get("Plans", []))


@pytest.mark.parametrize("with_nodes", [False, True])
async def test_a_connections_aggregates_and_total_read_the_table_once(tmp_path, database_url, with_nodes):
    config, model = await read_model(database_url, tmp_path, SETTINGS)
    schema = build_graphql_schema(model).schema
    query = QUERY.replace("totalCount", "totalCount nodes { rentalId }") if with_nodes else QUERY
    operation = parse(query).definitions[0]
    planned = QueryPlanner(schema, model, config.limits).plan(operation, {}, get_variable_values(schema, (), {}))
    statement = compile_read(planned.plan).statement
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "create function pg_temp.svc_too_many_groups(bigint, bigint) returns json language sql as 'select null::json'"
        )
        ((plan,),) = conn.execute(f"explain (format json) {statement}", planned.params.named()).fetchall()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    # The stats scan the rows once; the page (asked for with nodes) reads its own 101 rows by the key.
    assert scans(plan[0]["Plan"], "rental") == (2 if with_nodes else 1)
