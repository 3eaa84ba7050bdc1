"""Database failures that are the service's to name: unreachable, timed out, not permitted.

SPEC "Errors": lost or unreachable connections are `DATABASE_UNAVAILABLE` (503, retryable), a foreign table's server
the database could not reach `SOURCE_UNAVAILABLE` (503); a statement over the
timeout is `STATEMENT_TIMEOUT` (503, without the database message); a missing privilege or a row-security refusal
is `PERMISSION_DENIED` (403, shown in every mode); a statement naming what the database no longer has (a column,
table, function or type renamed or dropped since the snapshot was read, or a prepared statement whose result type
changed under it) is `SCHEMA_CHANGED` (503, retryable) — unless the error was raised inside a function or trigger
body, which is the function's own failure, not the snapshot's. Every other database error is left to the API layer,
which knows the catalog (constraint codes) and the masking mode.
"""

import psycopg

from svc.errors import Code, SvcError

#: Serialization failure and deadlock: retried when the operation owns its transaction.
RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
#: Server going away or refusing connections (operator intervention, too many connections).
_UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "57P04", "53300"})
#: Could not connect, connection lost: when the database sends them, about the server of a foreign table.
_REMOTE_UNREACHABLE_SQLSTATES = frozenset({"08001", "08006"})
#: Undefined column, table, function, object (a type) and schema.
_DRIFT_SQLSTATES = frozenset({"42703", "42P01", "42883", "42704", "3F000"})


def map_database_error(exc: psycopg.Error) -> SvcError | None:
    """The typed error for a connection-level failure, timeout or refusal; None for anything else."""
    state = exc.sqlstate
    if state == "57014":
        return SvcError(Code.STATEMENT_TIMEOUT, "the statement ran longer than the statement timeout")
    if _schema_changed(exc):
        return SvcError(
            Code.SCHEMA_CHANGED,
            "the database schema changed since the service read it; the request can be retried",
        )
    if state == "42501":
        return SvcError(Code.PERMISSION_DENIED, exc.diag.message_primary or "permission denied")
    if state in _REMOTE_UNREACHABLE_SQLSTATES and exc.pgresult is not None:
        # The database itself answered: what it could not reach is a foreign table's server (postgres_fdw).
        return SvcError(
            Code.SOURCE_UNAVAILABLE, "a foreign table's server could not be reached; the request can be retried"
        )
    if (
        state in _UNAVAILABLE_SQLSTATES
        or (state or "").startswith("08")
        or (state is None and isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)))
    ):
        return SvcError(Code.DATABASE_UNAVAILABLE, "the database is unavailable; the request can be retried")
    return None


def _schema_changed(exc: psycopg.Error) -> bool:
    state = exc.sqlstate
    if exc.diag.context:  # raised while running a function's or trigger's body
        return False
    if state in _DRIFT_SQLSTATES:
        # A foreign table's server without a user mapping for the role is the operator's to set up (the startup
        # warned of it), not a schema that changed.
        return not (exc.diag.message_primary or "").startswith("user mapping not found")
    return state == "0A000" and "cached plan must not change result type" in (exc.diag.message_primary or "")
