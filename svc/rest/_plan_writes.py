"""REST writes into mutation plans (SPEC "REST API" -> writes): bodies into write plans shared with GraphQL
(`svc/plan`'s `WriteInputs`, naming paths as REST does), each one mutation step whose payload read answers the
rows written, by key (their relations as they are now).

The payload read's roots (`_planned.py`): the row or rows (deleted rows, and rows of tables without a key, as the
write answered them), the version of a row written (`ETag`), the row as it was (`Prefer: previous`). A created row's
key (`Location`) and how many rows a write by filter touched (`X-Affected-Count`) are the write's own answer. Written
rows are never decoded: only a version and the key are read back as small JSON.

The row a URL names is `KeyLookup.missing` when it does not exist (404 "no <Type> has the key ..."), and a version
expected by `If-Match` that no longer holds names `If-Match` (412 STALE_VERSION).
"""

from typing import Any

import attrs

from svc.config import LimitsConfig
from svc.model import Entity, Model
from svc.plan import (
    Arguments,
    BulkWrite,
    ColumnRef,
    DeleteWrite,
    EntityIndex,
    Filter,
    JsonRows,
    KeyIn,
    KeyPosition,
    MutationPlan,
    MutationStep,
    OrderItem,
    Param,
    Params,
    Read,
    ReadKind,
    ReadPlan,
    RootField,
    RowWrite,
    Shape,
    Slots,
    Write,
    WriteInputs,
    row_version,
    table,
    without_versions,
)

from ._api_request import Action, ApiRequest, Changes, Rows, Selection
from ._plan_names import BODY, FILTERS
from ._plan_reads import ReadRun
from ._planned import PREVIOUS, ROW, VERSION, PlannedWrite

_IF_MATCH = "If-Match"


class WritePlanner:
    """Plans REST writes against one model."""

    def __init__(self, model: Model, index: EntityIndex, limits: LimitsConfig) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.inputs = WriteInputs(model, BODY)

    def plan(self, api: ApiRequest) -> PlannedWrite:
        entity, action, selection = api.entity, api.action, api.listing.selection
        if action is Action.CREATE:
            rows = api.body
            assert isinstance(rows, Rows)
            if rows.many:
                writes = tuple(self.inputs.create(entity, row, ("inputs", i)) for i, row in enumerate(rows.rows))
                return self._step(entity, writes, selection, _Answer(many=True))
            write = self.inputs.create(entity, rows.rows[0], ("input",))
            return self._step(entity, write, selection, _Answer(key=True))
        if action is Action.UPSERT:
            return self._step(entity, self._upserts(entity, api), selection, _Answer(many=True))
        if action in (Action.UPDATE_WHERE, Action.DELETE_WHERE):
            return self._by_filter(entity, api)
        key = api.key
        assert key is not None
        expected = api.preconditions.expected
        if action is Action.DELETE_ROW:
            assert entity.primary_key is not None
            delete = DeleteWrite(
                table(entity), entity.primary_key, key.lookup, expected, entity.version_column, _IF_MATCH
            )
            return self._step(entity, delete, selection, _Answer(deleting=True))
        changes = api.body
        assert isinstance(changes, Changes)
        previous = api.preferences.previous and action is not Action.WRITE_COLUMN
        if changes.create:  # PUT without If-Match: insert, or update the row the URL's key names
            key_fields = [_field_name(entity, column) for column, _ in key.lookup.values]
            on_conflict: dict[str, Any] = {"columns": key_fields}
            if not [name for name in changes.values if name not in key_fields and entity.field(name) is not None]:
                on_conflict["update"] = []
            write = self.inputs.create(entity, changes.values, ("input",), on_conflict=on_conflict, previous=previous)
        else:
            must_exist = api.preconditions.must_exist or action in (Action.PUT_ROW, Action.WRITE_COLUMN)
            write = self.inputs.update(
                entity, key.lookup, changes.values, ("input",), expected_version=expected, version_field=_IF_MATCH,
                previous=previous, must_exist=must_exist,
            )  # fmt: skip
        if action is Action.WRITE_COLUMN:
            selection = Selection()
        return self._step(entity, write, selection, _Answer(previous=previous))

    def _upserts(self, entity: Entity, api: ApiRequest) -> tuple[RowWrite, ...]:
        """Bulk upsert (SPEC "Writes" 6): each row an upsert over the conflict key (`conflict=` names it)."""
        rows = api.body
        assert isinstance(rows, Rows) and rows.conflict is not None
        conflict = rows.conflict
        on_conflict: dict[str, Any] = {"columns": list(conflict.fields)}
        if conflict.ignore:
            on_conflict["action"] = "NOTHING"
        elif conflict.update is not None:
            on_conflict["update"] = list(conflict.update)
        return tuple(
            self.inputs.create(entity, row, ("inputs", i), on_conflict=on_conflict, conflict_path=("conflict",))
            for i, row in enumerate(rows.rows)
        )

    def _by_filter(self, entity: Entity, api: ApiRequest) -> PlannedWrite:
        """Collection PATCH/DELETE (SPEC "Writes" 5): rows by filter, at most `limits.bulk_rows`, in key order."""
        # The filter's values are the write statement's first parameters, apart from the payload's.
        filter_params = Params()
        arguments = Arguments(self.model, self.index, self.limits, filter_params, FILTERS)
        condition = arguments.filter(entity, api.listing.filter, ["filter"])
        values = None
        if api.action is Action.UPDATE_WHERE:
            changes = api.body
            assert isinstance(changes, Changes)
            values = self.inputs.bulk_values(entity, changes.values, ("input",))
        write = BulkWrite(
            table(entity), entity.primary_key, condition, values, self.limits.bulk_rows,
            filter_values=tuple(filter_params.values),
        )  # fmt: skip
        deleting = api.action is Action.DELETE_WHERE
        answer = _Answer(many=True, key_order=True, affected=True, deleting=deleting)
        return self._step(entity, write, Selection(), answer)

    def _step(
        self, entity: Entity, write: Write | tuple[RowWrite, ...], selection: Selection, answer: "_Answer"
    ) -> PlannedWrite:
        """The write, and the read of what it answers."""
        run = ReadRun(self.model, self.index, self.limits)
        payload = _Payload(run, entity)
        roots = payload.roots(selection, answer)
        step = MutationStep(
            "rest",
            write=write,
            payload=ReadPlan(roots),
            payload_values=tuple(run.params.values),
            slots=payload.slots(),
            key_columns=entity.primary_key or (),
        )
        return PlannedWrite(MutationPlan((step,)), location=answer.key, affected=answer.affected)


