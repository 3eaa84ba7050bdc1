"""An import (`POST /import/{Type}`, SPEC "Endpoints"): batches of the body's lines into the table all or nothing, in
ONE transaction.

The batches arrive from an async iterator the caller feeds from the request body: nothing is held whole but one
batch, and a failure while reading (a bad line, a client gone) rolls everything back. Each line is checked by the
mutation input rules (the caller's `checked`, which names the line of a bad one), then the batch's rows are written
in line order, one statement per run of lines giving the same columns:

- copied straight into the table (`COPY ... FROM STDIN`, each value in the text its type's input function reads, as
  `json_populate_record` gives it the same value), when the table takes COPY as it takes INSERT
  (`Entity.copy_inserts`), no key is asked for (COPY answers none) and the run's values all have a COPY form;
- else, or when that COPY fails (a constraint, say: COPY does not say which line broke it), staged: copied into a
  staging table as mutations write them and inserted from it with `json_populate_record`. A constraint the insert
  breaks there is typed as a mutation's would be and names the failing line: the inserts are tried again on ever
  shorter prefixes of the batch's lines under savepoints (a binary search, at most ~log2(lines) tries), and the
  shortest prefix that fails ends at the line to blame (the batches before it are in: the line is the first of the
  whole body that fails).
"""

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

import attrs
import psycopg

from svc.db import Transaction
from svc.errors import SvcError
from svc.model import Entity, EntityRef
from svc.plan import Table, as_copied, copy_value, encode_json
from svc.sql import ImportStatements

from ._errors import answer_error, write_error
from ._statements import Statements


@attrs.frozen
class Imported:
    """What an import wrote: the rows' count, and their keys (JSON texts, in line order) when asked for."""

    created: int
    keys: tuple[str, ...] | None = None


@attrs.frozen
class LineBatch:
    """Whole lines of an import body as they came, blank ones included, joined by LF (without the last one's);
    `first` is the first one's number (counted from 1)."""

    first: int
    data: bytes

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """The lines that are not blank, each with its number."""
        for offset, line in enumerate(self.data.split(b"\n")):
            if line.strip():
                yield self.first + offset, line


#: A line's row, checked by the mutation input rules: the columns it gives and their values (as a mutation writes
#: them), or SvcError naming the line (`at_line`).
LineCheck = Callable[[int, bytes], tuple[tuple[str, ...], list[Any]]]
#: A line's number, the columns it gives and their values.
Row = tuple[int, tuple[str, ...], list[Any]]
CopyValue = Callable[[Any], Any]


@attrs.frozen
class _Run:
    """Consecutive rows (blank lines between them skipped) giving the same columns, in the same order: one
    statement. `start` and `stop` index the batch's rows."""

    given: tuple[str, ...]
    start: int
    stop: int


def _runs(rows: Sequence[Row]) -> list[_Run]:
    """The rows' runs of lines giving the same columns, in line order."""
    runs: list[_Run] = []
    for index, (_, given, _) in enumerate(rows):
        if runs and runs[-1].given == given:
            runs[-1] = attrs.evolve(runs[-1], stop=index + 1)
        else:
            runs.append(_Run(given, index, index + 1))
    return runs


@attrs.frozen
class _Attempt:
    """An insert of the lines up to `last` that failed, and how."""

    last: int
    error: psycopg.Error


