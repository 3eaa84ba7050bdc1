"""Write plans into statements (layer 5; SPEC "Mutations", "Nested writes"; ARCHITECTURE.md "Writes").

A write tree becomes one chain of data-modifying CTEs, in the order the writes happen: a row's to-one rows first
(looked up, or created), then the row (its foreign keys taken from those CTEs' rows: `_write_rows.py`), then its
to-many and many-to-many rows (`_write_related.py`: their foreign keys taken from the row's CTE). This module writes
the roots (a row, the rows of a bulk create, a delete, a write by filter) and what the write answers. Keys flow
between writes as CTE references, never through Python; where the order of effects needs it the chain is cut into
several statements (`_write_program.py`), rows passing between them as JSON text. Rows without nested writes are
grouped by the columns they give: one INSERT per group, for a bulk create as for a row's new children.

Values are parameters (`_write_values.py`): the SQL depends only on the tree's shape, so a compiled write is cached
by its tree. Every statement answers a status object of counts and missing keys, which the pipeline checks in plan
order (`Check`); writes that depend on a key that named no row do not happen (they join an empty CTE), so the
check, not a constraint, names the problem. The last statement answers, as JSON texts for the payload read: the
written rows' keys in order (`keys`), how many (`count`), the rows (`rows`, when asked), the rows as they were
(`previous`, when the tree asks), and the first one's global ID (`id`, when asked: a deleted row's).

A write whose payload read is sent with it, before its answer is back (one round trip: `compile_write(carried=...)`
and `svc.sql.compile_carried`), also leaves the outputs the read takes in settings of its transaction (`carried`):
the read takes them from there rather than from parameters.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from psycopg import sql

from svc.plan import BulkWrite, DeleteWrite, OnConflict, RelationWriteKind, RowWrite, Table

from ._filters import qualified
from ._read import filter_expressions
from ._values import carried_setting, global_id, json_object
from ._write_base import NUMBERED, PREVIOUS, Check, CheckKind
from ._write_pieces import assigned, equal, listed, row_json, selected, union
from ._write_program import Effect, Output, Part, WriteStatement, assemble
from ._write_related import RelatedWriter, batches
from ._write_rows import version_allowed
from ._write_values import Address, Source, Value, WriteTree

K = RelationWriteKind


@attrs.frozen
class CompiledWrite:
    statements: tuple[WriteStatement, ...]
    sources: tuple[Source, ...]
    checks: tuple[Check, ...]

    def params(self, write: WriteTree) -> dict[str, Any]:
        """The parameters of a tree of this shape, by placeholder (`p0`, `p1`...); every statement takes them all
        (each uses those it names)."""
        return {f"p{index}": source.value(write) for index, source in enumerate(self.sources)}


def compile_write(
    write: WriteTree,
    returned: Mapping[Table, tuple[str, ...]],
    *,
    rows: bool = False,
    global_ids: str | None = None,
    carried: tuple[str, ...] = (),
) -> CompiledWrite:
    """The statements of a write tree. `returned`: the columns rows are answered with, per table (all when a
    table has none); `rows`: whether the rows are answered; `global_ids`: the type name of the rows' global IDs,
    the first answered as `id`; `carried`: the outputs also left in the transaction's settings (`carried`)."""
    writer = _Writer(returned)
    if isinstance(write, tuple):
        roots = writer.create_many(write)
    elif isinstance(write, RowWrite):
        roots = writer.root_row(write)
    elif isinstance(write, DeleteWrite):
        roots = writer.delete(write)
    else:
        roots = writer.bulk(write)
    outputs = [
        Output(output.name, _carry(output.name, output.expression), output.uses) if output.name in carried else output
        for output in writer.outputs(roots, rows=rows, global_ids=global_ids)
    ]
    return CompiledWrite(assemble(writer.parts, outputs), tuple(writer.sources), tuple(writer.checks))


def _carry(output: str, expression: sql.Composable) -> sql.Composable:
    """`expression`'s text, also left in the transaction's setting for `output` (which `set_config` answers)."""
    return sql.SQL("set_config({}, ({})::text, true)").format(sql.Literal(carried_setting(output)), expression)


@attrs.frozen
class _Roots:
    """The root rows of a write: parts of numbered rows (`NUMBERED`) and of the rows as they were (`PREVIOUS`)."""

    table: Table
    key: tuple[str, ...] | None
    rows: tuple[str, ...]
    previous: tuple[str, ...] = ()


