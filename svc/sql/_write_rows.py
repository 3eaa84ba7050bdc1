"""Rows written, as CTEs (layer 5; SPEC "Mutations", "Nested writes"): a row created (an upsert too), or updated
by a condition (its key, this row's child, the row a to-one relation refers to), each with its to-one writes first:
the row takes its foreign keys from their CTEs' rows (a row looked up, a row created, or NULL to disconnect). What
hangs from a written row comes after it (`after`, the writes of related rows).

A key a client names is looked up as one row per key, whether or not one matched, so a key naming no row is a status
member the pipeline checks; a write taking its foreign key from a lookup that found nothing does not happen (it
joins an empty CTE) rather than failing on a constraint.
"""

import abc
from collections.abc import Mapping, Sequence

import attrs
from psycopg import sql

from svc.model import Cardinality
from svc.plan import OnConflict, RelatedWrite, RelationWriteKind, RowWrite, Table

from ._filters import qualified
from ._write_base import FOUND, NUMBERED, CheckKind, Condition, Extras, Inherited, Inserted, Join, WriterBase
from ._write_pieces import columns_of, equal, found_rows, listed, names, on_conflict, rows_of, selected, union
from ._write_program import Effect, Part
from ._write_values import Address, Source, Value

K = RelationWriteKind


@attrs.frozen
class Version:
    """A version a write checks: the row's `column` (else its system version) must be `expected`."""

    column: str | None
    expected: sql.Composable


