"""Logs, the request record that spans and metrics read, and the lookups counted for them; shared by every layer.

Layer 0: nothing here imports the rest of the service. What exports (the OpenTelemetry SDK, OTLP, the Prometheus
exposition) is `svc.telemetry.export`, imported by the server alone: the SDK costs a fifth of a second to import,
which the command line's other commands do not pay.
"""

from ._logging import configure_logging
from ._record import (
    DatabaseOperation,
    Record,
    cache_counts,
    cache_lookup,
    cache_miss,
    database_operation,
    record_var,
    set_error,
    set_operation,
    set_route,
    stage,
    statement_plan,
)

__all__ = [
    "DatabaseOperation",
    "Record",
    "cache_counts",
    "cache_lookup",
    "cache_miss",
    "configure_logging",
    "database_operation",
    "record_var",
    "set_error",
    "set_operation",
    "set_route",
    "stage",
    "statement_plan",
]
