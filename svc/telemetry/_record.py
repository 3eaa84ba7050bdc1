"""The record of one request (the spine of telemetry): its stages and database operations, timed once, where they
happen, on the run path.

SPEC "Telemetry": stages are `graphql.parse`, `graphql.plan`, `graphql.compile`, `graphql.execute` and the REST
ones (`rest.parse`, `rest.plan`, `rest.compile`, `rest.execute`); every statement a request sends is a database
operation. Whatever reports on a request reads this record when it is done: the dev `Server-Timing` header, the
spans (made afterwards from the recorded times, children of the request's server span) and the histograms. Timing
costs a clock read and an append per stage; nothing is exported on the request's path.

The record lives in a context variable, which Trio copies into every task a request handler starts, so a stage
timed in any of them lands in the request's record. Outside a request (actors' own statements) there is none, and
recording does nothing.
"""

import contextvars
import time

import attrs


@attrs.define(slots=True)
class DatabaseOperation:
    """One statement sent: when, what kind of operation it served, its text and how it failed (its SQLSTATE)."""

    started: float
    ended: float
    #: `query` or `mutation` (the unit of work it belongs to).
    kind: str
    #: As it was sent: text, bytes (a file of ours) or composed pieces, written out only when a span shows it.
    statement: object
    sqlstate: str | None = None

    def text(self) -> str:
        """The statement's text (values are parameters: the text holds none)."""
        statement = self.statement
        if isinstance(statement, str):
            return statement
        if isinstance(statement, bytes):
            return statement.decode("utf-8", "replace")
        as_string = getattr(statement, "as_string", None)  # psycopg's composed SQL
        try:
            return as_string(None) if as_string is not None else str(statement)
        except Exception:  # a piece that needs a connection to be written
            return str(statement)


@attrs.define(slots=True, eq=False)
class Record:
    """What one request did, on the `time.perf_counter` clock (`started_ns` is the same instant on the wall clock)."""

    request_id: str
    started: float = attrs.field(factory=time.perf_counter)
    started_ns: int = attrs.field(factory=time.time_ns)
    #: (name, start, end) per stage, in the order they ended.
    stages: list[tuple[str, float, float]] = attrs.field(factory=list)
    operations: list[DatabaseOperation] = attrs.field(factory=list)
    #: The route's template (`/graphql`, `/rest/{resource}`); "" when the path matched none.
    route: str = ""
    #: The GraphQL operation's type and name (None for other requests, or when it was refused before it was known).
    operation: tuple[str, str] | None = None
    #: The code of the first error the response carries.
    error: str | None = None
    #: The request's trace (32 hex digits) when it has one: its server span's, or the caller's `traceparent`.
    trace_id: str | None = None
    #: The request's server span when it is traced (log records exported during it name it).
    span: object | None = None
    #: Planning stages that ran because the compiled form was not cached (`svc_planning_duration_seconds`).
    planned_afresh: bool = False
    #: `debug.explain` (dev): (statement, its plan as EXPLAIN (FORMAT JSON) answered it) per statement sent.
    plans: list[tuple[str, bytes]] = attrs.field(factory=list)

    def wall_ns(self, instant: float) -> int:
        """A `perf_counter` instant of this request on the wall clock, in nanoseconds (spans' times)."""
        return self.started_ns + int((instant - self.started) * 1e9)


#: The record of the request the current task serves (None outside requests).
record_var: contextvars.ContextVar[Record | None] = contextvars.ContextVar("svc_record", default=None)


def stage(name: str, started: float) -> float:
    """Record that stage `name` ran from `started` until now; now, where the next stage starts."""
    now = time.perf_counter()
    record = record_var.get()
    if record is not None:
        record.stages.append((name, started, now))
    return now


def database_operation(kind: str, statement: object, started: float, sqlstate: str | None = None) -> None:
    """Record one statement sent from `started` until now (`sqlstate`: how it failed)."""
    record = record_var.get()
    if record is not None:
        record.operations.append(DatabaseOperation(started, time.perf_counter(), kind, statement, sqlstate))


def statement_plan(statement: str, plan: bytes) -> None:
    """Record the plan of a statement about to be sent (`debug.explain`)."""
    record = record_var.get()
    if record is not None:
        record.plans.append((statement, plan))


def set_route(template: str) -> None:
    """The route template of the current request, when its handler knows it better than the route table does."""
    record = record_var.get()
    if record is not None:
        record.route = template


def set_operation(kind: str, name: str) -> None:
    """The GraphQL operation the current request runs (`query`, `mutation`, `subscription`; its name)."""
    record = record_var.get()
    if record is not None:
        record.operation = (kind, name)


def set_error(code: str) -> None:
    """The code of an error the current request answers with (the first one is kept)."""
    record = record_var.get()
    if record is not None and record.error is None:
        record.error = code


#: Lookups and misses of the `document` and `operation` caches (`svc_cache_requests_total`): counted here, an
#: increment each, and read when metrics are collected. A cache counts a lookup where it is asked and a miss where it
#: makes what it did not have, so its own hit path stays as it was.
_lookups: dict[str, int] = {"document": 0, "operation": 0}
_misses: dict[str, int] = {"document": 0, "operation": 0}


def cache_lookup(cache: str) -> None:
    """Count one lookup of the `document` or `operation` cache."""
    _lookups[cache] += 1


def cache_miss(cache: str) -> None:
    """Count one miss of a cache (made afresh). A miss of the `operation` cache marks the current request as
    planned afresh (`svc_planning_duration_seconds` observes it)."""
    _misses[cache] += 1
    if cache == "operation":
        record = record_var.get()
        if record is not None:
            record.planned_afresh = True


def cache_counts() -> dict[tuple[str, str], int]:
    """Lookups so far by (cache, `hit` or `miss`)."""
    counts: dict[tuple[str, str], int] = {}
    for cache, lookups in _lookups.items():
        counts[cache, "hit"] = lookups - _misses[cache]
        counts[cache, "miss"] = _misses[cache]
    return counts
