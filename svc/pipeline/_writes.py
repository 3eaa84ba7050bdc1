"""Running a write plan (SPEC "Mutations", "Nested writes"): statements in order inside the caller's transaction, keys
flowing from earlier statements to later ones, database errors typed by the catalog.

Order for a row: to-one writes first (this row holds their keys), then the row, then to-many and many-to-many writes
(their rows hold this row's key). `set` on a to-many relation disconnects the other children before the listed
ones are connected and new ones created, so the children end as exactly those listed plus those created.
"""

import decimal
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import psycopg

from svc.config import ErrorsConfig
from svc.db import Transaction
from svc.errors import Code, SvcError
from svc.model import EntityRef, ErrorKind, Model
from svc.plan import (
    And,
    BulkWrite,
    DeleteRows,
    DeleteWrite,
    Filter,
    InsertRows,
    KeyIn,
    KeyLookup,
    LinkRows,
    Not,
    OnConflict,
    Or,
    Params,
    RelatedWrite,
    RelationWriteKind,
    RowWrite,
    SelectRows,
    Statement,
    SyncRows,
    Table,
    UpdateRows,
    Version,
    render_path,
    typed_error,
)
from svc.sql import compile_write

from ._errors import RowInput, write_error

Row = dict[str, Any]
K = RelationWriteKind


@attrs.frozen
class Written:
    """A row as it is after its write, as it was before (updates and upserts; None when inserted)."""

    row: Row | None
    previous: Row | None = None
    inserted: bool = False


@attrs.frozen
class Bulk:
    rows: list[Row]
    previous: list[Row]


class WriteCache:
    """Compiled write statements by shape (per snapshot), each answering the columns of its table the model reads."""

    def __init__(self, model: Model) -> None:
        self._texts: dict[Statement, str] = {}
        self._returned = returned_columns(model)

    def text(self, statement: Statement) -> str:
        found = self._texts.get(statement)
        if found is None:
            answered = statement
            if isinstance(statement, (InsertRows, UpdateRows, DeleteRows, SelectRows)):
                returned = self._returned.get(EntityRef(statement.table.schema, statement.table.name))
                answered = attrs.evolve(statement, returned=returned)
            found = self._texts[statement] = compile_write(answered)
        return found


def returned_columns(model: Model) -> dict[EntityRef, tuple[str, ...]]:
    """The columns a write answers per table: the model's fields, keys and version column, and the columns relations
    join on (written rows give the keys later statements need). Columns the model leaves out are not answered: with
    `rbac.enabled` they may be columns the role cannot read, and a statement naming one would be refused whole."""
    needed: dict[EntityRef, dict[str, None]] = {}
    for entity in model.entities:
        columns = needed.setdefault(entity.ref, {})
        columns.update(dict.fromkeys(entity.primary_key or ()))
        columns.update(dict.fromkeys(field.column for field in entity.fields))
        if entity.version_column:
            columns[entity.version_column] = None
        for lookup in entity.lookups:
            columns.update(dict.fromkeys(lookup.columns))
        for relation in entity.relations:
            columns.update(dict.fromkeys(local for local, _ in relation.pairs))
            if relation.junction is None:
                needed.setdefault(relation.target, {}).update(dict.fromkeys(remote for _, remote in relation.pairs))
            else:
                junction = needed.setdefault(relation.junction, {})
                junction.update(dict.fromkeys(remote for _, remote in relation.pairs))
                junction.update(dict.fromkeys(near for near, _ in relation.junction_pairs))
                needed.setdefault(relation.target, {}).update(dict.fromkeys(far for _, far in relation.junction_pairs))
        for hierarchy in entity.hierarchies:
            columns.update(dict.fromkeys(column for pair in hierarchy.pairs for column in pair))
    return {ref: tuple(columns) for ref, columns in needed.items() if columns}


