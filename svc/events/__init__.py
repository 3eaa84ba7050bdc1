"""Change events and schedules (SPEC "Events"; layer 9): the capture DDL and its install or check, the outbox
statements the dispatcher actor runs, and Standard Webhooks signing. The dispatcher itself is in `svc.actors`."""

from ._capture import capture_ddl
from ._install import prepare_capture
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
    "Claimed",
    "Delivery",
    "H11Transport",
    "Outcome",
    "capture_ddl",
    "claim",
    "enqueue_slot",
    "purge",
    "prepare_capture",
    "record",
    "release",
    "signature",
]
