"""Reads: a plan compiled once per shape and executed as ONE statement; the database's
JSON texts come back as bytes, never decoded (ARCHITECTURE.md, "The one idea").
"""

import collections
from collections.abc import Mapping
from typing import Any

import attrs

from svc.db import Executor, Session
from svc.plan import ReadPlan
from svc.sql import CompiledRead, compile_read

#: Compiled statements kept per snapshot.
STATEMENT_CACHE_SIZE = 1000


class StatementCache:
    """Compiled statements by plan shape (a plan is its shape: values are parameters), least recently used out.

    Held by the snapshot, so a reload starts afresh; shared by the requests on that snapshot (all in one Trio
    thread, and compiling never awaits, so no lock is needed).
    """

    def __init__(self, size: int = STATEMENT_CACHE_SIZE) -> None:
        self._size = size
        self._entries: collections.OrderedDict[ReadPlan, CompiledRead] = collections.OrderedDict()
        self.hits = 0
        self.misses = 0

    def compiled(self, plan: ReadPlan) -> CompiledRead:
        found = self._entries.get(plan)
        if found is not None:
            self._entries.move_to_end(plan)
            self.hits += 1
            return found
        self.misses += 1
        compiled = self._entries[plan] = compile_read(plan)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return compiled


@attrs.frozen
class Pipeline:
    executor: Executor

    async def read(
        self,
        statements: StatementCache,
        plan: ReadPlan,
        params: Mapping[str, Any],
        *,
        tags: Mapping[str, str] | None = None,
        session: Session | None = None,
    ) -> tuple[bytes | None, ...]:
        """The JSON text of each root field of the plan (None for a JSON null), from one statement."""
        compiled = statements.compiled(plan)
        return await self.executor.fetch(compiled.statement, params, tags=tags, session=session)
