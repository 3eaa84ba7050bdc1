"""The one run path both APIs call, and the only door to the database (ARCHITECTURE.md, layer 6): a plan is checked
against the limits, compiled (once per shape), executed, and its database failures typed.

Reads may run on a read replica (the executor chooses, SPEC "Operations"), unless their statement calls the session's
temporary functions, which a standby lacks; writes run on the primary.

- `read`: a read plan as ONE statement; the database's JSON texts come back as bytes, never decoded.
- `read_batch`: one read plan for many sets of its values (live queries of one shape) as ONE statement, one row of
  texts per set.
- `read_each`: each root field of a read plan alone, in one repeatable-read, read-only transaction (SPEC "Partial
  results"), each under a savepoint so a failing field leaves the others their answer.
- `export`: a read plan's one root list, every row it selects, streamed as NDJSON lines or CSV records through a
  cursor in one read-only repeatable-read transaction, 1,000 rows at a time.
- `import_rows`: rows checked as they are read, copied into a staging table and inserted all or nothing
  (`svc.pipeline._import`).
- `write`: a mutation plan (SPEC "Mutations"): root fields in order, each its write statements then its payload read
  by key, in ONE transaction (a savepoint inside the caller's when it has one open); a later field sees earlier
  writes; any failure rolls back the whole operation and names the field. A write tree is as few statements as the
  order of its effects allows (`svc.sql.compile_write`); rows pass from one to the next as the JSON texts the
  database answered, never decoded, and from the write to its payload read (sent with it) through settings of the
  transaction, never through Python. What Python reads of an answer is its small
  status object (counts and missing keys, checked in plan order) and the count of rows written.

Stages are timed here, once, for the request's record (`svc.telemetry`): `<api>.compile` (limits checked and the
statement compiled) and `<api>.execute` (the database's part), where `<api>` is the context's `api` tag. A write's
statements are compiled step by step inside its transaction, so its `execute` stage includes compiling.

Front ends see typed errors only (`SvcError`, masked as `errors.detail` says and logged under the request id), never
the driver's. Serialization failures and deadlocks retry the whole unit when it owns its transaction (the
executor's job).
"""

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, LiteralString, TypeVar

import attrs
import psycopg
from psycopg import sql
from psycopg.adapt import PyFormat, Transformer

from svc.db import RETRYABLE_SQLSTATES, Executor, Isolation, Session, Transaction
from svc.errors import Code, SvcError
from svc.model import Entity
from svc.plan import (
    MutationPlan,
    MutationStep,
    Params,
    PayloadKind,
    ReadPlan,
    RowsFormat,
    check_mutation,
    check_read,
)
from svc.telemetry import stage

from ._checks import first_failure
from ._errors import answer_error, row_inputs, write_error
from ._import import Imported, Importer, LineBatch, LineCheck
from ._payloads import MutationFailed, Payload
from ._statements import Statements

T = TypeVar("T")
#: Rows an export fetches at a time (SPEC "Limits": other constants).
EXPORT_BATCH = 1000
#: Failures of the request as a whole, not of one field.
_WHOLE_REQUEST = frozenset({Code.DATABASE_UNAVAILABLE, Code.STATEMENT_TIMEOUT, Code.SCHEMA_CHANGED})


@attrs.frozen
class Context:
    """Whom a unit of work is for: the request (its errors are logged under its id), the database role and settings
    it runs with (None: the connecting role's), and the tags of its statements' comments."""

    request_id: str
    session: Session | None = None
    #: Keys are literal (they are written into SQL comments); values are reduced to a safe alphabet there.
    tags: Mapping[LiteralString, str] = attrs.field(factory=dict[LiteralString, str])

    @property
    def stages(self) -> tuple[str, str]:
        """The names of the compile and execute stages of the API the work is for (its `api` tag)."""
        return _STAGES.get(self.tags.get("api", ""), ("compile", "execute"))


_STAGES = {api: (f"{api}.compile", f"{api}.execute") for api in ("graphql", "rest")}