class WriteRunner:
    """Runs writes in one open transaction; each public method is one client-visible write."""

    def __init__(self, tx: Transaction, model: Model, errors: ErrorsConfig, cache: WriteCache) -> None:
        self._tx = tx
        self._model = model
        self._errors = errors
        self._cache = cache

    # --- statements --------------------------------------------------------------------------------------------

    async def _run(
        self, statement: Statement, params: Params, inputs: Sequence[RowInput] = (), table: Table | None = None
    ) -> dict[str, Any]:
        try:
            (text,) = await self._tx.fetch_raw(self._cache.text(statement), params.named())
        except psycopg.Error as exc:
            ref = EntityRef(table.schema, table.name) if table else None
            error = write_error(exc, self._model, self._errors, inputs, ref)
            if error is None:
                raise
            raise error from exc
        assert text is not None
        return json.loads(text, parse_float=decimal.Decimal)

    def _entity(self, table: Table):  # type: ignore[no-untyped-def]
        return self._model.entity(EntityRef(table.schema, table.name))

    # --- one row -----------------------------------------------------------------------------------------------

    async def row(self, write: RowWrite) -> Written:
        """Create, upsert or update one row with its nested writes."""
        values = dict(write.values.values)
        paths = dict(write.values.paths)
        to_one = [r for r in write.related if r.cardinality == "to_one"]
        for related in to_one:
            if related.kind is K.UPDATE:
                continue  # the referred row is updated once this row's keys are known
            referenced = await self._to_one(related, write)
            for local, target in related.pairs:
                values[local] = None if referenced is None else referenced[target]
                paths[local] = related.path
        if write.where is None:
            written = await self._insert(write, values, paths)
        else:
            written = await self._update(write, values, paths)
        if written.row is None:
            return written
        for related in to_one:
            if related.kind is K.UPDATE:
                await self._update_referred(related, written.row)
        for related in write.related:
            if related.cardinality != "to_one":
                await self._children(related, written.row)
        return written

    async def _insert(self, write: RowWrite, values: Row, paths: Mapping[str, tuple[str | int, ...]]) -> Written:
        params = Params()
        rows = params.add(encode_json([values]), "json")
        conflict = write.on_conflict if _names_its_key(write.on_conflict, values) else None
        statement = InsertRows(write.table, tuple(values), rows, conflict, previous=write.previous)
        answer = await self._run(statement, params, [RowInput(write.path, values, paths)], write.table)
        previous = (answer.get("previous") or [None])[0]
        return Written(answer["rows"][0], previous, answer["inserted"][0])

    async def _update(self, write: RowWrite, values: Row, paths: Mapping[str, tuple[str | int, ...]]) -> Written:
        assert write.where is not None and write.key is not None
        params = Params()
        where = self._key_filter(write.table, write.where, params)
        if values:
            columns, written = tuple(values), values
        else:  # only nested writes: the row is still touched (a key column set to itself): locked, found, checked
            column, value = write.where.values[0]
            columns, written = (column,), {column: value}
        row = params.add(encode_json(written), "json")
        version = self._version(write.expected_version, write.version_column, params)
        statement = UpdateRows(write.table, write.key, where, columns, row, version, previous=write.previous)
        answer = await self._run(statement, params, [RowInput(write.path, values, paths)], write.table)
        if answer["matched"] == 0:
            if write.must_exist or write.related:
                raise self._not_found(write.table, write.where)
            return Written(None)
        if not answer["rows"]:
            raise self._stale(write.table)
        previous = answer.get("previous") or [None]
        return Written(answer["rows"][0], previous[0])

    async def delete(self, write: DeleteWrite) -> Row | None:
        """One row by key: the row as it was deleted, None when there is none."""
        params = Params()
        where = self._key_filter(write.table, write.where, params)
        version = self._version(write.expected_version, write.version_column, params)
        answer = await self._run(DeleteRows(write.table, write.key, where, version), params, table=write.table)
        if answer["matched"] == 0:
            return None
        if not answer["rows"]:
            raise self._stale(write.table)
        return answer["rows"][0]

    async def bulk(self, write: BulkWrite) -> Bulk:
        """Rows by filter, at most `limit` of them, else nothing is written and BULK_LIMIT_EXCEEDED."""
        assert write.key is not None
        params = Params()
        params.values.extend(write.filter_values)
        limit = params.add(write.limit, "bigint") if write.limit is not None else None
        if write.values is None:
            statement: Statement = DeleteRows(write.table, write.key, write.filter, limit=limit)
        else:
            values = dict(write.values.values)
            row = params.add(encode_json(values), "json")
            statement = UpdateRows(write.table, write.key, write.filter, tuple(values), row, limit=limit,
                                   previous=write.previous)  # fmt: skip
        inputs = [RowInput((), dict(write.values.values), dict(write.values.paths))] if write.values else []
        answer = await self._run(statement, params, inputs, write.table)
        if write.limit is not None and answer["matched"] > write.limit:
            raise SvcError(
                Code.BULK_LIMIT_EXCEEDED,
                f"{answer['matched']} rows match, more than {write.limit} a write by filter may touch",
                extensions={"limit": write.limit, "actual": answer["matched"]},
            )
        return Bulk(answer["rows"], answer.get("previous") or [])

    async def rows(self, writes: Sequence[RowWrite]) -> list[Written]:
        """Several rows (`create<Types>`): one INSERT for rows of the same columns and no nested writes."""
        writes = [
            attrs.evolve(w, on_conflict=None)
            if not w.related and not _names_its_key(w.on_conflict, dict(w.values.values))
            else w
            for w in writes
        ]
        shapes = {(w.values.columns(), w.on_conflict) for w in writes}
        if len(shapes) == 1 and all(not w.related and w.where is None for w in writes):
            return await self._insert_many(writes)
        return [await self.row(write) for write in writes]

    async def _insert_many(self, writes: Sequence[RowWrite]) -> list[Written]:
        first = writes[0]
        params = Params()
        values = [dict(w.values.values) for w in writes]
        rows = params.add(encode_json(values), "json")
        statement = InsertRows(first.table, first.values.columns(), rows, first.on_conflict, previous=first.previous)
        inputs = [RowInput(w.path, dict(w.values.values), dict(w.values.paths)) for w in writes]
        answer = await self._run(statement, params, inputs, first.table)
        previous = answer.get("previous") or [None] * len(writes)
        return [Written(r, p, i) for r, p, i in zip(answer["rows"], previous, answer["inserted"], strict=True)]

    # --- related rows ------------------------------------------------------------------------------------------

    async def _to_one(self, related: RelatedWrite, owner: RowWrite) -> Row | None:
        """The row a to-one relation is set to (None to disconnect)."""
        if related.kind is K.DISCONNECT:
            return None
        if related.kind is K.CREATE:
            return (await self.row(related.rows[0])).row
        (lookup,) = related.keys
        found = await self._lookup(related.target, lookup)
        if found is not None:
            return found
        if related.kind is K.CONNECT_OR_CREATE:
            return (await self.row(related.rows[0])).row
        raise self._relation_not_found(owner.table, related, lookup)

    async def _update_referred(self, related: RelatedWrite, row: Row) -> None:
        """`update` on a to-one relation: the row this row refers to now."""
        (data,) = related.rows
        where = KeyLookup(tuple((target, row[local]) for local, target in related.pairs), related.path)
        await self.row(attrs.evolve(data, where=where, must_exist=True))

    async def _children(self, related: RelatedWrite, parent: Row) -> None:
        if related.cardinality == "many_to_many":
            await self._junction(related, parent)
            return
        fk = {child: parent[local] for local, child in related.pairs}
        kind = related.kind
        if kind is K.SET:
            await self._release_others(related, fk)
        if kind in (K.CONNECT, K.SET):
            for lookup in related.keys:
                await self._adopt(related, lookup, fk)
        elif kind is K.CREATE:
            for row in related.rows:
                await self.row(_with_values(row, fk, related.path))
        elif kind is K.CONNECT_OR_CREATE:
            for lookup, row in zip(related.keys, related.rows, strict=True):
                if await self._lookup(related.target, lookup) is None:
                    await self.row(_with_values(row, fk, related.path))
                else:
                    await self._adopt(related, lookup, fk)
        elif kind is K.DISCONNECT:
            for lookup in related.keys:
                await self._update_children(related, lookup, fk, dict.fromkeys(fk), required=False)
        elif kind is K.UPDATE:
            for row in related.rows:
                assert row.where is not None
                await self._update_child(related, row, fk)
        elif kind is K.DELETE:
            for lookup in related.keys:
                await self._delete_child(related, lookup, fk)
        else:
            assert kind is K.SYNC
            await self._sync(related, fk)

    async def _adopt(self, related: RelatedWrite, lookup: KeyLookup, fk: Row) -> None:
        """`connect` on a to-many relation: the child moves here."""
        params = Params()
        where = self._key_filter(related.target, lookup, params)
        row = params.add(encode_json(fk), "json")
        statement = UpdateRows(related.target, related.target_key, where, tuple(fk), row)
        answer = await self._run(statement, params, [RowInput(lookup.path, fk, {})], related.target)
        if answer["matched"] == 0:
            raise self._not_found(related.target, lookup)

    async def _update_children(
        self, related: RelatedWrite, lookup: KeyLookup, fk: Row, values: Row, *, required: bool
    ) -> int:
        """Update a child of this row named by `lookup` (only a child of this row: its keys must hold ours)."""
        params = Params()
        where = And((self._key_filter(related.target, lookup, params), self._holds(fk, params, related.target)))
        row = params.add(encode_json(values), "json")
        statement = UpdateRows(related.target, related.target_key, where, tuple(values), row)
        answer = await self._run(statement, params, [RowInput(lookup.path, values, {})], related.target)
        if required and answer["matched"] == 0:
            raise self._not_a_child(related, lookup)
        return int(answer["matched"])

    async def _update_child(self, related: RelatedWrite, row: RowWrite, fk: Row) -> None:
        """`update` on a to-many relation: only a child of this row (else the mutation fails)."""
        assert row.where is not None
        if await self._lookup(related.target, row.where, also=fk) is None:
            raise self._not_a_child(related, row.where)
        await self.row(attrs.evolve(row, must_exist=True))

    async def _delete_child(self, related: RelatedWrite, lookup: KeyLookup, fk: Row) -> None:
        params = Params()
        where = And((self._key_filter(related.target, lookup, params), self._holds(fk, params, related.target)))
        answer = await self._run(DeleteRows(related.target, related.target_key, where), params, table=related.target)
        if answer["matched"] == 0:
            raise self._not_a_child(related, lookup)

    async def _release_others(self, related: RelatedWrite, fk: Row) -> None:
        """`set`: the children not listed let go of this row (their keys set NULL)."""
        params = Params()
        listed = [self._key_filter(related.target, lookup, params) for lookup in related.keys]
        where: Filter = self._holds(fk, params, related.target)
        if listed:
            where = And((where, Not(Or(tuple(listed)))))
        row = params.add(encode_json(dict.fromkeys(fk)), "json")
        statement = UpdateRows(related.target, related.target_key, where, tuple(fk), row)
        await self._run(statement, params, [RowInput(related.path, dict.fromkeys(fk), {})], related.target)

    async def _sync(self, related: RelatedWrite, fk: Row) -> None:
        """`sync`: one merge statement; the children become exactly the rows given."""
        params = Params()
        rows = [{c: v for c, v in row.values.values if c not in fk} for row in related.rows]
        groups: dict[tuple[str, ...], list[Row]] = {}
        for row in rows:
            keyed = all(row.get(c) is not None for c in related.target_key)
            groups.setdefault(tuple(row) if keyed else tuple(c for c in row if c not in related.target_key), []).append(
                row
            )
        statement = SyncRows(
            related.target,
            related.target_key,
            tuple(dict.fromkeys(c for row in rows for c in row if c not in related.target_key)),
            tuple(fk),
            params.add(encode_json(fk), "json"),
            params.add(encode_json(rows), "json"),
            tuple((columns, params.add(encode_json(group), "json")) for columns, group in groups.items()),
        )
        inputs = [RowInput(row.path, dict(row.values.values), dict(row.values.paths)) for row in related.rows]
        await self._run(statement, params, inputs, related.target)

    async def _junction(self, related: RelatedWrite, parent: Row) -> None:
        """Many-to-many: junction rows between this row and the targets."""
        assert related.junction is not None
        near = {junction: parent[local] for local, junction in related.junction_parent_pairs}
        kind = related.kind
        if kind in (K.DISCONNECT, K.SET):
            await self._unlink(related, near, keep=kind is K.SET)
            if kind is K.DISCONNECT:
                return
        targets: list[Row] = []
        if kind in (K.CONNECT, K.SET):
            for lookup in related.keys:
                found = await self._lookup(related.target, lookup)
                if found is None:
                    raise self._not_found(related.target, lookup)
                targets.append(found)
        elif kind is K.CREATE:
            targets = [(await self.row(row)).row or {} for row in related.rows]
        else:
            assert kind is K.CONNECT_OR_CREATE
            for lookup, row in zip(related.keys, related.rows, strict=True):
                targets.append(await self._lookup(related.target, lookup) or (await self.row(row)).row or {})
        if not targets:
            return
        links = [
            {**near, **{junction: target[column] for junction, column in related.junction_pairs}} for target in targets
        ]
        params = Params()
        statement = LinkRows(related.junction, tuple(links[0]), params.add(encode_json(links), "json"))
        await self._run(statement, params, [RowInput(related.path, link, {}) for link in links], related.junction)

    async def _unlink(self, related: RelatedWrite, near: Row, *, keep: bool) -> None:
        """Delete junction rows of this row: those of the listed targets, or (`keep`, for `set`) all others."""
        assert related.junction is not None
        params = Params()
        listed: list[Filter] = []
        for lookup in related.keys:
            target = await self._lookup(related.target, lookup)
            if target is None:
                if keep:
                    raise self._not_found(related.target, lookup)
                continue  # disconnecting a row that is not related does nothing
            far = {junction: target[column] for junction, column in related.junction_pairs}
            listed.append(self._holds(far, params, related.junction))
        if not keep and not listed:
            return
        chosen: Filter = Or(tuple(listed)) if not keep else Not(Or(tuple(listed)))
        where = And((self._holds(near, params, related.junction), chosen))
        junction_key = tuple(c for c in (*near, *(j for j, _ in related.junction_pairs)))
        await self._run(DeleteRows(related.junction, junction_key, where), params, table=related.junction)

    # --- lookups and filters -----------------------------------------------------------------------------------

    async def _lookup(self, table: Table, lookup: KeyLookup, also: Row | None = None) -> Row | None:
        params = Params()
        where: Filter = self._key_filter(table, lookup, params)
        if also:
            where = And((where, self._holds(also, params, table)))
        answer = await self._run(SelectRows(table, where), params, table=table)
        return answer["rows"][0] if answer["rows"] else None

    def _key_filter(self, table: Table, lookup: KeyLookup, params: Params) -> Filter:
        return self._holds(dict(lookup.values), params, table)

    def _holds(self, values: Mapping[str, Any], params: Params, table: Table) -> Filter:
        """Rows whose columns hold these values, compared as the table's own types (the values come as JSON, read
        with the table's row type: hidden columns and every type compare alike)."""
        return KeyIn(table, tuple(values), params.add(encode_json([values]), "json"))

    def _version(self, expected: Any, column: str | None, params: Params) -> Version | None:
        return None if expected is None else Version(column, params.add(str(expected), "text"))

    # --- errors ------------------------------------------------------------------------------------------------

    def _stale(self, table: Table) -> SvcError:
        entity = self._entity(table)
        code = next(c for c in entity.error_codes if c.kind is ErrorKind.STALE_VERSION)
        error = typed_error(code, entity, ["expectedVersion"], "the row has changed since that version was read")
        return SvcError(Code.STALE_VERSION, error.message, extensions=error.extensions, code_name="STALE_VERSION")

    def _not_found(self, table: Table, lookup: KeyLookup) -> SvcError:
        entity = self._entity(table)
        return SvcError(
            Code.NOT_FOUND,
            f"no {entity.type_name} matches {render_path(lookup.path)}",
            extensions={"fields": [render_path(lookup.path)]},
        )

    def _not_a_child(self, related: RelatedWrite, lookup: KeyLookup) -> SvcError:
        return SvcError(
            Code.NOT_FOUND,
            f"{render_path(lookup.path)} names no row of {related.relation} of this row",
            extensions={"fields": [render_path(lookup.path)]},
        )

    def _relation_not_found(self, table: Table, related: RelatedWrite, lookup: KeyLookup) -> SvcError:
        """`connect` to a row that does not exist: the relation's `<RELATION>_NOT_FOUND`."""
        entity = self._entity(table)
        code = next(
            (
                c
                for c in entity.error_codes
                if c.kind is ErrorKind.FOREIGN_KEY and c.columns == tuple(p for p, _ in related.pairs)
            ),
            None,
        )
        if code is None:
            return self._not_found(related.target, lookup)
        return typed_error(
            code, entity, [render_path(lookup.path)], f"no {related.relation} matches {render_path(lookup.path)}"
        )


def _names_its_key(conflict: OnConflict | None, values: Row) -> bool:
    """Whether an upsert's row gives every column of its conflict key. One that leaves a column to its default (an
    identity) or NULL cannot name an existing row: it is a plain insert, which also lets the statement's answer find
    the row (an upsert's answer matches the rows it wrote to the rows given by their key values)."""
    return conflict is None or all(values.get(column) is not None for column in conflict.columns)


def _with_values(row: RowWrite, values: Row, path: tuple[str | int, ...]) -> RowWrite:
    """A child row with this row's key in its foreign key columns (their path: the relation's input)."""
    merged = dict(row.values.values) | values
    paths = dict(row.values.paths) | {column: path for column in values}
    return attrs.evolve(row, values=attrs.evolve(row.values, values=tuple(merged.items()), paths=tuple(paths.items())))


def encode_json(value: Any) -> str:
    """Values for a JSON parameter (numbers kept exact: Decimal as its text)."""
    return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
