"""Process logging: text or JSON lines on stderr, each record carrying the request id of the task that wrote it.

SPEC "Telemetry": `telemetry.logs.level`, `telemetry.logs.format` (`text` default or `json`); logs written during a
request carry its request id and trace id. Both come from the request's record (`_record.py`), a context variable
Trio copies into every task a request handler starts, so records from nested tasks are tagged too.
"""

import json
import logging
import sys
import time
from typing import TextIO

from ._record import record_var

#: The service's loggers: what `configure_logging` writes, and what OTLP logs export.
LOGGERS = ("svc", "hypercorn.error")


def _tag_records_with_the_request_id() -> None:
    """Every record gets `request_id` and `trace_id` when it is made, so every handler (test capture and exporters
    too) sees them."""
    make = logging.getLogRecordFactory()
    if getattr(make, "tags_request_id", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        request = record_var.get()
        record.request_id = request.request_id if request is not None else None
        record.trace_id = request.trace_id if request is not None else None
        return record

    # A mark on the installed factory itself, so it is installed once however often this module is loaded.
    factory.tags_request_id = True  # pyright: ignore[reportFunctionMemberAccess]
    logging.setLogRecordFactory(factory)


_tag_records_with_the_request_id()


class _TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None)
        if not request_id:
            return line
        trace_id = getattr(record, "trace_id", None)
        return f"{line} [request_id={request_id}{f' trace_id={trace_id}' if trace_id else ''}]"


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        trace_id = getattr(record, "trace_id", None)
        if trace_id:
            entry["trace_id"] = trace_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str = "info", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Send the `svc` and `hypercorn` loggers to `stream` (stderr) in the chosen format at `level`."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(_JsonFormatter() if fmt == "json" else _TextFormatter())
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