@attrs.frozen
class Pipeline:
    executor: Executor

    async def read(
        self, statements: Statements, plan: ReadPlan, params: Params, context: Context
    ) -> tuple[bytes | None, ...]:
        """The JSON text of each root field of the plan (None for a JSON null), from one statement."""
        compiling, executing = context.stages
        started = time.perf_counter()
        check_read(plan, params.values, statements.limits)
        compiled = statements.read(plan)
        started = stage(compiling, started)
        try:
            return await self.executor.fetch(
                compiled.statement,
                params.named(),
                tags=context.tags,
                session=context.session,
                replica=not compiled.primary_only,
                plans=compiled.plans,
            )
        except psycopg.Error as exc:
            raise answer_error(exc, statements.errors, context.request_id) from exc
        finally:
            stage(executing, started)

    @staticmethod
    def batch_texts(values: Sequence[Any]) -> tuple[str | None, ...]:
        """A plan's values in the text form `read_batch` passes them in: a live query's, dumped once when it is
        planned rather than in every round; equal texts are equal values."""
        dump = _TextDumps()
        return tuple(dump(value) for value in values)

    async def read_batch(
        self,
        statements: Statements,
        plan: ReadPlan,
        sets: Sequence[Sequence[str | None]],
        context: Context,
    ) -> list[tuple[bytes | None, ...]]:
        """The JSON texts of the plan's root fields for each set of its values (as `batch_texts` gives them), in
        order, from ONE statement (SPEC "Subscriptions": live queries of one compiled shape and the same session are
        read together). Each set was checked against the limits when its live query was planned."""
        if not sets:
            return []
        width = len(sets[0])
        compiled = statements.batch(plan, width)
        named = {f"b{index}": [values[index] for values in sets] for index in range(width)}
        try:
            rows = await self.executor.fetch_rows(
                compiled.statement, named, tags=context.tags, session=context.session, replica=not compiled.primary_only
            )
        except psycopg.Error as exc:
            raise answer_error(exc, statements.errors, context.request_id) from exc
        if width == 0:  # no values: every set reads the same
            return [rows[0][1:]] * len(sets)
        return [row[1:] for row in rows]

    async def read_each(
        self, statements: Statements, plan: ReadPlan, params: Params, context: Context
    ) -> tuple[bytes | SvcError | None, ...]:
        """Each root field's JSON text, or the typed error it failed with (SPEC "Partial results"): all read alone
        in one repeatable-read, read-only transaction, so they see the same data. A failure of the whole
        transaction (the database unavailable, a timeout) raises. The plan's limits are those of `read`, which the
        caller ran first."""
        compiling, executing = context.stages
        started = time.perf_counter()
        compiled = [statements.read(ReadPlan((root,))) for root in plan.roots]
        named = params.named()
        started = stage(compiling, started)

        async def each(tx: Transaction) -> list[bytes | psycopg.Error | None]:
            results: list[bytes | psycopg.Error | None] = []
            for position, statement in enumerate(compiled):
                savepoint = sql.Identifier(f"svc_field_{position}")
                await tx.execute(sql.SQL("savepoint {}").format(savepoint))
                try:
                    (text,) = await tx.fetch_raw(statement.statement, named)
                    results.append(text)
                    await tx.execute(sql.SQL("release savepoint {}").format(savepoint))
                except psycopg.Error as exc:
                    results.append(exc)
                    await tx.execute(sql.SQL("rollback to savepoint {}").format(savepoint))
            return results

        try:
            replica = not any(statement.primary_only for statement in compiled)
            results = await self._in_snapshot(each, statements, context, replica=replica)
        finally:
            stage(executing, started)
        return tuple(
            answer_error(result, statements.errors, context.request_id) if isinstance(result, psycopg.Error) else result
            for result in results
        )

    async def export(
        self,
        statements: Statements,
        plan: ReadPlan,
        params: Params,
        context: Context,
        *,
        format: RowsFormat,
        write: Callable[[bytes], Awaitable[None]],
    ) -> int:
        """Every row of a plan's one root list, written as `format` lines (a CSV header first) `EXPORT_BATCH` rows
        at a time, from one statement through a cursor in ONE read-only repeatable-read transaction (one snapshot
        of the data; on a replica when allowed): a slow `write` holds the cursor, not memory. The limits are checked
        before any SQL; a database failure is raised typed. The rows' count."""
        (root,) = plan.roots
        assert root.read is not None
        check_read(plan, params.values, statements.limits)
        compiled = statements.rows(root.read, format)
        unsent = [format.header(compiled.keys)]  # sent with the first rows, or alone when there are none
        end = format.line_end

        async def lines(rows: list[bytes | None]) -> None:
            chunk = end.join(row or b"" for row in rows) + end
            if unsent:
                chunk = unsent.pop() + chunk
            await write(chunk)

        async def work(tx: Transaction) -> int:
            return await tx.stream(compiled.statement, params.named(), lines, size=EXPORT_BATCH)

        count = await self._in_snapshot(work, statements, context, replica=not compiled.primary_only)
        if unsent and unsent[0]:
            await write(unsent[0])
        return count

    async def _in_snapshot(
        self, work: Callable[[Transaction], Awaitable[T]], statements: Statements, context: Context, *, replica: bool
    ) -> T:
        """`work` in one read-only repeatable-read transaction (one snapshot of the data; on a replica when
        `replica` allows); its database failure raised typed."""
        return await self._unit(work, statements, context, readonly=True, isolation="repeatable read", replica=replica)

    async def _unit(
        self,
        work: Callable[[Transaction], Awaitable[T]],
        statements: Statements,
        context: Context,
        *,
        readonly: bool = False,
        isolation: Isolation = "read committed",
        replica: bool = False,
        retry: bool = True,
    ) -> T:
        """`work` in a transaction of its own as the context's session (`Executor.run`), its database failure raised
        typed."""
        try:
            return await self.executor.run(
                work,
                tags=context.tags,
                session=context.session,
                readonly=readonly,
                isolation=isolation,
                replica=replica,
                retry=retry,
            )
        except psycopg.Error as exc:
            raise answer_error(exc, statements.errors, context.request_id) from exc

    async def import_rows(
        self,
        statements: Statements,
        entity: Entity,
        batches: AsyncIterator[LineBatch],
        context: Context,
        *,
        keys: bool,
        checked: LineCheck,
    ) -> Imported:
        """The lines of `batches` into `entity`'s table, all or nothing, in ONE transaction (`Importer`; `checked`
        is a line's row by the mutation input rules); never retried, since the batches cannot be read again. A
        failure is raised typed."""
        importer = Importer(statements, entity, context.request_id, keys=keys, checked=checked)
        return await self._unit(lambda tx: importer.run(tx, batches), statements, context, retry=False)

    async def write(
        self,
        statements: Statements,
        plan: MutationPlan,
        context: Context,
        *,
        transaction: Transaction | None = None,
    ) -> list[Payload]:
        """Each root field's payload, in order. Raises `LimitExceeded` before any SQL, `MutationFailed` when a field
        failed (everything rolled back), or `SvcError` for failures of the whole request (the database unavailable,
        a statement timeout)."""
        check_mutation(plan, statements.limits)
        current = [plan.steps[0].key if plan.steps else ""]
        started = time.perf_counter()

        # The last statement of a mutation in its own transaction is sent with the commit (one round trip less).
        final = len(plan.steps) - 1 if transaction is None else -1

        async def work(tx: Transaction) -> list[Payload]:
            answers: list[Payload] = []
            for position, step in enumerate(plan.steps):
                current[0] = step.key
                answers.append(await _step(statements, tx, step, last=position == final))
            return answers

        try:
            if transaction is not None:
                return await _in_savepoint(transaction, work)
            return await self.executor.run(work, tags=context.tags, session=context.session)
        except SvcError as error:
            if error.code in _WHOLE_REQUEST:
                raise
            raise MutationFailed(current[0], error) from error
        except psycopg.Error as exc:
            # Deferred constraints are checked while committing, after the last step.
            typed = write_error(exc, statements.model, statements.errors, (), None)
            raise MutationFailed(current[0], answer_error(typed or exc, statements.errors, context.request_id)) from exc
        finally:
            stage(context.stages[1], started)


