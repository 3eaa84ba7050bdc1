"""Values clients send, checked and converted for binding, and the parameters a plan collects (layer 4).

SPEC "Errors": bad input is BAD_USER_INPUT before any SQL runs, never a database error: text with NUL, numbers that
are not numbers, dates that are not dates, enum values the type does not have, malformed UUIDs. GraphQL and REST
both convert through here, by the model's value types (SPEC "Scalars and value mapping": BigInt and Decimal arrive
as strings or numbers; enums as their GraphQL values; JSON as any value).
"""

import datetime
import decimal
import json
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeGuard, cast

from svc.errors import Code, SvcError
from svc.model import Model, Scalar, ValueKind, ValueType

from ._ir import Param
from ._watched import plain, watched_index

_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)
#: PostgreSQL's interval input: its own words (`1 day 02:00:00`, `3 hours`) or ISO 8601 (`P1DT2H`).
_INTERVAL = re.compile(
    r"^\s*(?:[+-]?P(?:\d+(?:[.,]\d+)?[YMWD])*(?:T(?:\d+(?:[.,]\d+)?[HMS])*)?"
    r"|(?:@\s*)?(?:[+-]?\d+(?:\.\d+)?\s*[a-zA-Z]*\s*|[+-]?\d+:\d+(?::\d+(?:\.\d+)?)?\s*)+(?:ago)?)\s*$"
)


#: How a parameter's value follows from watched values (`svc.plan._watched`): the parameter's number, the watched
#: value's number (or the numbers of a list's items) and the pure conversion of the plain value (or list).
Binder = tuple[int, int | tuple[int, ...], Callable[[Any], Any]]


class Params:
    """The values of one plan, numbered in the order the planner meets them."""

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self.values: list[Any] = list(values)
        #: The values bound from watched values, as `bind` met them.
        self.binders: list[Binder] = []

    def add(self, value: Any, sql_type: str) -> Param:
        self.values.append(value)
        return Param(len(self.values) - 1, sql_type)

    def bind(self, given: Any, convert: Callable[[Any], Any], sql_type: str) -> Param:
        """The parameter of a client's value, `convert(given)`; `convert` must be a pure function of its argument
        (the same for every value), so that a plan keeps it to bind other requests' values in the same place. A
        watched `given` (or a list of watched items) is converted as its plain value and its binder kept."""
        source = _watched_source(given)
        param = self.add(convert(plain(given)), sql_type)
        if source is not None:
            self.binders.append((param.index, source, convert))
        return param

    def named(self) -> dict[str, Any]:
        """The values by placeholder name (`p0`, `p1`, ...), as the compiled statement takes them."""
        return {f"p{index}": value for index, value in enumerate(self.values)}


def _watched_source(given: Any) -> int | tuple[int, ...] | None:
    """The number of a watched value, or the numbers of a non-empty list of them; None otherwise."""
    if isinstance(given, list) and given:
        indices = [watched_index(item) for item in cast("list[Any]", given)]
        return None if None in indices else cast("tuple[int, ...]", tuple(indices))
    return watched_index(cast(object, given))


def is_json_array(value: object) -> TypeGuard[list[Any]]:
    """A decoded JSON array (or a list of input values): its items may be anything."""
    return isinstance(value, list)


def is_json_object(value: object) -> TypeGuard[dict[str, Any]]:
    """A decoded JSON object (or an input object): its members may be anything."""
    return isinstance(value, dict)


def bad_input(message: str, path: Sequence[str | int] = ()) -> SvcError:
    extensions = {"field": ".".join(str(p) for p in path)} if path else {}
    return SvcError(Code.BAD_USER_INPUT, message, extensions=extensions)


