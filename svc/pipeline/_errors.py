"""Database errors of writes as typed errors (SPEC "Errors": constraint violations, custom SQL errors, `errors.map`).

A violated constraint is named by the catalog: its `<Type>ErrorCode` value (`EMAIL_TAKEN`, `AUTHOR_NOT_FOUND`,
`REFERENCED_BY_POSTS`, a chosen CHECK name, `<FIELD>_REQUIRED`), the enum it belongs to (`extensions.type`), and the
input paths of its columns (`extensions.fields`: `input.email`, `inputs[1].email`). When one statement wrote several
rows, the failing row is found from the key values the database reports (of rows that collide with each other, the
later one: the earlier was written first), or for a missing value from the rows that lack it. These errors reach the
client in every mode. A function or trigger raising SQLSTATE `PTxxx` answers status xxx with the author's message;
`errors.map` names errors by constraint name (which wins) or SQLSTATE.
"""

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs
import psycopg

from svc.catalog import RelationKind
from svc.config import ErrorsConfig
from svc.db import RETRYABLE_SQLSTATES, TOO_MANY_GROUPS_STATE
from svc.errors import Code, SvcError
from svc.model import Cardinality, Entity, EntityRef, ErrorCode, ErrorKind, Model
from svc.plan import BulkWrite, DeleteWrite, RelationWriteKind, RowWrite, Table, render_path, typed_error

log = logging.getLogger("svc.pipeline")

#: SQLSTATEs that name bad input the planner could not check: an invalid regular expression or JSON path, or a value
#: its column's type does not read (too long, out of range, a date or time zone past its bounds: the checks before any
#: SQL take what a type's input function may still refuse, as a smallint column's `Int` does 40000).
_BAD_INPUT_STATES = frozenset(
    {
        *("2201B", "22P02", "2203A", "2203B", "2203C", "2203D", "2203E", "2203F", "22033", "22034"),
        *("22001", "22003", "22007", "22008", "22009", "22015", "22021", "22P05"),
    }
)
#: `Key (email)=(a@b.c) already exists.` / `Key (author_id)=(9) is not present in table "people".`
#: What a remote violation's message names: `duplicate key value violates unique constraint "stock_levels_pkey"`,
#: `new row for relation "stock_levels" violates check constraint "stock_levels_quantity_check"`.
_REMOTE_MESSAGES = {
    "23505": re.compile(r'^duplicate key value violates unique constraint "(.+)"$'),
    "23514": re.compile(r'^new row for relation ".+" violates check constraint "(.+)"$'),
}
_KEY_DETAIL = re.compile(r"Key \((?P<columns>.*)\)=\((?P<values>.*)\)")


@attrs.frozen
class RowInput:
    """Where a written row's values came from: its table, each column's input path, and the values (to find a
    failing row; a column whose value another write gives, a foreign key, has a path but no value)."""

    table: Table
    path: tuple[str | int, ...]
    values: Mapping[str, Any]
    paths: Mapping[str, tuple[str | int, ...]]

    def path_of(self, column: str, entity: Entity | None) -> tuple[str | int, ...]:
        given = self.paths.get(column)
        if given is not None:
            return given
        field = entity.field_of_column(column) if entity else None
        return (*self.path, field.name if field else column)


def write_error(
    exc: psycopg.Error, model: Model, errors: ErrorsConfig, rows: Sequence[RowInput], table: EntityRef | None
) -> SvcError | None:
    """The typed error of a failed write statement, or None when it is no error the service names (serialization
    failures and deadlocks never are: they are retried)."""
    if exc.sqlstate in RETRYABLE_SQLSTATES:
        return None
    named = application_error(exc, errors)
    if named is not None:
        return named
    state = exc.sqlstate or ""
    if not state.startswith("23"):
        return None
    diag = exc.diag
    entity = (
        _entity(model, diag.schema_name, diag.table_name)
        or (model.entity(table) if table else None)
        or _remote_entity(model, rows, diag.context)
    )
    if entity is None:
        # A domain's CHECK fails reading a value into the column's type, before any table is named.
        return _domain_error(model, rows, diag.message_primary) if state == "23514" else None
    rows = [row for row in rows if row.table == Table(entity.schema, entity.table)]
    if state == "23502" and diag.column_name:
        code = _code(entity, ErrorKind.NOT_NULL, columns=(diag.column_name,))
        row = _lacking(rows, diag.column_name)
        path = row.path_of(diag.column_name, entity) if row else (diag.column_name,)
        return (
            typed_error(code, entity, [render_path(path)], diag.message_primary or "a value is required")
            if code
            else None
        )
    if state == "23503" and (diag.message_primary or "").startswith("update or delete on table"):
        return _referenced_by(exc, model, rows)
    code = _code(entity, None, constraint=diag.constraint_name or _remote_constraint(state, diag.message_primary))
    if code is None:
        return None
    row = _failing_row(rows, diag.message_detail)
    fields = [render_path(row.path_of(c, entity)) for c in code.columns] if row else list(code.columns)
    return typed_error(code, entity, fields, diag.message_primary or code.code)