async def _step(statements: Statements, tx: Transaction, step: MutationStep, *, last: bool) -> Payload:
    """One root field's payload; `last`: its last statement is the unit's (sent with the commit)."""
    try:
        if step.call is not None:
            compiled = statements.read(step.call)
            (text,) = await tx.fetch_raw(compiled.statement, _named(step.call_values), last=last)
            return Payload(step, {step.key: text})
        if step.write is None:
            return Payload(step, {})
        written, texts = await _write(statements, tx, step, last=last)
        return Payload(
            step,
            texts,
            affected=int(written.get("count") or b"0"),
            keys=written.get("keys"),
            deleted_id=written.get("id"),
        )
    except psycopg.Error as exc:
        # A function's or a payload read's failure: typed where the catalog or the application names it.
        if exc.sqlstate in RETRYABLE_SQLSTATES:
            raise
        typed = write_error(exc, statements.model, statements.errors, (), None)
        if typed is None:
            raise
        raise typed from exc


#: The payload read's slots (`Slots`), each filled by the write's output of the same name.
_SLOTS = ("keys", "rows", "previous")


async def _write(
    statements: Statements, tx: Transaction, step: MutationStep, *, last: bool
) -> tuple[dict[str, bytes | None], dict[str, bytes | None]]:
    """A step's write and its payload read: the write's statements in order, each one's status checked before the
    next runs; its last statement's answers (JSON texts) by name, and the payload read's texts by root key.

    The payload read is sent with the write's last statement, in the same turn (issue 22: a create is one round
    trip, with BEGIN and COMMIT), taking what it needs of the write's answer from the settings the write left it in
    (`carried`). The COMMIT goes with them when the step is the unit's `last` and its write has no checks (a check
    failing after the commit could not undo the write); with checks, the status is checked once both are answered
    and the commit follows."""
    write = step.write
    assert write is not None
    if write == ():
        return {}, await _payload(statements, tx, step, last=last)  # no rows to create: nothing written
    wants_id = any(member.kind is PayloadKind.DELETED_ID for member in step.members)
    global_ids = step.type_name if wants_id and step.type_name else None
    slots = [(slot, name) for name in _SLOTS if (slot := getattr(step.slots, name)) is not None]
    carried = tuple(output for _, output in slots) if step.payload is not None else ()
    compiled = statements.write(write, rows=step.slots.rows is not None, global_ids=global_ids, carried=carried)
    params = compiled.params(write)
    answers: list[tuple[bytes | None, ...]] = []
    texts: dict[str, bytes | None] = {}
    final = len(compiled.statements) - 1
    # The slots the write fills (`keys` only when the rows have a key); the others read "no rows".
    filled = [(slot, output) for slot, output in slots if output in compiled.statements[final].columns]
    for position, statement in enumerate(compiled.statements):
        named = dict(params)
        for index, (earlier, column) in enumerate(statement.imports):
            text = answers[earlier][column]
            named[f"x{index}"] = text.decode() if text is not None else None
        try:
            if position == final and step.payload is not None:
                answer, texts = await _with_payload(
                    statements, tx, step, (statement.text, named), filled, last=last and not compiled.checks
                )
            else:
                answer = await tx.fetch_raw(statement.text, named)
        except psycopg.Error as exc:
            if exc.sqlstate in RETRYABLE_SQLSTATES:
                raise
            typed = write_error(exc, statements.model, statements.errors, row_inputs(write), None)
            if typed is None:
                raise
            raise typed from exc
        answers.append(answer)
        status = json.loads(answer[0] or b"{}")
        failure = first_failure(compiled.checks, status, write, statements.model)
        if failure is not None:
            raise failure
    written = dict(zip(compiled.statements[final].columns, answers[-1][1:], strict=True))
    return written, texts


