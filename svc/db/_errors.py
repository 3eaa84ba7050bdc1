"""Database failures that are the service's to name: unreachable, timed out, not permitted.

SPEC "Errors": lost or unreachable connections are `DATABASE_UNAVAILABLE` (503, retryable); a statement over the
timeout is `STATEMENT_TIMEOUT` (503, without the database message); a missing privilege or a row-security refusal
is `PERMISSION_DENIED` (403, shown in every mode). Every other database error is left to the API layer, which knows
the catalog (constraint codes) and the masking mode.
"""

import psycopg

from svc.errors import Code, SvcError

#: Serialization failure and deadlock: retried when the operation owns its transaction.
RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
#: Server going away or refusing connections (operator intervention, too many connections).
_UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "57P04", "53300"})


def map_database_error(exc: psycopg.Error) -> SvcError | None:
    """The typed error for a connection-level failure, timeout or refusal; None for anything else."""
    state = exc.sqlstate
    if state == "57014":
        return SvcError(Code.STATEMENT_TIMEOUT, "the statement ran longer than the statement timeout")
    if state == "42501":
        return SvcError(Code.PERMISSION_DENIED, exc.diag.message_primary or "permission denied")
    if (
        state in _UNAVAILABLE_SQLSTATES
        or (state or "").startswith("08")
        or (state is None and isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)))
    ):
        return SvcError(Code.DATABASE_UNAVAILABLE, "the database is unavailable; the request can be retried")
    return None
