"""Change events and schedules (SPEC "Events"; layer 9): the capture DDL and its install or check, the outbox
statements the dispatcher actor runs, and Standard Webhooks signing. The dispatcher itself is in `svc.actors`."""

from ._capture import SCHEMA, Capture, CaptureDdl, capture_ddl, captures
from ._install import check_capture, install_capture, prepare_capture
from ._outbox import (
    Claimed,
    Delivery,
    Outcome,
    claim,
    enqueue_slot,
    purge,
    record,
    release,
)
from ._signing import signature
from ._transport import H11Transport

__all__ = [
    "SCHEMA",
    "Capture",
    "CaptureDdl",
    "Claimed",
    "Delivery",
    "H11Transport",
    "Outcome",
    "capture_ddl",
    "captures",
    "check_capture",
    "claim",
    "enqueue_slot",
    "purge",
    "install_capture",
    "prepare_capture",
    "record",
    "release",
    "signature",
]