async def _with_payload(
    statements: Statements,
    tx: Transaction,
    step: MutationStep,
    write: tuple[str, dict[str, Any]],
    slots: Sequence[tuple[int, str]],
    *,
    last: bool,
) -> tuple[tuple[bytes | None, ...], dict[str, bytes | None]]:
    """A write statement and the payload read sent together: the write's answer, and the read's texts by root
    key. The read's slots are the write's outputs it left in the transaction's settings."""
    assert step.payload is not None
    compiled = statements.carried(step.payload, tuple(slots))
    values = _no_rows(step)
    for slot, _ in slots:
        values[slot] = None  # read from the setting, not sent
    answer, read = await tx.fetch_each([write, (compiled.statement, _named(values))], last=last)
    return answer, dict(zip((root.key for root in step.payload.roots), read, strict=True))


async def _payload(
    statements: Statements, tx: Transaction, step: MutationStep, *, last: bool
) -> dict[str, bytes | None]:
    """The payload read's texts by root key, after a write that wrote nothing (no keys, no rows)."""
    if step.payload is None:
        return {}
    compiled = statements.read(step.payload)
    answers = await tx.fetch_raw(compiled.statement, _named(_no_rows(step)), last=last)
    return dict(zip((root.key for root in step.payload.roots), answers, strict=True))


def _no_rows(step: MutationStep) -> list[Any]:
    """The payload read's values, its slots filled with no rows (an empty JSON array)."""
    values = list(step.payload_values)
    for name in _SLOTS:
        if (slot := getattr(step.slots, name)) is not None:
            values[slot] = "[]"
    return values


async def _in_savepoint(tx: Transaction, work: Callable[[Transaction], Awaitable[T]]) -> T:
    """The caller's transaction stays open: the mutation's writes are undone to a savepoint when it fails."""
    await tx.execute("savepoint svc_mutation")
    try:
        result = await work(tx)
    except BaseException:
        await tx.execute("rollback to savepoint svc_mutation")
        raise
    await tx.execute("release savepoint svc_mutation")
    return result


class _TextDumps:
    """Values in PostgreSQL's text form, as a batch passes them (each cast back to its type in the statement)."""

    def __init__(self) -> None:
        self._transformer = Transformer()

    def __call__(self, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, bytes):
            return "\\x" + value.hex()  # bytea's hex form; psycopg dumps bytes unescaped without a connection
        dumped = self._transformer.get_dumper(value, PyFormat.TEXT).dump(value)
        assert dumped is not None  # None only for None, answered above
        return bytes(dumped).decode()


def _named(values: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    return {f"p{index}": value for index, value in enumerate(values)}
