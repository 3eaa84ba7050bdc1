"""What the write compiler's parts share (layer 5): the checks a write's status answers, the bookkeeping of one
compilation (CTE names, parameters, parts, checks) and the small values passed between its pieces."""

import enum
from collections.abc import Mapping
from typing import LiteralString

import attrs
from psycopg import sql

from svc.plan import Table

from ._write_program import Part
from ._write_values import Address, Source

Extras = tuple[tuple[str, LiteralString], ...]
#: Rows a write wrote, numbered: their position among the rows given, whether an upsert inserted them, the row.
NUMBERED: Extras = (("__n", "bigint"), ("__inserted", "boolean"))
#: Rows keys name: the key's position, whether a row matched, then the row (NULL when none did).
FOUND: Extras = (("__n", "bigint"), ("__found", "boolean"))
#: Rows as they were: the row's position, and the row as JSON (NULL for a row an upsert inserted).
PREVIOUS: Extras = (("__n", "bigint"), ("__previous", "json"))


class CheckKind(enum.Enum):
    """What a status member holds, and when it fails (the pipeline answers the error)."""

    ROW_MISSING = "row_missing"  # `{matched, written}` of an update by key: nothing matched
    STALE = "stale"  # `{matched, written}`: a row matched but was not written, its version differed
    RELATION_NOT_FOUND = "relation_not_found"  # positions of a to-one `connect` key that named no row
    KEY_NOT_FOUND = "key_not_found"  # positions of `connect`/`set` keys that named no row
    NOT_A_CHILD = "not_a_child"  # positions of `delete` keys that named no child of the row
    CHILD_MISSING = "child_missing"  # `{matched, written}` of an `update` item that named no child of the row
    BULK_LIMIT = "bulk_limit"  # `{matched, written}` of a write by filter: more rows matched than its limit


@attrs.frozen
class Check:
    """A status member checked after its statement ran; `at` is the tree node it is about."""

    kind: CheckKind
    member: str
    at: Address


@attrs.frozen
class Join:
    """Rows a write takes columns from: `source` (a FROM item) under `alias`, reading the parts `uses`."""

    alias: str
    source: sql.Composable
    uses: tuple[str, ...]


@attrs.frozen
class Inherited:
    """A column a row takes from another CTE's row (`source_column` of `join`), or NULL (disconnect: no join)."""

    column: str
    join: Join | None
    source_column: str = ""

    def expression(self) -> sql.Composable:
        if self.join is None:
            return sql.SQL("null")
        return sql.SQL("{}.{}").format(sql.Identifier(self.join.alias), sql.Identifier(self.source_column))


@attrs.frozen
class Condition:
    """The rows an update selects: a condition over alias `t`, the parts it reads, the key columns it names, and
    the check of finding none."""

    where: sql.Composable
    uses: tuple[str, ...]
    columns: tuple[str, ...]
    missing: CheckKind = CheckKind.ROW_MISSING


@attrs.frozen
class Inserted:
    """An INSERT's rows as written (an upsert's row left alone: as it is) as the part `rows`, and the part that
    locked the rows an upsert may change before it wrote (`lock`: their rows as they were)."""

    rows: str
    lock: str | None = None


class WriterBase:
    """One compilation: its parts in the order the writes happen, the parameters they take, their checks."""

    def __init__(self, returned: Mapping[Table, tuple[str, ...]]) -> None:
        self.returned = returned
        self.parts: list[Part] = []
        self.sources: list[Source] = []
        self.checks: list[Check] = []
        self._names = 0
        self._aliases = 0

    def name(self) -> str:
        self._names += 1
        return f"w{self._names}"

    def alias(self) -> str:
        self._aliases += 1
        return f"j{self._aliases}"

    def value(self, source: Source, cast: LiteralString = "json") -> sql.Composable:
        """A parameter read off the tree by `source`, as a placeholder cast to `cast`."""
        self.sources.append(source)
        return sql.SQL("{}::{}").format(sql.Placeholder(f"p{len(self.sources) - 1}"), sql.SQL(cast))

    def add(self, part: Part) -> str:
        self.parts.append(part)
        return part.name

    def columns(self, table: Table) -> tuple[str, ...] | None:
        """The columns rows of `table` are answered with (None: all of them)."""
        return self.returned.get(table)

    def check(self, kind: CheckKind, part: str, member: str, at: Address) -> None:
        self.checks.append(Check(kind, f"{part}.{member}", at))
