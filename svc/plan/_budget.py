"""What one request may read, checked while planning, before any SQL (SPEC "Limits"): how deep rows nest (the root
list is 1; REST include paths count) and the cost, estimated rows read: each read's rows (its page size, 1 for a
single row) times the rows it hangs from, summed."""

from svc.config import LimitsConfig
from svc.errors import Code, SvcError


class Budget:
    """The depth and cost met so far by the planning of one operation (or of one mutation field)."""

    def __init__(self, limits: LimitsConfig) -> None:
        self.limits = limits
        self.cost = 0

    def read(self, depth: int, rows: int, parent_rows: int) -> None:
        """A read `depth` levels deep of `rows` rows per parent row, under `parent_rows` parent rows."""
        limit = self.limits.depth
        if limit is not None and depth > limit:
            raise SvcError(
                Code.DEPTH_LIMIT_EXCEEDED,
                f"the request nests rows {depth} levels deep, more than {limit}",
                extensions={"limit": limit, "actual": depth},
            )
        self.cost += rows * parent_rows

    def check(self) -> None:
        limit = self.limits.cost
        if limit is not None and self.cost > limit:
            raise SvcError(
                Code.COST_LIMIT_EXCEEDED,
                f"the request may read {self.cost} rows, more than {limit}",
                extensions={"limit": limit, "actual": self.cost},
            )


def check_written_rows(limits: LimitsConfig, rows: int) -> None:
    """SPEC "Limits": rows a create writes (nested creations included) are at most `bulk_rows`, checked before SQL."""
    limit = limits.bulk_rows
    if limit is not None and rows > limit:
        raise SvcError(
            Code.BULK_LIMIT_EXCEEDED,
            f"the request writes {rows} rows, more than {limit}",
            extensions={"limit": limit, "actual": rows},
        )