class RowWriter(WriterBase):
    def __init__(self, returned: Mapping[Table, tuple[str, ...]]) -> None:
        super().__init__(returned)
        #: The target (the rows locked before) of each update part.
        self.targets: dict[str, str] = {}

    @abc.abstractmethod
    def after(self, write: RowWrite, at: Address, row: str) -> None:
        """What hangs from a written row (the part `row`)."""

    def lookup(self, related: RelatedWrite, at: Address) -> str:
        """The target rows `related`'s keys name: one row per key (`FOUND`: its position, whether a row matched,
        the row's columns, NULL when none did). Keys of several shapes (by the primary key, by another unique key)
        are looked up per shape and united. Its status member `missing` lists the keys that named no row."""
        shapes: dict[tuple[str, ...], list[int]] = {}
        for position, key in enumerate(related.keys):
            shapes.setdefault(key.columns, []).append(position)
        table = related.target
        columns = self.columns(table)
        found: list[str] = []
        for shape, positions in shapes.items():
            keys = self.value(Source(Value.KEYS, tuple((*at, "keys", p) for p in positions), tuple(positions)))
            body = sql.SQL(
                "select (e.v->>'__n')::bigint as __n, (t.{} is not null) as __found, {}"
                " from json_array_elements({}) e(v) cross join lateral json_populate_record(null::{}, e.v) k"
                " left join {} t on {}"
            ).format(
                sql.Identifier(shape[0]), selected("t", columns), keys, qualified(table), qualified(table),
                equal(shape, "t", "k"),
            )  # fmt: skip
            found.append(self.add(Part(self.name(), body, Effect.READ, table, table, (), FOUND)))
        name = found[0]
        if len(found) > 1:
            body = union([listed(n, FOUND, columns) for n in found])
            name = self.add(Part(self.name(), body, Effect.READ, None, table, tuple(found), FOUND))
        missing = sql.SQL(
            "(select coalesce(json_agg(m.__n order by m.__n), '[]'::json) from {} m where not m.__found)"
        ).format(sql.Identifier(name))
        self.parts[-1] = attrs.evolve(self.parts[-1], status=(("missing", missing),))
        return name

    def insert_row(
        self,
        write: RowWrite,
        at: Address,
        inherited: Sequence[Inherited],
        *,
        skip: sql.Composable | None = None,
        skip_uses: tuple[str, ...] = (),
        position: int = 0,
        numbered: bool = False,
    ) -> Inserted:
        """A row created (or upserted): its to-one writes first, then the row, then its to-many writes."""
        taking = [*inherited, *self._to_one(write, at)]
        inserted = self.insert(
            write.table, [(at, write)], [position], inherited=taking, skip=skip, skip_uses=skip_uses, numbered=numbered
        )
        self.after(write, at, inserted.rows)
        return inserted

    def insert(
        self,
        table: Table,
        members: Sequence[tuple[Address, RowWrite]],
        positions: Sequence[int],
        *,
        inherited: Sequence[Inherited] = (),
        skip: sql.Composable | None = None,
        skip_uses: tuple[str, ...] = (),
        numbered: bool = False,
    ) -> Inserted:
        """Rows of one shape in one INSERT: their values a JSON array, each with its position; the columns in
        `inherited` taken from other CTEs' rows; none where `skip` (over the row `s`) holds. An upsert (the rows
        name their conflict key) answers each row as written, or left alone as it is, by its conflict key, and
        locks the rows it may change first when their previous rows are asked for; other rows are answered in the
        order inserted, numbered when `numbered`."""
        first = members[0][1]
        taken = tuple(i.column for i in inherited)
        given = [c for c in first.values.given if c not in taken]
        rows = self.value(Source(Value.ROWS, tuple(at for at, _ in members), tuple(positions), omit=taken))
        source = sql.SQL("({})").format(rows_of(table, rows))
        columns = self.columns(table)
        conflict = first.upsert
        joins = list({i.join.alias: i.join for i in inherited if i.join is not None}.values())
        uses = [name for join in joins for name in join.uses]
        lock = None
        locked = sql.SQL("")
        if conflict is not None and first.previous:
            body = sql.SQL("select {} from {} p join {} s on {} for update of p").format(
                selected("p", columns), qualified(table), source, equal(conflict.columns, "p", "s")
            )
            lock = self.add(Part(self.name(), body, Effect.READ, table, table))
            # The insert reads the locked rows, so they are locked (and read as they were) before it writes.
            locked = sql.SQL(" cross join (select count(*) from {}) l").format(sql.Identifier(lock))
            uses.append(lock)
        where = sql.SQL("")
        if skip is not None:
            where = sql.SQL(" where not {}").format(skip)
            uses += skip_uses
        answered = selected("t", columns)
        action = sql.SQL("")
        effect = Effect.INSERT
        extras: Extras = ()
        if conflict is not None:
            answered = sql.SQL("{}, (t.xmax = 0) as __inserted").format(answered)
            action = on_conflict(conflict)
            effect = Effect.INSERT if conflict.nothing else Effect.UPSERT
            extras = (("__inserted", "boolean"),)
        values = [*(sql.SQL("s.{}").format(sql.Identifier(c)) for c in given), *(i.expression() for i in inherited)]
        # A row giving no column (`{}`) takes every default: no column list, a select of none.
        targets = sql.SQL(" ({})").format(names([*given, *taken])) if given or taken else sql.SQL("")
        body = sql.SQL(
            "insert into {} as t{} select {} from {} s{}{}{} order by s.__n{} returning {}"
        ).format(
            qualified(table), targets, sql.SQL(", ").join(values), source,
            sql.SQL("").join(sql.SQL(" cross join {} {}").format(j.source, sql.Identifier(j.alias)) for j in joins),
            locked, where, action, answered,
        )  # fmt: skip
        name = self.add(Part(self.name(), body, effect, table, table, tuple(uses), extras))
        if conflict is not None:
            return Inserted(self.add(self._by_conflict(table, conflict, name, source, given)), lock)
        if numbered:
            return Inserted(self.add(self._in_order(table, name, source, positions)), lock)
        return Inserted(name, lock)

    def update_row(self, write: RowWrite, at: Address, condition: Condition, *, root: bool = False) -> str:
        """A row changed: found by `condition`, locked, its version checked; its to-one writes before, its to-many
        writes after. Answers the part of the row as updated."""
        inherited = self._to_one(write, at)
        taken = tuple(i.column for i in inherited)
        given = tuple(c for c in write.values.given if c not in taken)
        version = self._version(write.versioned, write.version_column, (*at, "expected_version"))
        target = self.add(self._target(write.table, condition.where, version, uses=condition.uses))
        joins = list({i.join.alias: i.join for i in inherited if i.join is not None}.values())
        sets = [sql.SQL("{} = r.{}").format(sql.Identifier(c), sql.Identifier(c)) for c in given]
        sets += [sql.SQL("{} = {}").format(sql.Identifier(i.column), i.expression()) for i in inherited]
        if not sets:
            # Only nested writes: the row is still touched (a column of its key set to itself), locked and found.
            first = sql.Identifier(condition.columns[0])
            sets = [sql.SQL("{} = u.{}").format(first, first)]
        sources = [sql.SQL("{} target").format(sql.Identifier(target))]
        if given:
            row = self.value(Source(Value.ROW, (at,), omit=taken))
            sources.append(sql.SQL("json_populate_record(null::{}, {}) r").format(qualified(write.table), row))
        sources += [sql.SQL("{} {}").format(join.source, sql.Identifier(join.alias)) for join in joins]
        body = sql.SQL("update {} u set {} from {} where {}{} returning {}").format(
            qualified(write.table), sql.SQL(", ").join(sets), sql.SQL(", ").join(sources),
            equal(write.key or condition.columns, "u", "target"), version_allowed(version),
            selected("u", self.columns(write.table)),
        )  # fmt: skip
        part = self._counted(body, Effect.UPDATE, write.table, target)
        updated = self.add(attrs.evolve(part, uses=(*part.uses, *(n for j in joins for n in j.uses))))
        self.targets[updated] = target
        if not root or write.must_exist or write.related:
            self.check(condition.missing, updated, "counts", at)
        if write.versioned:
            self.check(CheckKind.STALE, updated, "counts", at)
        self.after(write, at, updated)
        return updated

    def key_condition(self, table: Table, at: Address, columns: tuple[str, ...]) -> Condition:
        """The row the key at `at` names (compared as the table's own types: the key comes as JSON, read with its
        row type)."""
        keys = self.value(Source(Value.KEYS, (at,), (0,)))
        where = sql.SQL("({}) in (select {} from json_populate_recordset(null::{}, {}) k)").format(
            columns_of("t", columns), columns_of("k", columns), qualified(table), keys
        )
        return Condition(where, (), columns)

    def _to_one(self, write: RowWrite, at: Address) -> list[Inherited]:
        """The foreign keys a row takes from its to-one writes: a row looked up, created (for connectOrCreate the
        one found, else the one created), or NULL to disconnect."""
        inherited: list[Inherited] = []
        for position, related in enumerate(write.related):
            if related.cardinality is not Cardinality.TO_ONE or related.kind is K.UPDATE:
                continue
            here = (*at, "related", position)
            if related.kind is K.DISCONNECT:
                inherited += [Inherited(local, None) for local, _ in related.pairs]
                continue
            targets = [target for _, target in related.pairs]
            queries: list[sql.Composable] = []
            uses: list[str] = []
            found = None
            if related.kind in (K.CONNECT, K.CONNECT_OR_CREATE):
                found = self.lookup(related, here)
                if related.kind is K.CONNECT:
                    self.check(CheckKind.RELATION_NOT_FOUND, found, "missing", here)
                queries.append(found_rows(found, targets))
                uses.append(found)
            if related.kind in (K.CREATE, K.CONNECT_OR_CREATE):
                skip = None
                if found is not None:
                    skip = sql.SQL("exists (select from {} g where g.__found)").format(sql.Identifier(found))
                created = self.insert_row(
                    related.rows[0], (*here, "rows", 0), [], skip=skip, skip_uses=(found,) if found else ()
                )
                queries.append(
                    sql.SQL("select {} from {} c").format(columns_of("c", targets), sql.Identifier(created.rows))
                )
                uses.append(created.rows)
            join = Join(self.alias(), sql.SQL("({})").format(union(queries)), tuple(uses))
            inherited += [Inherited(local, join, target) for local, target in related.pairs]
        return inherited

    # --- pieces --------------------------------------------------------------------------------------------------

    def _target(
        self,
        table: Table,
        where: sql.Composable,
        version: Version | None,
        *,
        lock: bool = True,
        uses: tuple[str, ...] = (),
    ) -> Part:
        """The rows a write selects, locked (a delete checking neither a version nor a limit takes no lock of its
        own: the DELETE locks what it deletes, and `FOR UPDATE` needs the UPDATE privilege, which a role allowed
        only to delete lacks); with their version as `__version` when one is checked."""
        version_column = sql.SQL("")
        extras: Extras = ()
        if version is not None:
            value = sql.Identifier(version.column) if version.column else sql.SQL("xmin")
            version_column = sql.SQL(", t.{}::text as __version").format(value)
            extras = (("__version", "text"),)
        body = sql.SQL("select {}{} from {} t where {}{}").format(
            selected("t", self.columns(table)), version_column, qualified(table), where,
            sql.SQL(" for update of t") if lock else sql.SQL(""),
        )  # fmt: skip
        return Part(self.name(), body, Effect.READ, table, table, uses, extras)

    def _counted(self, body: sql.Composable, effect: Effect, table: Table, target: str) -> Part:
        """A write of the rows `target` selected; its status member `counts`: how many matched, how many were
        written."""
        name = self.name()
        counts = sql.SQL(
            "json_build_object('matched', (select count(*) from {}), 'written', (select count(*) from {}))"
        ).format(sql.Identifier(target), sql.Identifier(name))
        return Part(name, body, effect, table, table, (target,), status=(("counts", counts),))

    def _version(self, versioned: bool, column: str | None, at: Address) -> Version | None:
        if not versioned:
            return None
        return Version(column, self.value(Source(Value.TEXT, (at,)), "text"))

    def _in_order(self, table: Table, inserted: str, source: sql.Composable, positions: Sequence[int]) -> Part:
        """Inserted rows numbered by their positions: they come back in the order inserted, which is theirs (one
        row: its position)."""
        if len(positions) == 1:
            body = sql.SQL("select {}::bigint as __n, true as __inserted, {} from {} i").format(
                sql.Literal(positions[0]), selected("i", self.columns(table)), sql.Identifier(inserted)
            )
        else:
            body = sql.SQL(
                "select s.__n, true as __inserted, {} from (select row_number() over () as __i, i.* from {} i) i"
                " join (select row_number() over (order by s.__n) as __i, s.__n from {} s) s using (__i)"
            ).format(selected("i", self.columns(table)), sql.Identifier(inserted), source)
        return Part(self.name(), body, Effect.READ, None, table, (inserted,), NUMBERED)

    def _by_conflict(
        self, table: Table, conflict: OnConflict, inserted: str, source: sql.Composable, given: Sequence[str]
    ) -> Part:
        """An upsert's rows by their conflict key, numbered by their positions: as written, or (left alone) as they
        are, read from the statement's snapshot, where nothing changed them."""
        columns = self.columns(table)
        k = sql.Identifier(conflict.columns[0])
        either = sql.SQL(", ").join(
            sql.SQL("case when i.{k} is null then e.{c} else i.{c} end as {c}").format(k=k, c=sql.Identifier(c))
            for c in (columns or given)
        )
        body = sql.SQL(
            "select s.__n, coalesce(i.__inserted, false) as __inserted, {} from {} s left join {} i on {}"
            " left join {} e on i.{} is null and {} where i.{} is not null or e.{} is not null"
        ).format(
            either, source, sql.Identifier(inserted), equal(conflict.columns, "i", "s"), qualified(table), k,
            equal(conflict.columns, "e", "s"), k, k,
        )  # fmt: skip
        return Part(self.name(), body, Effect.READ, None, table, (inserted,), NUMBERED)


def version_allowed(version: Version | None) -> sql.Composable:
    """The write happens only when the row's version is the one expected."""
    if version is None:
        return sql.SQL("")
    return sql.SQL(" and coalesce(target.__version = {}, false)").format(version.expected)
