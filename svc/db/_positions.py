"""WAL positions for read-your-writes (SPEC "Operations": read replicas): what a request asks for and what it wrote.

A request carrying `X-Min-WAL-Position` is served by a replica only once that replica has replayed past it; a write
that commits reports the primary's position after its commit, which the response carries as `X-WAL-Position`. The
HTTP layer opens a `Positions` for each request (`track_positions`); the executor reads and updates it, so nothing in
between has to pass positions along. Positions are PostgreSQL's `pg_lsn` values: `X/X`, two hexadecimal halves of a
64-bit byte position.
"""

import re
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

import attrs

_LSN = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")


def parse_lsn(text: str) -> int:
    """The byte position of a `pg_lsn` text (`16/B374D848`); ValueError when it is not one."""
    match = _LSN.match(text.strip())
    if match is None:
        raise ValueError(f"not a WAL position (X/X, two hexadecimal numbers): {text!r}")
    return int(match.group(1), 16) << 32 | int(match.group(2), 16)


def format_lsn(position: int) -> str:
    """The `pg_lsn` text of a byte position, as PostgreSQL writes it."""
    return f"{position >> 32:X}/{position & 0xFFFFFFFF:X}"


@attrs.define
class Positions:
    """One request's WAL positions: the least a replica must have replayed to serve it, and the primary's position
    after its last committed write (both byte positions)."""

    minimum: int | None = None
    written: int | None = None

    def wrote(self, position: int) -> None:
        """A write of this request committed at `position`: later reads of the request must see it too."""
        self.written = max(self.written or 0, position)
        self.minimum = max(self.minimum or 0, position)


_current: ContextVar[Positions | None] = ContextVar("svc_wal_positions", default=None)


def current_positions() -> Positions | None:
    """The positions of the request being served, or None outside a request (actors, the catalog)."""
    return _current.get()


@contextmanager
def track_positions(minimum: int | None = None) -> Generator[Positions]:
    """Track the positions of the request served inside the block."""
    positions = Positions(minimum)
    token = _current.set(positions)
    try:
        yield positions
    finally:
        _current.reset(token)
