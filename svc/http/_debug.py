"""Debug headers (SPEC "Debug headers (dev)"; `debug.sql` and `debug.explain`, allowed only in the `dev:` block).

- `debug.sql`: every response carries `X-Debug-SQL`, the statements the request sent as percent-encoded JSON,
  `[{"kind", "sql", "ms", "sqlstate"}]` in the order they were sent (`kind`: the unit of work, query or mutation;
  `sqlstate` only for a failed one).
- `debug.explain`: every response carries `X-Debug-Explain`, `[{"sql", "plan"}]`: the plan the database made for
  each compiled statement (EXPLAIN (FORMAT JSON), without ANALYZE: planned with the request's values, role and
  settings, just before the statement ran; `plan` is EXPLAIN's answer as it gave it).

A value over 8 KiB is replaced by `{"id", "url", "bytes"}` naming `GET /debug/sql/<id>`, which answers the whole
value as JSON; the last 50 such values (of either header) are kept.

`debug.statements`: `GET /debug/statements?top=n` (default 20) answers the report of `svc advise --statements`
(svc.statement_advice) as JSON, 404 when `pg_stat_statements` is not there to read. The route reads the switch of
the current snapshot's configuration on each request, so a reloaded configuration (dev mode) turns it on or off.
"""

import json
import secrets
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl, quote

import trio

from svc.errors import Code, SvcError
from svc.statement_advice import StatisticsUnavailable, statement_report_at
from svc.telemetry import DatabaseOperation, Record

from ._messages import Request, Response
from ._routing import Route

#: The longest debug header value; a longer one is kept and pointed at.
MAX_HEADER = 8 * 1024
#: How many values too long for their header are kept.
KEPT = 50
PATH = "/debug/sql"
STATEMENTS_PATH = "/debug/statements"


class DebugHeaders:
    def __init__(self, *, sql: bool, explain: bool) -> None:
        self._sql = sql
        self._explain = explain
        self._kept: OrderedDict[str, bytes] = OrderedDict()

    def headers(self, record: Record) -> list[tuple[str, str]]:
        """The debug headers of the response to the request `record` is of."""
        headers = []
        if self._sql:
            headers.append(("X-Debug-SQL", self._value([_statement(operation) for operation in record.operations])))
        if self._explain:
            plans = [{"sql": statement, "plan": json.loads(plan)} for statement, plan in record.plans]
            headers.append(("X-Debug-Explain", self._value(plans)))
        return headers

    def _value(self, items: list[dict[str, Any]]) -> str:
        """`items` as a header value: percent-encoded JSON, or a pointer to where it is kept when too long."""
        value = json.dumps(items, separators=(",", ":"))
        encoded = quote(value, safe="")
        if len(encoded) <= MAX_HEADER:
            return encoded
        key = secrets.token_hex(8)
        self._kept[key] = value.encode()
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        pointer = {"id": key, "url": f"{PATH}/{key}", "bytes": len(value.encode())}
        return quote(json.dumps(pointer, separators=(",", ":")), safe="")

    def routes(self) -> list[Route]:
        return [Route(PATH, frozenset({"GET"}), self.kept, needs_snapshot=False, prefix=True)]

    async def kept(self, request: Request) -> Response:
        value = self._kept.get(request.path.removeprefix(PATH + "/"))
        if value is None:
            raise SvcError(Code.NOT_FOUND, f"no debug value at {request.path} (the last {KEPT} are kept)")
        return Response(200, value, "application/json")


def _statement(operation: DatabaseOperation) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": operation.kind,
        "sql": operation.text(),
        "ms": round((operation.ended - operation.started) * 1000, 3),
    }
    if operation.sqlstate:
        entry["sqlstate"] = operation.sqlstate
    return entry


class DebugStatements:
    """`GET /debug/statements?top=n`: the statement report of the service's database."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url

    def routes(self) -> list[Route]:
        return [Route(STATEMENTS_PATH, frozenset({"GET"}), self.report)]

    async def report(self, request: Request) -> Response:
        assert request.snapshot is not None
        config = request.snapshot.api(None).config
        if not config.debug.statements:
            raise SvcError(Code.NOT_FOUND, f"no resource at {request.path}")
        if config.extensions.integrations.pg_stat_statements == "off":
            raise SvcError(Code.NOT_FOUND, "no statement statistics: extensions.integrations.pg_stat_statements is off")
        pairs = dict(parse_qsl(request.query_string.decode("latin-1"), keep_blank_values=True))
        top = pairs.get("top", "20")
        if not top.isdigit() or int(top) < 1 or set(pairs) - {"top"}:
            message = "take top=<n>, a positive number, and nothing else"
            raise SvcError(Code.BAD_USER_INPUT, message, extensions={"field": "top"})
        try:
            report = await trio.to_thread.run_sync(statement_report_at, self._url, int(top))
        except StatisticsUnavailable as exc:
            raise SvcError(Code.NOT_FOUND, f"no statement statistics: {exc}") from exc
        return Response.json(report.json())
