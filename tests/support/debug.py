"""The dev debug headers, read (SPEC "Debug headers (dev)"): `X-Debug-SQL` and `X-Debug-Explain`."""

import json
import re
from collections.abc import Callable, Iterator
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
    return _plan_texts(plan, lambda key: key.endswith(" Cond") or key == "Filter")


def plan_orderings(plan: Any) -> Iterator[str]:
    """Every ordering expression of an EXPLAIN (format json) plan: an index scan's `Order By`, each sort key."""
    return _plan_texts(plan, lambda key: key in ("Order By", "Sort Key", "Presorted Key"))


def _plan_texts(plan: Any, wanted: Callable[[str], bool]) -> Iterator[str]:
    if isinstance(plan, list):
        for item in plan:
            yield from _plan_texts(item, wanted)
    elif isinstance(plan, dict):
        for key, value in plan.items():
            if isinstance(value, str) and wanted(key):
                yield value
            elif isinstance(value, list) and wanted(key):
                yield from (item for item in value if isinstance(item, str))
            else:
                yield from _plan_texts(value, wanted)


def tsqueries_not_made_once(plan: Any) -> list[str]:
    """The plan's conditions matching a tsvector (`@@`) against anything but an InitPlan's value (a tsquery made once
    per statement): a tsquery planned as a constant, or made again for each row. The plan must have such conditions."""
    searches = [condition for condition in plan_conditions(plan) if "@@" in condition]
    assert searches, "no text search in the plan"
    return [condition for condition in searches if not re.search(rf"@@ {INIT_PLAN_VALUE}\)", condition)]