class _Writer(RelatedWriter):
    # --- roots ---------------------------------------------------------------------------------------------------

    def root_row(self, write: RowWrite) -> _Roots:
        """One row created, upserted or updated by key."""
        if write.where is not None:
            condition = self.key_condition(write.table, ("where",), write.where.columns)
            updated = self.update_row(write, (), condition, root=True)
            body = sql.SQL("select 0::bigint as __n, false as __inserted, {} from {} r").format(
                selected("r", self.columns(write.table)), sql.Identifier(updated)
            )
            numbered = self.add(Part(self.name(), body, Effect.READ, None, write.table, (updated,), NUMBERED))
            previous: tuple[str, ...] = ()
            if write.previous:
                assert write.key is not None
                target = self.targets[updated]
                previous = (self.add(self._previous(write.table, write.key, target, numbered)),)
            return _Roots(write.table, write.key, (numbered,), previous)
        return self._created([((), 0, write)])

    def create_many(self, writes: tuple[RowWrite, ...]) -> _Roots:
        """Rows without nested writes in one INSERT per shape (the columns given, the upsert); the others one by
        one, each with its nested writes."""
        numbered: list[str] = []
        previous: list[str] = []
        for positions in batches(writes, lambda w: (w.values.given, w.upsert, w.previous)):
            roots = self._created([((p,), p, writes[p]) for p in positions])
            numbered += roots.rows
            previous += roots.previous
        return _Roots(writes[0].table, writes[0].key, tuple(numbered), tuple(previous))

    def _created(self, rows: Sequence[tuple[Address, int, RowWrite]]) -> _Roots:
        """Root rows created (each at its address, with its position among the rows given): one with its nested
        writes, or several of one shape."""
        at, position, first = rows[0]
        if first.related:
            inserted = self.insert_row(first, at, [], position=position, numbered=True)
        else:
            members = [(address, write) for address, _, write in rows]
            inserted = self.insert(first.table, members, [p for _, p, _ in rows], numbered=True)
        previous: tuple[str, ...] = ()
        conflict = first.upsert
        if first.previous and conflict is not None and inserted.lock is not None:
            previous = (self.add(self._previous_upsert(first.table, conflict, inserted.lock, inserted.rows)),)
        return _Roots(first.table, first.key, (inserted.rows,), previous)

    def delete(self, write: DeleteWrite) -> _Roots:
        """One row by key, its version checked when given (the row is then locked first)."""
        version = self._version(write.versioned, write.version_column, ("expected_version",))
        condition = self.key_condition(write.table, ("where",), write.where.columns)
        target = self.add(self._target(write.table, condition.where, version, lock=write.versioned))
        body = sql.SQL("delete from {} d using {} target where {}{} returning {}").format(
            qualified(write.table), sql.Identifier(target), equal(write.key, "d", "target"), version_allowed(version),
            selected("d", self.columns(write.table)),
        )  # fmt: skip
        deleted = self.add(self._counted(body, Effect.DELETE, write.table, target))
        if write.versioned:
            self.check(CheckKind.STALE, deleted, "counts", ())
        return _Roots(write.table, write.key, (self.add(self._ordinal(write.table, deleted)),))

    def bulk(self, write: BulkWrite) -> _Roots:
        """Rows by filter (the filter's parameters come first: the planner numbered them from 0), at most `limit`
        of them: with more, nothing is written and the check fails."""
        for position in range(write.filter_params):
            self.sources.append(Source(Value.PLAIN, (("filter_values", position),)))
        assert write.key is not None
        limit = self.value(Source(Value.PLAIN, (("limit",),)), "bigint") if write.limit is not None else None
        where = filter_expressions().filter(write.filter, sql.Identifier("t")) if write.filter else sql.SQL("true")
        updating = write.values is not None
        target = self.add(self._target(write.table, where, None, lock=updating or limit is not None))
        allowed = sql.SQL("")
        if limit is not None:
            allowed = sql.SQL(" and (select count(*) from {}) <= {}").format(sql.Identifier(target), limit)
        columns = self.columns(write.table)
        match = equal(write.key, "d", "target")
        if write.values is None:
            body = sql.SQL("delete from {} d using {} target where {}{} returning {}").format(
                qualified(write.table), sql.Identifier(target), match, allowed, selected("d", columns)
            )
        else:
            body = sql.SQL(
                "update {t} d set {sets} from {target} target, json_populate_record(null::{t}, {row}) r"
                " where {match}{allowed} returning {answered}"
            ).format(
                t=qualified(write.table), sets=assigned(write.values.given, "r"), target=sql.Identifier(target),
                row=self.value(Source(Value.ROW, ((),))), match=match, allowed=allowed,
                answered=selected("d", columns),
            )  # fmt: skip
        written = self.add(self._counted(body, Effect.UPDATE if updating else Effect.DELETE, write.table, target))
        if limit is not None:
            self.check(CheckKind.BULK_LIMIT, written, "counts", ())
        numbered = self.add(self._ordinal(write.table, written))
        previous = ()
        if write.previous and updating:
            previous = (self.add(self._previous(write.table, write.key, target, numbered)),)
        return _Roots(write.table, write.key, (numbered,), previous)

    def _ordinal(self, table: Table, rows: str) -> Part:
        """Rows a write answered, numbered in the order answered."""
        body = sql.SQL("select row_number() over () as __n, false as __inserted, {} from {} r").format(
            selected("r", self.columns(table)), sql.Identifier(rows)
        )
        return Part(self.name(), body, Effect.READ, None, table, (rows,), NUMBERED)

    def _previous(self, table: Table, key: tuple[str, ...], target: str, numbered: str) -> Part:
        """Updated rows as they were (the target rows, locked before the update), numbered like the rows."""
        body = sql.SQL("select n.__n, {} as __previous from {} n join {} p on {}").format(
            row_json("p", self.columns(table)), sql.Identifier(numbered), sql.Identifier(target), equal(key, "p", "n")
        )
        return Part(self.name(), body, Effect.READ, None, table, (numbered, target), PREVIOUS)

    def _previous_upsert(self, table: Table, conflict: OnConflict, lock: str, numbered: str) -> Part:
        """Upserted rows as they were: NULL for a row the upsert inserted."""
        body = sql.SQL(
            "select n.__n, case when n.__inserted then null else {} end as __previous from {} n left join {} p on {}"
        ).format(
            row_json("p", self.columns(table)), sql.Identifier(numbered), sql.Identifier(lock),
            equal(conflict.columns, "p", "n"),
        )  # fmt: skip
        return Part(self.name(), body, Effect.READ, None, table, (numbered, lock), PREVIOUS)

    # --- outputs -------------------------------------------------------------------------------------------------

    def outputs(self, roots: _Roots, *, rows: bool, global_ids: str | None) -> list[Output]:
        """What the payload read takes: the written rows' keys (in their order), how many, the rows and the first
        one's global ID when asked, the rows as they were."""
        columns = self.columns(roots.table)
        every = sql.SQL("({}) r").format(union([listed(n, NUMBERED, columns) for n in roots.rows]))
        outputs = [Output("count", sql.SQL("(select count(*) from {})").format(every), roots.rows)]
        if rows:
            outputs.append(Output("rows", _aggregate(row_json("r", columns), every), roots.rows))
        if roots.key:
            keys = json_object([(c, sql.SQL("r.{}").format(sql.Identifier(c))) for c in roots.key])
            outputs.append(Output("keys", _aggregate(keys, every), roots.rows))
            if global_ids is not None and len(roots.key) == 1:
                first = global_id(global_ids, sql.SQL("r.{}").format(sql.Identifier(roots.key[0])))
                expression = sql.SQL("(select to_json({}) from {} order by r.__n limit 1)").format(first, every)
                outputs.append(Output("id", expression, roots.rows))
        if roots.previous:
            previous = sql.SQL("({}) r").format(
                union([sql.SQL("select __n, __previous from {}").format(sql.Identifier(n)) for n in roots.previous])
            )
            # Rows an upsert inserted were not there before: they have no previous row.
            before = sql.SQL(
                "(select coalesce(json_agg(r.__previous order by r.__n) filter (where r.__previous is not null),"
                " '[]'::json) from {})"
            ).format(previous)
            outputs.append(Output("previous", before, roots.previous))
        return outputs


def _aggregate(value: sql.Composable, rows: sql.Composable) -> sql.Composable:
    return sql.SQL("(select coalesce(json_agg({} order by r.__n), '[]'::json) from {})").format(value, rows)