class Importer:
    """One import's lines into `entity`'s table, within the transaction `run` is handed."""

    def __init__(
        self, statements: Statements, entity: Entity, request_id: str, *, keys: bool, checked: LineCheck
    ) -> None:
        self._statements = statements
        self._entity = entity
        self._request_id = request_id
        self._keys = keys
        self._checked = checked
        self._sql = ImportStatements(Table(entity.schema, entity.table), entity.primary_key or ())
        #: How each column's values go into a COPY row (None: they have no COPY form); none at all when rows are
        #: not copied into the table (COPY answers no keys).
        copies = entity.copy_inserts and not keys
        self._copied: dict[str, CopyValue | None] = (
            {field.column: copy_value(field.type) for field in entity.fields} if copies else {}
        )
        self._staged = False
        self._created = 0
        self._keys_written: list[str] = []

    async def run(self, tx: Transaction, batches: AsyncIterator[LineBatch]) -> Imported:
        async for batch in batches:
            if not (self._copied and await self._copied_in(tx, batch)):
                rows = [(number, *self._checked(number, line)) for number, line in batch.lines()]
                if rows:
                    await self._staged_in(tx, rows)
        return Imported(self._created, tuple(self._keys_written) if self._keys else None)

    async def _copied_in(self, tx: Transaction, batch: LineBatch) -> bool:
        """Copy the batch's rows straight into the table, all or none of them, checking each line as it goes (the
        database writes the rows sent while the next are checked): whether it did. When it did not (a run with no
        COPY form, a failed COPY), the staged way checks the lines again: rows are not kept here."""
        lines = batch.lines()
        check = self._checked
        following: list[tuple[tuple[str, ...], list[Any]]] = []  # the first row of the next run

        def rows(given: tuple[str, ...], changed: list[tuple[int, CopyValue]], first: list[Any]) -> Iterator[list[Any]]:
            values = first
            while True:
                for index, change in changed:
                    values[index] = change(values[index])
                yield values
                for number, line in lines:
                    columns, values = check(number, line)
                    if columns == given:
                        break
                    following.append((columns, values))
                    return
                else:
                    return

        for number, line in lines:
            following.append(check(number, line))
            break
        count, copied, saved = 0, True, False
        try:
            while copied and following:
                given, values = following.pop()
                changed = self._changed(given)
                copied = changed is not None
                if changed is not None:
                    if not saved:  # taken before the first COPY: a batch that copies nothing needs none
                        await tx.execute("savepoint svc_import")
                        saved = True
                    count += await tx.copy_in(self._sql.copy_into(given), rows(given, changed, values))
        except psycopg.Error:
            copied = False  # a COPY failed (a constraint, say): the staged way names the line
        if saved:
            await tx.execute(("release" if copied else "rollback to") + " savepoint svc_import")
        if copied:
            self._created += count
        return copied

    def _changed(self, columns: tuple[str, ...]) -> list[tuple[int, CopyValue]] | None:
        """How a run's values go into COPY rows: the positions whose values change on the way (JSON), and how;
        None when one of the columns' values has no COPY form (or rows are not copied at all)."""
        found = [self._copied.get(column) for column in columns]
        if None in found:
            return None
        return [
            (index, change) for index, change in enumerate(cast("list[CopyValue]", found)) if change is not as_copied
        ]

    async def _staged_in(self, tx: Transaction, rows: list[Row]) -> None:
        """Stage the rows and insert them from there; a failing constraint names its line."""
        if not self._staged:
            await tx.execute(self._sql.staging())
            self._staged = True
        staged = ((number, encode_json(dict(zip(given, values, strict=True)))) for number, given, values in rows)
        await tx.copy_in(self._sql.copy(), staged)
        runs = _runs(rows)
        last = rows[-1][0]
        await tx.execute("savepoint svc_import")
        try:
            count, keys = await self._insert(tx, rows, runs, last)
        except psycopg.Error as exc:
            await tx.execute("rollback to savepoint svc_import")
            failed = await self._first_failing(tx, rows, runs, _Attempt(last, exc))
            raise self._typed(failed) from exc
        await tx.execute("release savepoint svc_import")
        self._created += count
        self._keys_written += keys

    async def _insert(self, tx: Transaction, rows: list[Row], runs: list[_Run], last: int) -> tuple[int, list[str]]:
        """The staged rows of `runs` up to the line `last`, one statement per run: how many, and their keys (JSON
        texts, when asked for)."""
        count, keys = 0, list[str]()
        for run in runs:
            first = rows[run.start][0]
            if first > last:
                break
            lines = {"first": first, "last": min(rows[run.stop - 1][0], last)}
            cursor = await tx.execute(self._sql.insert(run.given, keys=self._keys), lines)
            count += cursor.rowcount
            if self._keys:
                keys += [row[0] for row in await cursor.fetchall()]
        return count, keys

    async def _first_failing(self, tx: Transaction, rows: list[Row], runs: list[_Run], failed: _Attempt) -> _Attempt:
        """The shortest run of the lines whose insert fails (the whole failed already): its last line is the one to
        blame. Each try runs under a savepoint rolled back after it, so nothing of it stays."""
        passed = rows[0][0] - 1
        while failed.last - passed > 1:
            middle = (passed + failed.last) // 2
            await tx.execute("savepoint svc_import_try")
            try:
                await self._insert(tx, rows, runs, middle)
            except psycopg.Error as exc:
                failed = _Attempt(middle, exc)
            else:
                passed = middle
            await tx.execute("rollback to savepoint svc_import_try")
        return failed

    def _typed(self, failed: _Attempt) -> SvcError:
        statements = self._statements
        ref = EntityRef(self._entity.schema, self._entity.table)
        typed = write_error(failed.error, statements.model, statements.errors, [], ref)
        error = answer_error(typed or failed.error, statements.errors, self._request_id)
        return at_line(error, failed.last)


def at_line(error: SvcError, line: int) -> SvcError:
    """`error` naming the line of the import body it is about (`line`, counted from 1)."""
    return SvcError(
        error.code,
        f"line {line}: {error.message}",
        extensions={**(error.extensions or {}), "line": line},
        code_name=error.code_name,
    )
