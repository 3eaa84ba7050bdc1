"""Global IDs and cursors: opaque to clients, decoded here (SPEC "Global object identification", "Pagination rules").

A global ID is base64 of `<Type>:<key>` (the compiler writes it in SQL the same way). A cursor is base64 of the JSON
array `[signature, order values...]`; it is valid only for the order it was issued under (its signature names the
type and the orderBy). Anything that does not decode is None, and the callers decide what that means (a null node,
or BAD_USER_INPUT for a cursor).
"""

import base64
import binascii
import decimal
import json
from typing import Any

from ._values import is_json_array


def encode_global_id(type_name: str, key: object) -> str:
    return base64.b64encode(f"{type_name}:{key}".encode()).decode()


def decode_global_id(text: object) -> tuple[str, str] | None:
    """(type name, key text), or None when `text` is not a global ID."""
    decoded = _unbase64(text)
    if decoded is None or ":" not in decoded:
        return None
    type_name, key = decoded.split(":", 1)
    if not type_name or not key or "\x00" in key:
        return None
    return type_name, key


def decode_cursor(text: object, signature: str, values: int) -> list[Any] | None:
    """The order values a cursor holds, or None when it was not issued for this order (or is not a cursor)."""
    decoded = _unbase64(text)
    if decoded is None:
        return None
    try:
        items = json.loads(decoded, parse_float=decimal.Decimal)
    except ValueError:
        return None
    if not is_json_array(items) or len(items) != values + 1 or items[0] != signature:
        return None
    return items[1:]


def _unbase64(text: object) -> str | None:
    if not isinstance(text, str) or not text or len(text) > 10_000:
        return None
    try:
        return base64.b64decode(text.encode("ascii"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None
