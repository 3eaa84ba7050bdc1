"""What the plan stage of REST hands on (SPEC "REST API"): the plan the pipeline runs, and what the response stage
needs of it to read the answer.

The pipeline answers JSON texts, never decoded: a read's by column (a list's single root is split into the page's
members: the rows are the body, the others become headers), a write's by the root of its payload read. The keys
below name them.
"""

import json
from collections.abc import Mapping

import attrs

from svc.plan import MutationPlan, Params, ReadPlan

#: A list's page members (its root is split into them).
ROWS, ROW_COUNT, HAS_NEXT, HAS_PREVIOUS, START, END, TOTAL, ESTIMATE = (
    "rows", "rowCount", "hasNext", "hasPrevious", "start", "end", "total", "estimate",
)  # fmt: skip
#: A row read or written: the row, its version (`{"v": ...}`, for `ETag`), the row as it was (`Prefer: previous`);
#: of a write's own answer: the written rows' keys (a JSON array: a created row's is its `Location`), how many rows it
#: wrote (a number: a write by filter's `X-Affected-Count`).
ROW, VERSION, PREVIOUS, KEYS, AFFECTED = "row", "version", "previous", "keys", "affected"
#: A function's value (or row, or rows).
VALUE = "value"


@attrs.frozen
class PlannedRead:
    """A read (`Pipeline.read`): one statement; `keys` name the texts it answers, in order."""

    plan: ReadPlan
    params: Params
    keys: tuple[str, ...]
    #: A list's page size (its `Link` asks for pages as large; None: no list), and in CSV the header row's fields.
    page_size: int | None = None
    csv_header: tuple[str, ...] = ()


@attrs.frozen
class PlannedWrite:
    """A write (`Pipeline.write`): one mutation step, its payload read's texts by root key; and whether the
    response takes the written rows' keys (`location`) or their count (`affected`) from the write's answer."""

    plan: MutationPlan
    location: bool = False
    affected: bool = False


Planned = PlannedRead | PlannedWrite


def read_version(answer: Mapping[str, bytes | None]) -> str | None:
    """The version of the row an answer holds (None: the row has none, or there is no row)."""
    text = answer.get(VERSION)
    return json.loads(text)["v"] if text is not None else None
