"""The limits stage: what one request may read and write, checked on its plan before any SQL (SPEC "Limits").

ARCHITECTURE.md: plan -> limits -> compile. The pipeline runs this on every plan; planners do not count. Checked:
how deep rows nest (a root read is 1; REST include paths count), the cost, estimated rows read (each read's rows
times the rows it hangs from, summed), and the rows a create writes (nested creations included) against
`bulk_rows`. Page sizes are not checked here: `first`/`last` over `page_size.max` is an argument the planner refuses.

A read's rows: 1 for a single row; for a list or connection, its page's size (the value of the page's limit
parameter), else `page_size.max` (1000 when off); for a hierarchy walk, its `maxDepth`, else `limits.depth` (10 when
off).
"""

from collections.abc import Sequence
from typing import Any

from svc.config import LimitsConfig
from svc.errors import Code, SvcError

from ._ir import ArcOutput, NestedOutput, Read, ReadKind, ReadPlan
from ._write_plan import MutationPlan, RowWrite

_UNBOUNDED_ROWS = 1000


class LimitExceeded(SvcError):
    """A limit the plan goes over; `root` is the root field (or mutation field) whose plan it is."""

    def __init__(self, code: Code, message: str, *, limit: int, actual: int, root: str | None) -> None:
        super().__init__(code, message, extensions={"limit": limit, "actual": actual})
        self.root = root


def _within(code: Code, limit: int | None, actual: int, what: str, root: str | None) -> None:
    """Raise LimitExceeded when `actual` is over `limit` (None: no limit); `what` says what went over."""
    if limit is not None and actual > limit:
        raise LimitExceeded(code, f"{what.format(actual)}, more than {limit}", limit=limit, actual=actual, root=root)


def check_read(plan: ReadPlan, params: Sequence[Any], limits: LimitsConfig, *, root: str | None = None) -> None:
    """The depth and cost of a read plan whose parameter values are `params`; `root` names the field the whole plan
    answers (a mutation field's payload), else each root field is named for itself."""
    cost = 0
    for field in plan.roots:
        key = root if root is not None else field.key
        if field.read is not None:
            cost += _read_cost(field.read, 1, 1, params=params, limits=limits, root=key)
        for lookup in field.entities:
            cost += _read_cost(lookup.read, 1, lookup.count, params=params, limits=limits, root=key)
        for source in field.search.sources if field.search is not None else ():
            cost += _read_cost(source.read, 1, 1, params=params, limits=limits, root=key)
    _within(Code.COST_LIMIT_EXCEEDED, limits.cost, cost, "the request may read {} rows", root)


def check_mutation(plan: MutationPlan, limits: LimitsConfig) -> None:
    """Each field of a mutation: the rows its create writes, and the depth and cost of its payload and call reads
    (each field on its own)."""
    for step in plan.steps:
        write = step.write
        rows = count_rows(write) if isinstance(write, RowWrite) else None
        if isinstance(write, tuple):
            rows = sum(count_rows(row) for row in write)
        if rows is not None:
            _within(Code.BULK_LIMIT_EXCEEDED, limits.bulk_rows, rows, "the request writes {} rows", step.key)
        if step.call is not None:
            check_read(step.call, step.call_values, limits, root=step.key)
        if step.payload is not None:
            check_read(step.payload, step.payload_values, limits, root=step.key)


def count_rows(write: RowWrite) -> int:
    """Rows a create writes, nested creations included (SPEC "Limits": `bulk_rows`)."""
    return 1 + sum(count_rows(row) for related in write.related for row in related.rows)


def _read_cost(
    read: Read, depth: int, parent_rows: int, *, params: Sequence[Any], limits: LimitsConfig, root: str
) -> int:
    _within(Code.DEPTH_LIMIT_EXCEEDED, limits.depth, depth, "the request nests rows {} levels deep", root)
    rows = _rows(read, params, limits)
    cost = rows * parent_rows
    for output in read.shape.outputs:
        if isinstance(output, NestedOutput):
            cost += _read_cost(output.read, depth + 1, parent_rows * rows, params=params, limits=limits, root=root)
        elif isinstance(output, ArcOutput):
            for nested in output.reads:
                cost += _read_cost(nested, depth + 1, parent_rows * rows, params=params, limits=limits, root=root)
    return cost


def _rows(read: Read, params: Sequence[Any], limits: LimitsConfig) -> int:
    """How many rows a read may give for each row it hangs from."""
    if read.hierarchy is not None:
        if read.hierarchy.max_depth is not None:
            return int(params[read.hierarchy.max_depth.index])
        return limits.depth or 10
    if read.kind is ReadKind.ONE:
        return 1
    if read.page.limit is not None:
        return int(params[read.page.limit.index])
    return limits.page_size.max or _UNBOUNDED_ROWS
