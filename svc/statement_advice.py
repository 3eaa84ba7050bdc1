"""`svc advise --statements [--top n]` and `GET /debug/statements?top=n` (SPEC "Command line", "Dev statement
advisor"): the most expensive operations the service ran, and the indexes that would make them cheaper.

- Operations come from `pg_stat_statements` (the extension must be loaded by the server: `shared_preload_libraries`),
  the service's statements only: each carries the structured comment that names its operation (`database.sql_comments`),
  `graphql <operation>`, `rest <METHOD> <resource>`, `import <Type>`. An operation's statements are summed: its time
  is their total, its calls the most any of them had (a write sends several per request), its mean the one over the
  other.
- For each of the top operations' statements, the plan is made as a generic plan (`PREPARE`, then `EXPLAIN EXECUTE`
  with `plan_cache_mode = force_generic_plan`, its parameters NULL: values do not change a generic plan), and every
  sequential scan with a filter names a candidate: an index on the filtered column. With the `hypopg` extension in
  the database, each candidate is tried as a hypothetical index and suggested only if the statement's estimated
  cost falls by at least 10% (`checked`); without it, candidates are listed unchecked.

Nothing is written: the plans are made in a transaction rolled back at the end, and hypothetical indexes exist only
in the session that made them.
"""

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, LiteralString, cast

import attrs
import psycopg
from psycopg import sql

#: A candidate index is suggested when it lowers the estimated cost by at least this share.
MIN_GAIN = 0.10
#: The most parameters a statement's PREPARE declares text before it is given up.
_MAX_DECLARED = 200
_COMMENT = re.compile(r"\s*/\* (.*?) \*/\s*$", re.DOTALL)
_TAG = re.compile(r"(\w+)='([^']*)'")
#: The column a filter compares: `(title = $1)`, `((rating)::text = ($1)::text)`, `(length > 100)`.
_FILTERED = re.compile(
    r'\(+(?:"?[A-Za-z_][\w$]*"?\.)?"?([A-Za-z_][\w$]*)"?\)?(?:::[\w ]+)? (?:=|<>|<|>|<=|>=|~~\*?|!~~) '
)


@attrs.frozen
class OperationCost:
    operation: str
    calls: int
    total_ms: float
    mean_ms: float
    #: Its statements' texts (without the comment), costliest first.
    statements: tuple[str, ...]


@attrs.frozen
class IndexSuggestion:
    table: str  # schema.table
    column: str
    operation: str
    #: Proven by a hypothetical index (hypopg): the estimated costs without and with it.
    checked: bool
    cost: float
    with_index: float | None = None

    @property
    def ddl(self) -> str:
        schema, _, table = self.table.partition(".")
        statement = sql.SQL("create index on {} ({})").format(
            sql.Identifier(schema, table), sql.Identifier(self.column)
        )
        return statement.as_string(None)


@attrs.frozen
class StatementReport:
    operations: tuple[OperationCost, ...]
    indexes: tuple[IndexSuggestion, ...]
    hypopg: bool

    def json(self) -> dict[str, Any]:
        return {
            "operations": [
                {"operation": o.operation, "calls": o.calls, "totalMs": round(o.total_ms, 3),
                 "meanMs": round(o.mean_ms, 3)}
                for o in self.operations
            ],
            "indexes": [
                {"table": i.table, "column": i.column, "operation": i.operation, "ddl": i.ddl, "checked": i.checked,
                 "cost": i.cost, "costWithIndex": i.with_index}
                for i in self.indexes
            ],
            "hypopg": self.hypopg,
        }  # fmt: skip

    def render(self) -> str:
        lines = ["most expensive operations (pg_stat_statements):"]
        for o in self.operations:
            lines.append(f"  {o.operation}: {o.calls} calls, {o.total_ms:.1f} ms in all, {o.mean_ms:.2f} ms each")
        if not self.operations:
            lines.append("  none recorded yet")
        lines.append("missing indexes" + ("" if self.hypopg else " (unchecked: hypopg is not installed)") + ":")
        for i in self.indexes:
            proof = (
                f"estimated cost {i.cost:.1f} -> {i.with_index:.1f}" if i.checked else f"estimated cost {i.cost:.1f}"
            )
            lines.append(f"  {i.ddl};  -- {i.operation}: {proof}")
        if not self.indexes:
            lines.append("  none found")
        return "\n".join(lines) + "\n"


class StatisticsUnavailable(Exception):
    """`pg_stat_statements` is not installed in the database, or not loaded by the server."""


def statement_report(conn: psycopg.Connection[Any], top: int = 20) -> StatementReport:
    """The report of the database `conn` is connected to (a connection of its own: it is left idle)."""
    conn.autocommit = False
    try:
        operations = _operations(conn, top)
        hypopg = _has(conn, "hypopg")
        indexes = tuple(_suggestions(conn, operations, hypopg))
    finally:
        conn.rollback()
        with conn.cursor() as cursor:
            cursor.execute("deallocate all")
        conn.commit()
    return StatementReport(tuple(operations), indexes, hypopg)


def statement_report_at(url: str, top: int = 20) -> StatementReport:
    """The report of the database at `url`, on a connection of its own (blocking: run it in a worker thread)."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        return statement_report(conn, top)


def operation_costs_at(url: str) -> list[OperationCost]:
    """Every operation's cost in the database at `url` (blocking: run it in a worker thread)."""
    with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
        return _operations(conn, top=None)


def operation_of(query: str) -> tuple[str, str] | None:
    """(the operation a statement of the service's serves, its text without the comment), or None."""
    found = _COMMENT.search(query)
    if found is None:
        return None
    tags = dict(_TAG.findall(found.group(1)))
    api = tags.get("api")
    if api == "graphql":
        name = f"graphql {tags.get('operation', 'anonymous')}"
    elif api == "rest":
        name = f"rest {tags.get('method', '')} {tags.get('resource', '')}".rstrip()
    elif api == "import":
        name = f"import {tags.get('resource', '')}"
    else:
        return None
    return name, query[: found.start()]