def coerce(value: Any, type_: ValueType, model: Model, path: Sequence[str | int] = ()) -> Any:
    """The value to bind for a client's value of an API type; SvcError BAD_USER_INPUT when it does not fit."""
    if value is None:
        return None
    if type_.kind is ValueKind.LIST:
        items = value if is_json_array(value) else [value]  # GraphQL input coercion: a single value where a list goes
        assert type_.item is not None
        return [coerce(item, type_.item, model, [*path, i]) for i, item in enumerate(items)]
    if type_.kind is ValueKind.ENUM:
        return enum_label(value, type_.name, model, path)
    if type_.kind is ValueKind.COMPOSITE:
        raise bad_input("composite values cannot be compared", path)
    if type_.kind is ValueKind.RANGE:
        return range_literal(value, type_, model, path)
    return scalar(value, Scalar(type_.name), path)


def enum_label(value: Any, enum_name: str, model: Model, path: Sequence[str | int] = ()) -> str:
    """The database label of an enum's GraphQL value."""
    enum = model.enum(enum_name)
    for label, graphql_value in enum.values:
        if graphql_value == value:
            return label
    allowed = ", ".join(v for _, v in enum.values)
    raise bad_input(f"{value!r} is not a value of {enum_name} (one of {allowed})", path)


def scalar(value: Any, kind: Scalar, path: Sequence[str | int] = ()) -> Any:
    if kind is Scalar.STRING:
        return text(value, path)
    if kind is Scalar.INT:
        return _integer(value, _INT32, "Int", path)
    if kind is Scalar.BIG_INT:
        return _integer(value, _INT64, "BigInt", path)
    if kind is Scalar.FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad_input(f"expected a number; got {value!r}", path)
        return float(value)
    if kind is Scalar.DECIMAL:
        try:
            number = decimal.Decimal(str(value)) if not isinstance(value, bool) else None
        except decimal.InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            raise bad_input(f"expected a decimal number (as a string or a number); got {value!r}", path)
        return number
    if kind is Scalar.BOOLEAN:
        if not isinstance(value, bool):
            raise bad_input(f"expected true or false; got {value!r}", path)
        return value
    if kind is Scalar.UUID:
        try:
            return str(uuid.UUID(text(value, path)))
        except ValueError:
            raise bad_input(f"expected a UUID; got {value!r}", path) from None
    if kind in (Scalar.DATETIME, Scalar.DATE, Scalar.TIME):
        return _temporal(value, kind, path)
    if kind is Scalar.INTERVAL:
        if not isinstance(value, str) or not _INTERVAL.match(value):
            raise bad_input(f"expected an interval (`1 day 02:00:00` or ISO 8601 `P1DT2H`); got {value!r}", path)
        return text(value, path)
    assert kind is Scalar.JSON
    return json_text(value, path)


def text(value: Any, path: Sequence[str | int] = ()) -> str:
    if not isinstance(value, str):
        raise bad_input(f"expected a string; got {value!r}", path)
    if "\x00" in value:
        raise bad_input("text may not contain the NUL character", path)
    return value


def json_text(value: Any, path: Sequence[str | int] = ()) -> str:
    """A JSON value as the text bound to a `jsonb` parameter (NUL is refused: PostgreSQL text cannot hold it)."""
    encoded = encode_json(value)
    if "\\u0000" in encoded:
        raise bad_input("JSON may not contain the NUL character", path)
    return encoded


def encode_json(value: Any) -> str:
    """Values as JSON text, numbers exact: a Decimal is written as the number it is, not as a float or a string (a
    JSON column keeps every digit a client sent; a numeric column reads it as it reads a string). Other values
    JSON does not know are written as their text (as they are bound)."""
    try:
        return _ENCODE(value)
    except _Decimal:
        return _exact(value)


class _Decimal(Exception):
    """A Decimal met while encoding: the value is encoded again, exactly."""


def _not_decimal(value: object) -> str:
    if isinstance(value, decimal.Decimal):
        raise _Decimal
    return str(value)


def _exact(value: Any) -> str:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dict):
        members = cast("dict[Any, Any]", value)
        return "{" + ",".join(_ENCODE_LEAF(str(k)) + ":" + _exact(v) for k, v in members.items()) + "}"
    if isinstance(value, list | tuple):
        items = cast("list[Any] | tuple[Any, ...]", value)
        return "[" + ",".join(_exact(item) for item in items) + "]"
    return _ENCODE_LEAF(value)