def _remote_entity(model: Model, rows: Sequence[RowInput], context: str | None) -> Entity | None:
    """postgres_fdw passes a remote error on naming no table: the foreign table the statement wrote, when it wrote
    one (its remote command is in the error's context)."""
    if "remote SQL command:" not in (context or ""):
        return None
    written = {model.entity(EntityRef(row.table.schema, row.table.name)) for row in rows}
    foreign = [entity for entity in written if entity.kind is RelationKind.FOREIGN_TABLE]
    return foreign[0] if len(foreign) == 1 else None


def _remote_constraint(state: str, message: str | None) -> str | None:
    """The unique key or check a postgres_fdw foreign table's remote server names, which postgres_fdw passes on in
    the message only (its error has no constraint field), as the catalog read it from the remote."""
    pattern = _REMOTE_MESSAGES.get(state)
    match = pattern.search(message or "") if pattern else None
    return match.group(1) if match else None


def application_error(exc: psycopg.Error, errors: ErrorsConfig) -> SvcError | None:
    """Errors the application names itself: `errors.map` entries and SQLSTATE PTxxx (reads and writes alike)."""
    mapped = _mapped(exc, errors)
    if mapped is not None:
        return mapped
    state = exc.sqlstate or ""
    if re.fullmatch(r"PT\d\d\d", state):
        return _custom(exc, int(state[2:]))
    return None


def answer_error(exc: BaseException, errors: ErrorsConfig, request_id: str) -> SvcError:
    """The typed error a request's database failure is answered with (SPEC "Masking"): errors the application
    names, bad input the database found (an invalid regular expression or JSON path), else masked under the request
    id (and logged) unless `errors.detail: full`."""
    if isinstance(exc, SvcError):
        return exc
    assert isinstance(exc, psycopg.Error)
    named = application_error(exc, errors)
    if named is not None:
        return named
    if exc.sqlstate == TOO_MANY_GROUPS_STATE:  # raised by the statement before the groups' JSON is built
        counts = json.loads(exc.diag.message_detail or "{}")
        return SvcError(
            Code.TOO_MANY_GROUPS,
            f"the aggregate has {counts.get('actual')} groups, more than {counts.get('limit')} (limits.groups)",
            extensions={"limit": counts.get("limit"), "actual": counts.get("actual")},
        )
    if exc.sqlstate in _BAD_INPUT_STATES or (exc.sqlstate == "42601" and "jsonpath" in str(exc)):
        return SvcError(Code.BAD_USER_INPUT, exc.diag.message_primary or "invalid input")
    log.error("database error answering request %s: %s", request_id, exc, exc_info=exc)
    if errors.detail == "full":
        return SvcError(Code.INTERNAL_SERVER_ERROR, f"database error ({exc.sqlstate}): {exc.diag.message_primary}")
    return SvcError(
        Code.INTERNAL_SERVER_ERROR, f"an internal error occurred; it was logged under request id {request_id}"
    )


def _referenced_by(exc: psycopg.Error, model: Model, rows: Sequence[RowInput]) -> SvcError | None:
    """A row others refer to was deleted or re-keyed: the code is on the referenced table's enum."""
    constraint = exc.diag.constraint_name
    for entity in model.entities:
        for code in entity.error_codes:
            if code.kind is ErrorKind.REFERENCED_BY and constraint in (code.constraint, *code.aliases):
                return typed_error(code, entity, [], exc.diag.message_primary or code.code)
    return None


def _entity(model: Model, schema: str | None, table: str | None) -> Entity | None:
    if table is None:
        return None
    for entity in model.entities:
        if entity.table == table and (schema is None or entity.schema == schema):
            return entity
    return None


def _code(
    entity: Entity, kind: ErrorKind | None, *, constraint: str | None = None, columns: tuple[str, ...] = ()
) -> ErrorCode | None:
    for code in entity.error_codes:
        if kind is not None and code.kind is kind and code.columns == columns:
            return code
        if (
            constraint is not None
            and constraint in (code.constraint, *code.aliases)
            and code.kind is not ErrorKind.REFERENCED_BY
        ):
            return code
    return None


def _domain_error(model: Model, rows: Sequence[RowInput], message: str | None) -> SvcError | None:
    """A domain's CHECK: `<COLUMN>_INVALID` of the first row that writes a column whose type is a checked domain."""
    for row in rows:
        entity = model.entity(EntityRef(row.table.schema, row.table.name))
        for code in entity.error_codes:
            if code.kind is ErrorKind.DOMAIN_CHECK and code.columns[0] in row.values:
                path = render_path(row.path_of(code.columns[0], entity))
                return typed_error(code, entity, [path], message or code.code)
    return None