def _has(conn: psycopg.Connection[Any], extension: str) -> bool:
    row = conn.execute("select 1 from pg_extension where extname = %s", (extension,)).fetchone()
    return row is not None


def _operations(conn: psycopg.Connection[Any], top: int | None) -> list[OperationCost]:
    if not _has(conn, "pg_stat_statements"):
        raise StatisticsUnavailable("the pg_stat_statements extension is not installed in this database")
    try:
        rows = conn.execute(
            "select s.query, s.calls, s.total_exec_time from pg_stat_statements s"
            " join pg_database d on d.oid = s.dbid where d.datname = current_database() and s.query like '%/* %'"
        ).fetchall()
    except psycopg.errors.ObjectNotInPrerequisiteState as exc:
        raise StatisticsUnavailable("pg_stat_statements is not loaded: add it to shared_preload_libraries") from exc
    grouped: dict[str, list[tuple[str, int, float]]] = {}
    for query, calls, total in rows:
        found = operation_of(query)
        if found is not None:
            grouped.setdefault(found[0], []).append((found[1], int(calls), float(total)))
    costs = []
    for name, statements in grouped.items():
        statements.sort(key=lambda s: -s[2])
        total = sum(s[2] for s in statements)
        calls = max(s[1] for s in statements)
        costs.append(
            OperationCost(name, calls, total, total / calls if calls else 0.0, tuple(s[0] for s in statements))
        )
    costs.sort(key=lambda c: -c.total_ms)
    return costs[:top]


def _suggestions(
    conn: psycopg.Connection[Any], operations: list[OperationCost], hypopg: bool
) -> Iterator[IndexSuggestion]:
    seen: set[tuple[str, str]] = set()
    for number, (operation, statement) in enumerate((o.operation, s) for o in operations for s in o.statements):
        name = f"svc_advise_{number}"
        plan = _generic_plan(conn, name, statement)
        if plan is None:
            continue
        for table, column in _scanned(plan):
            if (table, column) in seen:
                continue
            seen.add((table, column))
            cost = float(plan["Total Cost"])
            if not hypopg:
                yield IndexSuggestion(table, column, operation, checked=False, cost=cost)
                continue
            candidate = IndexSuggestion(table, column, operation, checked=True, cost=cost)
            conn.execute("select hypopg_create_index(%s)", (candidate.ddl,))
            # Prepared afresh: a prepared statement keeps its generic plan, and a hypothetical index changes no
            # catalog that would make it plan again.
            tried = _generic_plan(conn, f"{name}_{len(seen)}", statement)
            conn.execute("select hypopg_reset()")
            if tried is not None and float(tried["Total Cost"]) <= cost * (1 - MIN_GAIN):
                yield attrs.evolve(candidate, with_index=float(tried["Total Cost"]))


def _generic_plan(conn: psycopg.Connection[Any], name: str, statement: str) -> Mapping[str, Any] | None:
    """The generic plan of `statement` prepared as `name`, or None when it cannot be prepared (the statistics hold a
    statement this database no longer runs)."""
    try:
        with conn.transaction():
            _prepare(conn, name, statement)
            row = conn.execute(
                "select coalesce(array_length(parameter_types, 1), 0) from pg_prepared_statements where name = %s",
                (name,),
            ).fetchone()
            count = int(row[0]) if row else 0
            conn.execute("set local plan_cache_mode = force_generic_plan")
            nulls = sql.SQL(", ").join([sql.SQL("null")] * count)
            execute = sql.SQL("explain (format json, verbose) execute {}{}").format(
                sql.Identifier(name), sql.SQL("({})").format(nulls) if count else sql.SQL("")
            )
            (explained,) = conn.execute(execute).fetchone() or (None,)
    except psycopg.Error:
        return None
    if explained is None:
        return None
    document = explained if not isinstance(explained, str) else json.loads(explained)
    return document[0]["Plan"]


def _prepare(conn: psycopg.Connection[Any], name: str, statement: str) -> None:
    """PREPARE `statement` as `name`. pg_stat_statements writes the constants of a statement as parameters too
    (`json_build_object($2, ...)`), whose type the server cannot always infer: each it names is declared text (the
    others `unknown`: inferred) and the statement prepared again."""
    text = sql.SQL(cast(LiteralString, statement))  # what pg_stat_statements recorded of the service's own
    declared: dict[int, str] = {}
    while True:
        types = sql.SQL("")
        if declared:
            count = max(declared)
            names = [sql.SQL(declared.get(n, "unknown")) for n in range(1, count + 1)]  # type: ignore[arg-type]
            types = sql.SQL(" ({})").format(sql.SQL(", ").join(names))
        try:
            with conn.transaction():
                conn.execute(sql.SQL("prepare {}{} as {}").format(sql.Identifier(name), types, text))
            return
        except psycopg.errors.IndeterminateDatatype as exc:
            found = re.search(r"\$(\d+)", str(exc))
            if found is None or int(found.group(1)) in declared or len(declared) > _MAX_DECLARED:
                raise
            declared[int(found.group(1))] = "text"


def _scanned(plan: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(schema.table, column) of each sequential scan the plan filters on a column."""
    if plan.get("Node Type") == "Seq Scan" and plan.get("Filter") and plan.get("Relation Name"):
        found = _FILTERED.search(plan["Filter"])
        if found is not None:
            yield f"{plan.get('Schema', 'public')}.{plan['Relation Name']}", found.group(1)
    for child in plan.get("Plans", ()):
        yield from _scanned(child)
