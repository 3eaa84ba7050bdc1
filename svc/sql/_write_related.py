"""Writes of related rows, as CTEs after the row they hang from (layer 5; SPEC "Nested writes").

To-many rows hold the row's key (`pairs`: the row's column, the child's); many-to-many rows are reached through
junction rows. Keys are looked up first, one row per key whether or not one matched, so a key naming no row is a
status member the pipeline checks rather than a write that silently does nothing. Children named by keys move here
(`connect`), let go (`disconnect`, `set`'s others: their keys set NULL) or are deleted; new children are grouped
by the columns they give, one INSERT per group; `sync` is one merge. An `update` of a child is an update of a row
that must be this row's child.
"""

from collections.abc import Callable, Sequence

from psycopg import sql

from svc.model import Cardinality
from svc.plan import RelatedWrite, RelationWriteKind, RowWrite

from ._filters import qualified
from ._write_base import CheckKind, Condition, Inherited, Join
from ._write_pieces import columns_of, equal, found_rows, names, nulled, paired, rows_of, selected, union
from ._write_program import Effect, Part
from ._write_rows import RowWriter
from ._write_values import Address, Source, Value

K = RelationWriteKind


class RelatedWriter(RowWriter):
    def after(self, write: RowWrite, at: Address, row: str) -> None:
        """What hangs from a written row (the part `row`): a to-one `update` (of the row it refers to now), then the
        to-many and many-to-many writes, in the order given."""
        for position, related in enumerate(write.related):
            here = (*at, "related", position)
            if related.cardinality is Cardinality.TO_ONE:
                if related.kind is K.UPDATE:
                    self.update_row(related.rows[0], (*here, "rows", 0), referred(related, row))
            elif related.cardinality is Cardinality.MANY_TO_MANY:
                self._junction(related, here, row)
            else:
                self._children(related, here, row)

    def _children(self, related: RelatedWrite, at: Address, parent: str) -> None:
        """To-many writes: the children hold this row's key."""
        kind = related.kind
        if kind is K.UPDATE:
            for position, row in enumerate(related.rows):
                assert row.where is not None
                here = (*at, "rows", position)
                key = self.key_condition(related.target, (*here, "where"), row.where.columns)
                child = sql.SQL("{} and exists (select from {} p where {})").format(
                    key.where, sql.Identifier(parent), holds(related.pairs, "t", "p")
                )
                self.update_row(row, here, Condition(child, (parent,), key.columns, CheckKind.CHILD_MISSING))
            return
        if kind is K.SYNC:
            self._sync(related, at, parent)
            return
        found = self.lookup(related, at) if related.keys else None
        if kind in (K.CONNECT, K.SET):
            if found is not None:
                self.check(CheckKind.KEY_NOT_FOUND, found, "missing", at)
            release = self._release(related, parent, found) if kind is K.SET else None
            if found is not None:
                self._adopt(related, parent, found, release)
            return
        if kind in (K.DISCONNECT, K.DELETE):
            if found is not None:  # an empty list names nothing
                self._let_go(related, at, parent, found)
            return
        if found is not None:  # connectOrCreate: the children named move here; the others are created
            self._adopt(related, parent, found, None)
        join = Join(self.alias(), sql.Identifier(parent), (parent,))
        self.create_rows(related, at, [Inherited(child, join, local) for local, child in related.pairs], found)

    def _release(self, related: RelatedWrite, parent: str, found: str | None) -> str:
        """`set`: the children not listed let go of this row (their keys set NULL)."""
        others = sql.SQL("")
        uses = [parent]
        if found is not None:
            others = sql.SQL(" and not exists (select from {} l where l.__found and {})").format(
                sql.Identifier(found), equal(related.target_key, "l", "c")
            )
            uses.append(found)
        body = sql.SQL("update {} c set {} from {} p where {}{} returning {}").format(
            qualified(related.target), nulled([child for _, child in related.pairs]), sql.Identifier(parent),
            holds(related.pairs, "c", "p"), others, selected("c", self.columns(related.target)),
        )  # fmt: skip
        return self.add(Part(self.name(), body, Effect.UPDATE, related.target, related.target, tuple(uses)))

    def _adopt(self, related: RelatedWrite, parent: str, found: str, release: str | None) -> None:
        """`connect`: the children named move here (their keys set to this row's). With `set` they are not the rows
        `release` let go: the two touch different rows and share a statement."""
        sets = sql.SQL(", ").join(
            sql.SQL("{} = p.{}").format(sql.Identifier(child), sql.Identifier(local)) for local, child in related.pairs
        )
        body = sql.SQL("update {} c set {} from {} p, {} l where l.__found and {} returning {}").format(
            qualified(related.target), sets, sql.Identifier(parent), sql.Identifier(found),
            equal(related.target_key, "c", "l"), selected("c", self.columns(related.target)),
        )  # fmt: skip
        disjoint = (release,) if release else ()
        part = Part(self.name(), body, Effect.UPDATE, related.target, related.target, (parent, found), (), disjoint)
        self.add(part)

    def _let_go(self, related: RelatedWrite, at: Address, parent: str, found: str) -> None:
        """`disconnect` (keys set NULL; a key naming a row that is not a child does nothing) or `delete` (every key
        must name a child of this row: its status member `missing` lists those that did not)."""
        table = qualified(related.target)
        matched = sql.SQL("l.__found and {} and {}").format(
            equal(related.target_key, "c", "l"), holds(related.pairs, "c", "p")
        )
        answered = selected("c", self.columns(related.target))
        if related.kind is K.DISCONNECT:
            body = sql.SQL("update {} c set {} from {} p, {} l where {} returning {}").format(
                table, nulled([child for _, child in related.pairs]), sql.Identifier(parent), sql.Identifier(found),
                matched, answered,
            )  # fmt: skip
            self.add(Part(self.name(), body, Effect.UPDATE, related.target, related.target, (parent, found)))
            return
        name = self.name()
        body = sql.SQL("delete from {} c using {} p, {} l where {} returning {}").format(
            table, sql.Identifier(parent), sql.Identifier(found), matched, answered
        )
        missing = sql.SQL(
            "(select coalesce(json_agg(l.__n order by l.__n), '[]'::json) from {} l"
            " where not exists (select from {} c where {}))"
        ).format(sql.Identifier(found), sql.Identifier(name), equal(related.target_key, "c", "l"))
        status = (("missing", missing),)
        self.add(Part(name, body, Effect.DELETE, related.target, related.target, (parent, found), status=status))
        self.check(CheckKind.NOT_A_CHILD, name, "missing", at)

    def create_rows(
        self, related: RelatedWrite, at: Address, inherited: Sequence[Inherited], found: str | None
    ) -> list[str]:
        """New related rows: those without nested writes in one INSERT per shape (the columns they give), the
        others one by one; with `found` (connectOrCreate), only those whose key named no row. Answers the parts of
        the rows created."""
        skip, skip_uses = None, ()
        if found is not None:
            skip = sql.SQL("exists (select from {} l where l.__found and l.__n = s.__n)").format(sql.Identifier(found))
            skip_uses = (found,)
        created: list[str] = []
        for positions in batches(related.rows, lambda row: row.values.given):
            members = [((*at, "rows", p), related.rows[p]) for p in positions]
            if related.rows[positions[0]].related:
                inserted = self.insert_row(members[0][1], members[0][0], inherited)
            else:
                inserted = self.insert(
                    related.target, members, positions, inherited=inherited, skip=skip, skip_uses=skip_uses
                )
            created.append(inserted.rows)
        return created

    def _junction(self, related: RelatedWrite, at: Address, parent: str) -> None:
        """Many-to-many: junction rows between this row and the targets (`junction_parent_pairs`: this row's
        column, the junction's; `junction_pairs`: the junction's column, the target's). `disconnect` deletes the
        junction rows of the targets named (a target not related does nothing), `set` all the others first;
        `connect`, `set`, `create` and `connectOrCreate` then insert those of their targets (one already related
        keeps its junction row)."""
        junction = related.junction
        assert junction is not None
        kind = related.kind
        near, far = related.junction_parent_pairs, related.junction_pairs
        found = self.lookup(related, at) if related.keys else None
        if kind in (K.CONNECT, K.SET) and found is not None:
            self.check(CheckKind.KEY_NOT_FOUND, found, "missing", at)
        if kind is K.SET or (kind is K.DISCONNECT and found is not None):
            chosen = sql.SQL("true")
            if found is not None:
                exists = sql.SQL("exists (select from {} l where l.__found and {})").format(
                    sql.Identifier(found), paired(far, "j", "l")
                )
                chosen = exists if kind is K.DISCONNECT else sql.SQL("not {}").format(exists)
            body = sql.SQL("delete from {} j using {} p where {} and {} returning 1").format(
                qualified(junction), sql.Identifier(parent), holds(near, "j", "p"), chosen
            )
            uses = (parent, found) if found else (parent,)
            self.add(Part(self.name(), body, Effect.DELETE, junction, None, uses))
        if kind is K.DISCONNECT:
            return
        targets = [target for _, target in far]
        queries: list[sql.Composable] = []
        uses_targets: list[str] = []
        if found is not None:
            queries.append(found_rows(found, targets))
            uses_targets.append(found)
        if kind in (K.CREATE, K.CONNECT_OR_CREATE):
            for created in self.create_rows(related, at, [], found):
                queries.append(sql.SQL("select {} from {} c").format(columns_of("c", targets), sql.Identifier(created)))
                uses_targets.append(created)
        if not queries:
            return
        body = sql.SQL(
            "insert into {} ({}) select {}, {} from {} p cross join ({}) l on conflict do nothing returning 1"
        ).format(
            qualified(junction), names([*(j for _, j in near), *(j for j, _ in far)]),
            columns_of("p", [local for local, _ in near]), columns_of("l", targets), sql.Identifier(parent),
            union(queries),
        )  # fmt: skip
        self.add(Part(self.name(), body, Effect.INSERT, junction, None, (parent, *uses_targets)))

    def _sync(self, related: RelatedWrite, at: Address, parent: str) -> None:
        """`sync`: the children become exactly the rows given, in one merge: a row whose key names a child of this
        row updates it (a column the row leaves out keeps its value), the others are inserted (a column they leave
        out takes its default, so they are grouped by the columns they give), and the children no row names are
        deleted. The update and the delete touch different children: one statement."""
        table = qualified(related.target)
        key = related.target_key
        fk = tuple(child for _, child in related.pairs)
        everyone = tuple(range(len(related.rows)))
        rows = self.value(Source(Value.ROWS, tuple((*at, "rows", p) for p in everyone), everyone, omit=fk))
        source = sql.SQL("({}) s").format(rows_of(related.target, rows))
        of_parent = sql.SQL("({}) = (select {} from {} p)").format(
            columns_of("t", fk), columns_of("p", [local for local, _ in related.pairs]), sql.Identifier(parent)
        )
        named = sql.SQL("{} and {}").format(equal(key, "t", "s"), of_parent)
        given = tuple(dict.fromkeys(c for r in related.rows for c in r.values.given if c not in fk and c not in key))
        merged: list[str] = []
        if given:
            body = sql.SQL(
                "update {} t set ({}) = (select {} from json_populate_record(t, s.__v) r) from {} where {} returning 1"
            ).format(table, names(given), columns_of("r", given), source, named)
            merged.append(self.add(Part(self.name(), body, Effect.UPDATE, related.target, None, (parent,))))
        shapes: dict[tuple[str, ...], list[int]] = {}
        for position, row in enumerate(related.rows):
            keyed = all(c in row.values.given and c not in row.values.nulls for c in key)
            shape = tuple(c for c in row.values.given if c not in fk and (keyed or c not in key))
            shapes.setdefault(shape, []).append(position)
        for shape, positions in shapes.items():
            group = self.value(
                Source(Value.ROWS, tuple((*at, "rows", p) for p in positions), tuple(positions), omit=fk)
            )
            values = [*(sql.SQL("s.{}").format(sql.Identifier(c)) for c in shape)]
            values += [sql.SQL("p.{}").format(sql.Identifier(local)) for local, _ in related.pairs]
            body = sql.SQL(
                "insert into {t} ({columns}) select {values} from ({source}) s cross join {p} p"
                " where not exists (select from {t} t where {named}) order by s.__n returning 1"
            ).format(
                t=table, columns=names([*shape, *fk]), values=sql.SQL(", ").join(values),
                source=rows_of(related.target, group), p=sql.Identifier(parent), named=named,
            )  # fmt: skip
            merged.append(self.add(Part(self.name(), body, Effect.INSERT, related.target, None, (parent,))))
        body = sql.SQL("delete from {} t where {} and not exists (select from {} where {}) returning 1").format(
            table, of_parent, source, equal(key, "t", "s")
        )
        self.add(Part(self.name(), body, Effect.DELETE, related.target, None, (parent,), (), tuple(merged)))


