"""Running a mutation plan (SPEC "Mutations"): root fields in order, each its own statements, in ONE transaction (a
savepoint inside the caller's when it has one open); a later field sees earlier writes; any failure rolls back the
whole operation and names the field. After each write its payload is read by the written rows' keys in a separate
statement, so nested relations reflect the write; the payload object is assembled around the database's JSON texts.

Serialization failures and deadlocks retry the whole operation when it owns its transaction (the executor's job).
"""

import json
from collections.abc import Mapping
from typing import Any

import attrs
import psycopg

from svc.config import ErrorsConfig
from svc.db import RETRYABLE_SQLSTATES, Executor, Session, Transaction
from svc.errors import Code, SvcError
from svc.model import Model
from svc.plan import (
    BulkWrite,
    DeleteWrite,
    MutationPlan,
    MutationStep,
    PayloadKind,
    RowWrite,
    encode_global_id,
)

from ._errors import write_error
from ._reads import StatementCache
from ._writes import WriteCache, WriteRunner, encode_json

Row = dict[str, Any]
#: Failures of the request as a whole, not of one field.
_WHOLE_REQUEST = frozenset({Code.DATABASE_UNAVAILABLE, Code.STATEMENT_TIMEOUT, Code.SCHEMA_CHANGED})


class MutationFailed(Exception):
    """A mutation failed and was rolled back: `key` names the root field that failed, `error` says why (a typed
    error, or the database's own for the caller to mask)."""

    def __init__(self, key: str, error: SvcError | psycopg.Error) -> None:
        super().__init__(str(error))
        self.key = key
        self.error = error


@attrs.frozen
class Outcome:
    """The rows a write touched, as the write statements answered them (written, or deleted), and as they were."""

    rows: list[Row]
    previous: list[Row]


@attrs.frozen
class Payload:
    """One root field's answer: its payload read's JSON texts by root key (a function call's under the step's
    key), and the write's outcome."""

    step: MutationStep
    texts: Mapping[str, bytes | None]
    outcome: Outcome = Outcome([], [])

    def json(self) -> bytes:
        """The payload object of a GraphQL mutation field, written around the texts (never decoded)."""
        step = self.step
        if step.call is not None:
            return self.texts.get(step.key) or b"null"
        parts = []
        for member in step.members:
            if member.kind is PayloadKind.READ:
                value = self.texts.get(member.key)
            elif member.kind is PayloadKind.AFFECTED_COUNT:
                value = str(len(self.outcome.rows)).encode()
            elif member.kind is PayloadKind.DELETED_ID:
                value = _deleted_id(step, self.outcome)
            else:
                value = json.dumps(member.constant).encode()
            parts.append(json.dumps(member.key).encode() + b":" + (value if value is not None else b"null"))
        return b"{" + b",".join(parts) + b"}"


class Mutations:
    """Runs mutation plans on one snapshot: its model (error codes), configuration (`errors`) and caches."""

    def __init__(self, model: Model, errors: ErrorsConfig, statements: StatementCache) -> None:
        self.model = model
        self.errors = errors
        self.statements = statements
        self.writes = WriteCache(model)

    async def run(
        self,
        executor: Executor,
        plan: MutationPlan,
        *,
        tags: Mapping[str, str] | None = None,
        session: Session | None = None,
        transaction: Transaction | None = None,
    ) -> list[Payload]:
        """Each root field's payload, in order. Raises MutationFailed (rolled back), or the executor's SvcError for
        failures of the whole request (the database unavailable, a statement timeout)."""
        current = [plan.steps[0].key if plan.steps else ""]

        async def work(tx: Transaction) -> list[Payload]:
            runner = WriteRunner(tx, self.model, self.errors, self.writes)
            answers = []
            for step in plan.steps:
                current[0] = step.key
                answers.append(await self._step(tx, runner, step))
            return answers

        try:
            if transaction is not None:
                return await _in_savepoint(transaction, work)
            return await executor.run(work, tags=tags, session=session)
        except SvcError as error:
            if error.code in _WHOLE_REQUEST:
                raise
            raise MutationFailed(current[0], error) from error
        except psycopg.Error as exc:
            # Deferred constraints are checked while committing, after the last step.
            typed = write_error(exc, self.model, self.errors, (), None)
            raise MutationFailed(current[0], typed or exc) from exc

    async def _step(self, tx: Transaction, runner: WriteRunner, step: MutationStep) -> Payload:
        try:
            if step.call is not None:
                compiled = self.statements.compiled(step.call)
                (text,) = await tx.fetch_raw(compiled.statement, _named(step.call_values))
                return Payload(step, {step.key: text})
            outcome = await self._write(runner, step)
            return Payload(step, await self._payload(tx, step, outcome), outcome)
        except psycopg.Error as exc:
            # A function's or a payload read's failure: typed where the catalog or the application names it.
            if exc.sqlstate in RETRYABLE_SQLSTATES:
                raise
            typed = write_error(exc, self.model, self.errors, (), None)
            if typed is None:
                raise
            raise typed from exc

    async def _write(self, runner: WriteRunner, step: MutationStep) -> Outcome:
        write = step.write
        if isinstance(write, tuple):
            written = await runner.rows(write)
            return Outcome([w.row for w in written if w.row is not None], [w.previous for w in written if w.previous])
        if isinstance(write, RowWrite):
            one = await runner.row(write)
            return Outcome([one.row] if one.row else [], [one.previous] if one.previous else [])
        if isinstance(write, DeleteWrite):
            deleted = await runner.delete(write)
            return Outcome([deleted] if deleted else [], [])
        assert isinstance(write, BulkWrite)
        bulk = await runner.bulk(write)
        return Outcome(bulk.rows, bulk.previous)

    async def _payload(self, tx: Transaction, step: MutationStep, outcome: Outcome) -> dict[str, bytes | None]:
        """The payload read's texts by root key: its slots filled with the written rows' keys, the rows themselves
        and the rows as they were."""
        values = list(step.payload_values)
        slots = step.slots
        if slots.keys is not None:
            values[slots.keys] = encode_json([{c: row[c] for c in step.key_columns} for row in outcome.rows])
        if slots.rows is not None:
            values[slots.rows] = encode_json(outcome.rows)
        if slots.previous is not None:
            values[slots.previous] = encode_json(outcome.previous)
        if step.payload is None:
            return {}
        compiled = self.statements.compiled(step.payload)
        answers = await tx.fetch_raw(compiled.statement, _named(values))
        return dict(zip((root.key for root in step.payload.roots), answers, strict=True))


async def _in_savepoint(tx: Transaction, work: Any) -> Any:
    """The caller's transaction stays open: the mutation's writes are undone to a savepoint when it fails."""
    await tx.execute("savepoint svc_mutation", prepare=False)
    try:
        result = await work(tx)
    except BaseException:
        await tx.execute("rollback to savepoint svc_mutation", prepare=False)
        raise
    await tx.execute("release savepoint svc_mutation", prepare=False)
    return result


def _deleted_id(step: MutationStep, outcome: Outcome) -> bytes | None:
    if not step.type_name or not outcome.rows:
        return None
    (column,) = step.key_columns
    return json.dumps(encode_global_id(step.type_name, outcome.rows[0][column])).encode()


def _named(values: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    return {f"p{index}": value for index, value in enumerate(values)}
