"""The dev debug headers, read (SPEC "Debug headers (dev)"): `X-Debug-SQL` and `X-Debug-Explain`."""

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx

#: A condition's operand that is an InitPlan's value: `$1` (PostgreSQL up to 17), `(InitPlan 1).col1` (18).
INIT_PLAN_VALUE = r"(?:\$\d+|\(InitPlan \d+\)\.col\d+)"


def debug_sql(response: httpx.Response) -> Any:
    return json.loads(unquote(response.headers["x-debug-sql"]))


async def debug_explain(client: httpx.AsyncClient, response: httpx.Response) -> list[Any]:
    """The plans of an answer's statements, from its header, or from where the header points when they are long."""
    value = json.loads(unquote(response.headers["x-debug-explain"]))
    if isinstance(value, dict):
        return (await client.get(value["url"])).json()
    return value


def plan_conditions(plan: Any) -> Iterator[str]:
    """Every condition of an EXPLAIN (format json) plan: index and recheck conditions, join conditions, filters."""
    if isinstance(plan, list):
        for item in plan:
            yield from plan_conditions(item)
    elif isinstance(plan, dict):
        for key, value in plan.items():
            if isinstance(value, str) and (key.endswith(" Cond") or key == "Filter"):
                yield value
            else:
                yield from plan_conditions(value)


def tsqueries_not_made_once(plan: Any) -> list[str]:
    """The plan's conditions matching a tsvector (`@@`) against anything but an InitPlan's value (a tsquery made once
    per statement): a tsquery planned as a constant, or made again for each row. The plan must have such conditions."""
    searches = [condition for condition in plan_conditions(plan) if "@@" in condition]
    assert searches, "no text search in the plan"
    return [condition for condition in searches if not re.search(rf"@@ {INIT_PLAN_VALUE}\)", condition)]
