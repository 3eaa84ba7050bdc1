"""The one run path both APIs call and the only door to the database (layer 6): plans are checked against the
limits, compiled once per shape and executed; reads come back as the database's JSON texts, never decoded; writes
run in one transaction, their database errors typed by the catalog (ARCHITECTURE.md, "The one idea"). The front
ends import neither `svc.db` nor psycopg: `Session` (who a request runs as) is re-exported here."""

from svc.db import Session

from ._import import LineBatch, at_line
from ._payloads import MutationFailed, Payload
from ._run import Context, Pipeline
from ._statements import Statements

__all__ = ["Context", "LineBatch", "MutationFailed", "Payload", "Pipeline", "Session", "Statements", "at_line"]