def batches(rows: Sequence[RowWrite], shape: Callable[[RowWrite], object]) -> list[list[int]]:
    """Positions of rows written together: rows without nested writes by their shape (`shape(row)`: one INSERT
    each), a row with nested writes alone; in the order of each batch's first row, so rows land in the order given
    where shapes do not interleave."""
    result: list[list[int]] = []
    shapes: dict[object, list[int]] = {}
    for position, row in enumerate(rows):
        if row.related:
            result.append([position])
            continue
        batch = shapes.get(shape(row))
        if batch is None:
            batch = shapes[shape(row)] = []
            result.append(batch)
        batch.append(position)
    return result


def referred(related: RelatedWrite, row: str) -> Condition:
    """The row a to-one relation of `row` refers to (its target columns hold the row's)."""
    targets = tuple(target for _, target in related.pairs)
    where = sql.SQL("({}) = (select {} from {} n)").format(
        columns_of("t", targets), columns_of("n", [local for local, _ in related.pairs]), sql.Identifier(row)
    )
    return Condition(where, (row,), targets)


def holds(pairs: Sequence[tuple[str, str]], child: str, parent: str) -> sql.Composable:
    """The child's columns hold the parent's (`pairs`: the parent's column, the child's)."""
    return paired([(c, p) for p, c in pairs], child, parent)
