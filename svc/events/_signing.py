"""Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret, space
separated, so a receiver holding either the old or the new secret verifies while secrets rotate."""

import base64
import hashlib
import hmac
from collections.abc import Sequence


def signature(keys: Sequence[bytes], event_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value of `body` sent as `event_id` at `timestamp` (Unix seconds)."""
    signed = b"%s.%d.%s" % (event_id.encode(), timestamp, body)
    return " ".join("v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode() for key in keys)
