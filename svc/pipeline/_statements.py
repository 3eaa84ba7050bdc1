"""What the pipeline keeps per snapshot API: compiled statements by plan shape, and what checking plans and typing
their database errors needs (the model, the limits, the `errors` configuration).

The compiled reads and writes are the `operation` cache of `svc_cache_requests_total` (a lookup counted where it is
asked, a miss where a statement is compiled). Held by the snapshot, so a reload starts afresh; shared by the
requests on that snapshot (all in one Trio thread, and compiling never awaits, so no lock is needed).
"""

import functools

from svc.config import ErrorsConfig, LimitsConfig
from svc.model import EntityRef, Model
from svc.plan import Read, ReadPlan, RowsFormat, Table
from svc.sql import (
    CompiledRead,
    CompiledWrite,
    WriteTree,
    compile_batch,
    compile_carried,
    compile_read,
    compile_rows,
    compile_write,
)
from svc.telemetry import cache_lookup, cache_miss

#: Compiled statements kept per snapshot (least recently used out), reads and writes each.
STATEMENT_CACHE_SIZE = 1000


class Statements:
    """The compiled statements of one snapshot API (a plan is its shape: values are parameters)."""

    def __init__(
        self, model: Model, limits: LimitsConfig, errors: ErrorsConfig, size: int = STATEMENT_CACHE_SIZE
    ) -> None:
        self.model = model
        self.limits = limits
        self.errors = errors
        self._reads = functools.lru_cache(maxsize=size)(_read)
        self._carried = functools.lru_cache(maxsize=size)(_carried)
        self._batches = functools.lru_cache(maxsize=size)(compile_batch)
        self._rows = functools.lru_cache(maxsize=size)(compile_rows)
        self._writes = functools.lru_cache(maxsize=size)(functools.partial(_write, returned=returned_columns(model)))

    def read(self, plan: ReadPlan) -> CompiledRead:
        cache_lookup("operation")
        return self._reads(plan)

    def carried(self, plan: ReadPlan, carried: tuple[tuple[int, str], ...]) -> CompiledRead:
        """The payload read of `plan` sent with its write: the values at `carried`'s indexes are the write's outputs
        it names, left in the transaction's settings (`write(carried=...)`)."""
        cache_lookup("operation")
        return self._carried(plan, carried)

    def batch(self, plan: ReadPlan, params: int) -> CompiledRead:
        """The read of `plan` for many sets of its `params` values at once (live queries of one shape)."""
        return self._batches(plan, params)

    def rows(self, read: Read, format: RowsFormat) -> CompiledRead:
        """Every row of a root list read, one statement row each, as `format` writes it (an export)."""
        return self._rows(read, format)

    def write(
        self, write: WriteTree, *, rows: bool, global_ids: str | None, carried: tuple[str, ...] = ()
    ) -> CompiledWrite:
        """A write tree's statements (a tree is its shape: its values are left out of its equality), answering the
        rows when `rows`, and the first row's global ID of type `global_ids` when given; the outputs named in
        `carried` are also left in the transaction's settings, for a payload read sent with the write."""
        cache_lookup("operation")
        return self._writes(write, rows=rows, global_ids=global_ids, carried=carried)


def _read(plan: ReadPlan) -> CompiledRead:
    cache_miss("operation")
    return compile_read(plan)


def _carried(plan: ReadPlan, carried: tuple[tuple[int, str], ...]) -> CompiledRead:
    cache_miss("operation")
    return compile_carried(plan, carried)


def _write(
    write: WriteTree,
    *,
    rows: bool,
    global_ids: str | None,
    carried: tuple[str, ...],
    returned: dict[Table, tuple[str, ...]],
) -> CompiledWrite:
    cache_miss("operation")
    return compile_write(write, rows=rows, global_ids=global_ids, carried=carried, returned=returned)


def returned_columns(model: Model) -> dict[Table, tuple[str, ...]]:
    """The columns a write answers per table: the model's fields, keys and version column, and the columns relations
    join on (written rows give the keys later writes need). Columns the model leaves out are not answered: with
    `rbac.enabled` they may be columns the role cannot read, and a statement naming one would be refused whole."""
    needed: dict[Table, dict[str, None]] = {}

    def table(ref: EntityRef) -> dict[str, None]:
        return needed.setdefault(Table(ref.schema, ref.table), {})

    for entity in model.entities:
        columns = table(entity.ref)
        columns.update(dict.fromkeys(entity.primary_key or ()))
        columns.update(dict.fromkeys(field.column for field in entity.fields))
        if entity.version_column:
            columns[entity.version_column] = None
        for lookup in entity.lookups:
            columns.update(dict.fromkeys(lookup.columns))
        for relation in entity.relations:
            columns.update(dict.fromkeys(local for local, _ in relation.pairs))
            if relation.junction is None:
                table(relation.target).update(dict.fromkeys(remote for _, remote in relation.pairs))
            else:
                junction = table(relation.junction)
                junction.update(dict.fromkeys(remote for _, remote in relation.pairs))
                junction.update(dict.fromkeys(near for near, _ in relation.junction_pairs))
                table(relation.target).update(dict.fromkeys(far for _, far in relation.junction_pairs))
        for hierarchy in entity.hierarchies:
            columns.update(dict.fromkeys(hierarchy.columns))
    return {name: tuple(columns) for name, columns in needed.items() if columns}