@attrs.frozen
class _Answer:
    """What a write's answer gives back: one row or `many` (in the order written, or with `key_order` in the key's),
    the row as it was (`previous`), a created row's key (`key`), how many rows were written (`affected`: both of
    these as the write itself answered them); `deleting`: the rows are gone, and are read as the write answered
    them."""

    many: bool = False
    previous: bool = False
    key_order: bool = False
    key: bool = False
    affected: bool = False
    deleting: bool = False


class _Payload:
    """The payload read of one write, and its parameters the write fills: the written rows' keys, the rows as the
    write answered them, the rows as they were."""

    def __init__(self, run: ReadRun, entity: Entity) -> None:
        self.run = run
        self.entity = entity
        self._slots: dict[str, Param] = {}

    def slot(self, name: str) -> Param:
        if name not in self._slots:
            self._slots[name] = self.run.params.add(None, "json")
        return self._slots[name]

    def slots(self) -> Slots:
        return Slots(*(self._slots[n].index if n in self._slots else None for n in ("keys", "rows", "previous")))

    def roots(self, selection: Selection, answer: _Answer) -> tuple[RootField, ...]:
        """The rows written read by key (their relations as they are now), or for deleted rows and tables without a
        key as the write answered them; and what else `answer` asks for."""
        entity, written_to = self.entity, table(self.entity)
        shape = self.run.shape(entity, selection)
        kind = ReadKind.MANY if answer.many else ReadKind.ONE
        primary = entity.primary_key or ()
        in_key_order = tuple(OrderItem(ColumnRef(c), nullable=False) for c in primary)
        roots: list[RootField] = []
        if primary and not answer.deleting:
            keys = self.slot("keys")
            condition: Filter = KeyIn(written_to, primary, keys)
            as_written = (OrderItem(KeyPosition(written_to, primary, keys), nullable=False),)
            order = in_key_order if answer.key_order else as_written
            roots.append(RootField(ROW, Read(written_to, shape, kind, filter=condition, order=order)))
            if not answer.many:
                version = Shape((row_version("v", entity),))
                roots.append(RootField(VERSION, Read(written_to, version, ReadKind.ONE, filter=condition)))
        else:
            written = JsonRows(written_to, self.slot("rows"))
            order = in_key_order if answer.key_order else ()
            roots.append(RootField(ROW, Read(written, without_versions(shape), kind, order=order)))
        if answer.previous:
            before = JsonRows(written_to, self.slot("previous"))
            roots.append(RootField(PREVIOUS, Read(before, without_versions(shape), ReadKind.ONE)))
        return tuple(roots)


def _field_name(entity: Entity, column: str) -> str:
    field = entity.field_of_column(column)
    assert field is not None
    return field.name
