"""An import (`POST /import/{Type}`, SPEC "Endpoints"): rows checked by the API layer as they are read are copied
into a staging table as they come (COPY), then inserted into the table all or nothing, in ONE transaction.

The rows arrive as (line, values) pairs from an async iterator the caller feeds from the request body: nothing is
held whole, and a failure while reading (a bad line, a client gone) rolls everything back. Rows are inserted by one
statement per set of given columns (rows leaving different columns to their defaults), in line order. A constraint
the insert breaks is typed as a mutation's would be and names the failing line: the inserts are tried again on ever
shorter prefixes of the lines under savepoints (a binary search, at most ~log2(lines) tries), and the shortest
prefix that fails ends at the line to blame.
"""

from collections.abc import AsyncIterator, Sequence

import attrs
import psycopg

from svc.db import Transaction
from svc.errors import SvcError
from svc.model import Entity, EntityRef
from svc.plan import Table, Values, encode_json
from svc.sql import ImportStatements

from ._errors import answer_error, write_error
from ._statements import Statements


@attrs.frozen
class Imported:
    """What an import wrote: the rows' count, and their keys (JSON texts, in line order) when asked for."""

    created: int
    keys: tuple[str, ...] | None = None


@attrs.frozen
class _Attempt:
    """An insert of the lines up to `last` that failed, and how."""

    last: int
    error: psycopg.Error


class Importer:
    """One import's rows into `entity`'s table, within the transaction `run` is handed."""

    def __init__(self, statements: Statements, entity: Entity, request_id: str, *, keys: bool) -> None:
        self._statements = statements
        self._entity = entity
        self._request_id = request_id
        self._keys = keys
        self._sql = ImportStatements(Table(entity.schema, entity.table), entity.primary_key or ())
        #: The sets of given columns, numbered in the order rows first give them.
        self._sets: dict[tuple[str, ...], int] = {}
        self._last = 0

    async def run(self, tx: Transaction, rows: AsyncIterator[tuple[int, Values]]) -> Imported:
        await tx.execute(self._sql.staging())
        await tx.copy_in(self._sql.copy(), self._records(rows))
        if not self._sets:
            return Imported(0, () if self._keys else None)
        await tx.execute("savepoint svc_import")
        try:
            count, keys = await self._insert(tx, self._last)
        except psycopg.Error as exc:
            await tx.execute("rollback to savepoint svc_import")
            failed = await self._first_failing(tx, _Attempt(self._last, exc))
            raise self._typed(failed) from exc
        await tx.execute("release savepoint svc_import")
        return Imported(count, tuple(keys) if self._keys else None)

    async def _records(self, rows: AsyncIterator[tuple[int, Values]]) -> AsyncIterator[Sequence[str | None]]:
        async for line, values in rows:
            number = self._sets.setdefault(tuple(sorted(values.given)), len(self._sets))
            self._last = line
            yield (str(line), str(number), encode_json(values.row()))

    async def _insert(self, tx: Transaction, last: int) -> tuple[int, list[str]]:
        """Every set's rows with a line up to `last`: how many, and their keys (JSON texts, when asked for)."""
        count, keys = 0, list[str]()
        for given, number in self._sets.items():
            cursor = await tx.execute(self._sql.insert(given, keys=self._keys), {"set": number, "last": last})
            count += cursor.rowcount
            if self._keys:
                keys += [row[0] for row in await cursor.fetchall()]
        return count, keys

    async def _first_failing(self, tx: Transaction, failed: _Attempt) -> _Attempt:
        """The shortest prefix of the lines whose insert fails (the whole failed already): its last line is the one to
        blame. Each try runs under a savepoint rolled back after it, so nothing of it stays."""
        passed = 0
        while failed.last - passed > 1:
            middle = (passed + failed.last) // 2
            await tx.execute("savepoint svc_import_try")
            try:
                await self._insert(tx, middle)
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