def _failing_row(rows: Sequence[RowInput], detail: str | None) -> RowInput | None:
    """The row a multi-row statement failed on, from the key values in the error's detail: of several rows holding
    them (rows that collide with each other), the later one, since the earlier was written first. Columns whose
    value another write gave (a foreign key) are not compared."""
    if len(rows) <= 1:
        return rows[0] if rows else None
    match = _KEY_DETAIL.match(detail or "")
    if match is None:
        return rows[0]
    columns = [c.strip().strip('"') for c in match.group("columns").split(",")]
    values = [v.strip() for v in match.group("values").split(",")]
    holding = [
        row
        for row in rows
        if all(str(row.values[c]) == v for c, v in zip(columns, values, strict=False) if c in row.values)
    ]
    return holding[1] if len(holding) > 1 else holding[0] if holding else rows[0]


def _lacking(rows: Sequence[RowInput], column: str) -> RowInput | None:
    """The row a NOT NULL violation is about: the first that gives the column no value (or NULL)."""
    for row in rows:
        given_elsewhere = column in row.paths and column not in row.values
        if row.values.get(column) is None and not given_elsewhere:
            return row
    return rows[0] if rows else None


def row_inputs(write: RowWrite | tuple[RowWrite, ...] | BulkWrite | DeleteWrite) -> list[RowInput]:
    """Every row a write tree writes, with where its values came from: a foreign key another write gives has the
    path of the relation input that gave it."""
    if isinstance(write, DeleteWrite):
        return []
    if isinstance(write, BulkWrite):
        if write.values is None:
            return []
        return [RowInput(write.table, (), write.values.row(), dict(write.values.paths))]
    found: list[RowInput] = []
    for row in write if isinstance(write, tuple) else (write,):
        _rows_of(row, {}, found)
    return found


def _rows_of(write: RowWrite, given: Mapping[str, tuple[str | int, ...]], found: list[RowInput]) -> None:
    paths = dict(write.values.paths) | dict(given)
    for related in write.related:
        if related.cardinality is Cardinality.TO_ONE and related.kind is not RelationWriteKind.UPDATE:
            paths |= {local: related.path for local, _ in related.pairs}
    values = {c: v for c, v in write.values.values if c not in given}
    found.append(RowInput(write.table, write.path, values, paths))
    for related in write.related:
        children = related.cardinality is Cardinality.TO_MANY
        for row in related.rows:
            _rows_of(row, {child: related.path for _, child in related.pairs} if children else {}, found)


def _custom(exc: psycopg.Error, status: int) -> SvcError:
    """SQLSTATE PTxxx: status xxx (400 outside 400-599); the author's message, never masked (SPEC "Custom SQL
    errors"). A JSON message sets message, code, hint, title and type itself; extra keys become extension members."""
    diag = exc.diag
    message = diag.message_primary or "the request was refused"
    members: dict[str, Any] = {}
    try:
        parsed = json.loads(message)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        members = cast("dict[str, Any]", parsed)  # a JSON object: its keys are strings
        message = str(members.pop("message", message))
    code = str(members.pop("code", None) or diag.message_hint or "APPLICATION_ERROR")
    extensions: dict[str, Any] = dict(members)
    hint = extensions.pop("hint", None) or diag.message_hint
    if hint:
        extensions["hint"] = hint
    if diag.message_detail:
        extensions["databaseDetail"] = diag.message_detail
    return SvcError(
        Code.CUSTOM, message, extensions=extensions, code_name=code, status=status if 400 <= status <= 599 else 400
    )


def _mapped(exc: psycopg.Error, errors: ErrorsConfig) -> SvcError | None:
    """`errors.map`: a constraint name wins over a SQLSTATE. The database's message is kept as detail only with
    `errors.detail: full`; masked, the title stands for it."""
    entries = errors.map
    entry = entries.get(exc.diag.constraint_name or "") or entries.get(exc.sqlstate or "")
    if entry is None:
        return None
    full = errors.detail == "full"
    title = entry.title or "Application Error"
    message = exc.diag.message_primary or title if full else title
    extensions: dict[str, Any] = {"title": title}
    if entry.type:
        extensions["type"] = entry.type
    if full and exc.diag.message_hint:
        extensions["hint"] = exc.diag.message_hint
    if full and exc.diag.message_detail:
        extensions["databaseDetail"] = exc.diag.message_detail
    status = entry.status if entry.status and 400 <= entry.status <= 599 else 400
    return SvcError(Code.CUSTOM, message, extensions=extensions, code_name=entry.code or exc.sqlstate, status=status)