# Encoders made once: json.dumps builds a new one on every call given options.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_not_decimal).encode
_ENCODE_LEAF = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _integer(value: Any, bounds: tuple[int, int], name: str, path: Sequence[str | int]) -> int:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif (
        isinstance(value, str)
        and re.fullmatch(r"\s*[+-]?\d+\s*", value)
        or isinstance(value, float)
        and value.is_integer()
    ):
        number = int(value)
    if number is None or not bounds[0] <= number <= bounds[1]:
        raise bad_input(f"expected a {name} (a whole number from {bounds[0]} to {bounds[1]}); got {value!r}", path)
    return number


def _temporal(value: Any, kind: Scalar, path: Sequence[str | int]) -> str:
    """ISO 8601 text, checked with Python's reader and sent as it is (PostgreSQL reads ISO 8601 too)."""
    source = text(value, path)
    parse = {
        Scalar.DATETIME: datetime.datetime.fromisoformat,
        Scalar.DATE: datetime.date.fromisoformat,
        Scalar.TIME: datetime.time.fromisoformat,
    }[kind]
    try:
        parse(source.replace("Z", "+00:00") if kind is not Scalar.DATE else source)
    except ValueError:
        raise bad_input(f"expected an ISO 8601 {kind.value.lower()}; got {value!r}", path) from None
    return source


def range_literal(value: Any, type_: ValueType, model: Model, path: Sequence[str | int]) -> str:
    """A range input `{start: {value, inclusive}, end: {...}}` as PostgreSQL's range text (`[1,5)`); a missing
    bound is unbounded."""
    if not is_json_object(value):
        raise bad_input("expected a range object with start and end", path)
    bound_type = next(r.bound for r in model.ranges if r.name == type_.name)
    texts: list[str] = []
    inclusive: list[bool] = []
    for side in ("start", "end"):
        bound = value.get(side)
        if bound is None:
            texts.append("")
            inclusive.append(False)
            continue
        if not is_json_object(bound) or "value" not in bound or not isinstance(bound.get("inclusive"), bool):
            raise bad_input(f"expected {side} as {{value, inclusive}}", [*path, side])
        item = str(coerce(bound["value"], bound_type, model, [*path, side, "value"]))
        texts.append('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"')
        inclusive.append(bound["inclusive"])
    return f"{'[' if inclusive[0] else '('}{texts[0]},{texts[1]}{']' if inclusive[1] else ')'}"


#: Deepest nesting of arrays and objects a request body may have (SPEC "Limits": hostile input).
MAX_JSON_DEPTH = 100


class NotJson(SvcError):
    """A client's text that is not JSON at all (BAD_USER_INPUT); callers that try JSON first may fall back."""


def parse_json(
    body: bytes, what: str = "the request body", *, invalid: str | None = None, field: str | None = None
) -> Any:
    """A client's JSON (a body, a URL parameter): BAD_USER_INPUT when it is not UTF-8 JSON (NotJson, with `invalid`
    as its message when given) or nests deeper than MAX_JSON_DEPTH; `field` names the parameter in either error."""
    extensions = {"field": field} if field else {}
    try:
        value = json.loads(body)
    except RecursionError:
        raise _too_deep(what, extensions) from None
    except (ValueError, UnicodeDecodeError):
        raise NotJson(Code.BAD_USER_INPUT, invalid or f"{what} is not valid JSON", extensions=extensions) from None
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[Any] = item.values() if is_json_object(item) else item if is_json_array(item) else ()
        for child in children:
            if is_json_object(child) or is_json_array(child):
                if depth + 1 > MAX_JSON_DEPTH:
                    raise _too_deep(what, extensions)
                pending.append((child, depth + 1))
    return value


def _too_deep(what: str, extensions: dict[str, str]) -> SvcError:
    return SvcError(
        Code.BAD_USER_INPUT, f"{what} is nested more than {MAX_JSON_DEPTH} levels deep", extensions=extensions
    )
