"""The checks of a write's status answers into typed errors (SPEC "Mutations", "Nested writes"): a key that names no
row, an update of a row that is not there, a version that changed, a child that is not this row's, more rows than a
write by filter may touch. Checked in plan order after each statement, so the first problem a client would meet
writing row by row is the one it is told of."""

from collections.abc import Mapping, Sequence
from typing import Any

from svc.errors import Code, SvcError
from svc.model import EntityRef, ErrorKind, Model
from svc.plan import BulkWrite, DeleteWrite, KeyLookup, RelatedWrite, RowWrite, Table, render_path, typed_error
from svc.sql import Check, CheckKind, WriteTree, resolve


def first_failure(
    checks: Sequence[Check], status: Mapping[str, Any], write: WriteTree, model: Model
) -> SvcError | None:
    """The error of the first check (in plan order) among those `status` answers that fails."""
    for check in checks:
        if check.member in status:
            error = _failure(check, status[check.member], write, model)
            if error is not None:
                return error
    return None


def _failure(check: Check, value: Any, write: WriteTree, model: Model) -> SvcError | None:
    kind = check.kind
    node = resolve(write, check.at)
    if kind in (CheckKind.ROW_MISSING, CheckKind.STALE, CheckKind.CHILD_MISSING, CheckKind.BULK_LIMIT):
        matched, written = int(value["matched"]), int(value["written"])
        if kind is CheckKind.BULK_LIMIT:
            assert isinstance(node, BulkWrite) and node.limit is not None
            return _bulk_limit(node.limit, matched) if matched > node.limit else None
        if kind is CheckKind.STALE:
            assert isinstance(node, RowWrite | DeleteWrite)
            return _stale(model, node.table, node.version_field) if matched and not written else None
        if matched:
            return None
        assert isinstance(node, RowWrite)
        if kind is CheckKind.CHILD_MISSING:
            assert node.where is not None
            return _not_a_child(resolve(write, check.at[:-2]), node.where)
        if node.where is not None:
            return _not_found(model, node.table, node.where)
        # The row a to-one `update` changes: the one this row refers to, and it refers to none.
        related: RelatedWrite = resolve(write, check.at[:-2])
        return _not_found(model, node.table, KeyLookup((), related.path))
    if not value:
        return None
    assert isinstance(node, RelatedWrite)
    key = node.keys[int(value[0])]
    if kind is CheckKind.RELATION_NOT_FOUND:
        owner: RowWrite = resolve(write, check.at[:-2])
        return _relation_not_found(model, owner.table, node, key)
    if kind is CheckKind.KEY_NOT_FOUND:
        return _not_found(model, node.target, key)
    return _not_a_child(node, key)


def _entity(model: Model, table: Table) -> Any:
    return model.entity(EntityRef(table.schema, table.name))


def _stale(model: Model, table: Table, field: str) -> SvcError:
    entity = _entity(model, table)
    code = next(c for c in entity.error_codes if c.kind is ErrorKind.STALE_VERSION)
    error = typed_error(code, entity, [field], "the row has changed since that version was read")
    return SvcError(Code.STALE_VERSION, error.message, extensions=error.extensions, code_name="STALE_VERSION")


def _not_found(model: Model, table: Table, lookup: KeyLookup) -> SvcError:
    if lookup.missing is not None:
        return lookup.missing
    path = render_path(lookup.path)
    entity = _entity(model, table)
    return SvcError(Code.NOT_FOUND, f"no {entity.type_name} matches {path}", extensions={"fields": [path]})


def _not_a_child(related: RelatedWrite, lookup: KeyLookup) -> SvcError:
    path = render_path(lookup.path)
    return SvcError(
        Code.NOT_FOUND, f"{path} names no row of {related.relation} of this row", extensions={"fields": [path]}
    )


def _relation_not_found(model: Model, table: Table, related: RelatedWrite, lookup: KeyLookup) -> SvcError:
    """`connect` to a row that does not exist: the relation's `<RELATION>_NOT_FOUND`."""
    entity = _entity(model, table)
    columns = tuple(local for local, _ in related.pairs)
    code = next(
        (c for c in entity.error_codes if c.kind is ErrorKind.FOREIGN_KEY and c.columns == columns),
        None,
    )
    if code is None:
        return _not_found(model, related.target, lookup)
    path = render_path(lookup.path)
    return typed_error(code, entity, [path], f"no {related.relation} matches {path}")


def _bulk_limit(limit: int, matched: int) -> SvcError:
    return SvcError(
        Code.BULK_LIMIT_EXCEEDED,
        f"{matched} rows match, more than {limit} a write by filter may touch",
        extensions={"limit": limit, "actual": matched},
    )
