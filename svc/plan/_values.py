"""Values clients send, checked and converted for binding, and the parameters a plan collects (layer 4).

SPEC "Errors": bad input is BAD_USER_INPUT before any SQL runs, never a database error: text with NUL, numbers that
are not numbers, dates that are not dates, enum values the type does not have, malformed UUIDs. GraphQL and REST
both convert through here, by the model's value types (SPEC "Scalars and value mapping": BigInt and Decimal arrive
as strings or numbers; enums as their GraphQL values; JSON as any value).
"""

import datetime
import decimal
import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeGuard, cast

import orjson

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
    """A client's value of a scalar, converted for binding (BAD_USER_INPUT naming `path` when it does not fit)."""
    return _READERS[kind](value, path)


def scalar_reader(kind: Scalar) -> Callable[[Any, Sequence[str | int]], Any]:
    """`scalar` for one kind, chosen once (a column's values are read by the same reader row after row)."""
    return _READERS[kind]


def _int(value: Any, path: Sequence[str | int]) -> int:
    return _integer(value, _INT32, "Int", path)


def _big_int(value: Any, path: Sequence[str | int]) -> int:
    return _integer(value, _INT64, "BigInt", path)


def _float(value: Any, path: Sequence[str | int]) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad_input(f"expected a finite number; got {value!r}", path)
    return float(value)


def _decimal(value: Any, path: Sequence[str | int]) -> decimal.Decimal:
    try:
        number = decimal.Decimal(str(value)) if not isinstance(value, bool) else None
    except decimal.InvalidOperation:
        number = None
    if number is None or not number.is_finite():
        raise bad_input(f"expected a decimal number (as a string or a number); got {value!r}", path)
    return number


def _boolean(value: Any, path: Sequence[str | int]) -> bool:
    if not isinstance(value, bool):
        raise bad_input(f"expected true or false; got {value!r}", path)
    return value


def _uuid(value: Any, path: Sequence[str | int]) -> str:
    try:
        return str(uuid.UUID(text(value, path)))
    except ValueError:
        raise bad_input(f"expected a UUID; got {value!r}", path) from None


def _interval(value: Any, path: Sequence[str | int]) -> str:
    if not isinstance(value, str) or not _INTERVAL.match(value):
        raise bad_input(f"expected an interval (`1 day 02:00:00` or ISO 8601 `P1DT2H`); got {value!r}", path)
    return text(value, path)


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


def copy_value(type_: ValueType) -> Callable[[Any], Any] | None:
    """How a column's written value (as `WriteInputs.value` converts it) goes into a COPY row, whose text the type's
    input function reads as it reads the value a write's JSON gives `json_populate_record`: `as_copied` where
    psycopg's text dumpers write the value so (texts, numbers as Python writes them, booleans), JSON values as their
    JSON text; None for lists and composites, which that reads from JSON arrays and objects and COPY would have in
    PostgreSQL's own array and record syntax."""
    if type_.kind in (ValueKind.LIST, ValueKind.COMPOSITE):
        return None
    if type_.name == "JSON":
        return _copied_json
    return as_copied


def as_copied(value: Any) -> Any:
    """A value COPY takes as it is (`copy_value`)."""
    return value


def _copied_json(value: Any) -> str | None:
    return None if value is None else encode_json(value)


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


def _temporal(parse: Callable[[str], object], name: str, z: bool) -> Callable[[Any, Sequence[str | int]], str]:
    """ISO 8601 text, checked with Python's reader and sent as it is (PostgreSQL reads ISO 8601 too); `z`: a `Z`
    offset is read as +00:00."""

    def read(value: Any, path: Sequence[str | int]) -> str:
        source = text(value, path)
        try:
            parse(source.replace("Z", "+00:00") if z else source)
        except ValueError:
            raise bad_input(f"expected an ISO 8601 {name}; got {value!r}", path) from None
        return source

    return read


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


_READERS: dict[Scalar, Callable[[Any, Sequence[str | int]], Any]] = {
    Scalar.STRING: text,
    Scalar.INT: _int,
    Scalar.BIG_INT: _big_int,
    Scalar.FLOAT: _float,
    Scalar.DECIMAL: _decimal,
    Scalar.BOOLEAN: _boolean,
    Scalar.UUID: _uuid,
    Scalar.DATETIME: _temporal(datetime.datetime.fromisoformat, "datetime", z=True),
    Scalar.DATE: _temporal(datetime.date.fromisoformat, "date", z=False),
    Scalar.TIME: _temporal(datetime.time.fromisoformat, "time", z=True),
    Scalar.INTERVAL: _interval,
    Scalar.JSON: json_text,
}

#: Deepest nesting of arrays and objects a request body may have (SPEC "Limits": hostile input).
MAX_JSON_DEPTH = 100


class NotJson(SvcError):
    """A client's text that is not JSON at all (BAD_USER_INPUT); callers that try JSON first may fall back."""


def parse_json(
    body: bytes | str, what: str = "the request body", *, invalid: str | None = None, field: str | None = None
) -> Any:
    """A client's JSON (a body, a URL parameter): BAD_USER_INPUT when it is not UTF-8 JSON (NotJson, with `invalid`
    as its message when given) or nests deeper than MAX_JSON_DEPTH; `field` names the parameter in either error.

    Read by orjson (several times faster than json, which an import's lines feel), and read again by json where
    orjson refuses what json takes (a BOM, UTF-16, NaN, lone surrogates) or reads a whole number past 64 bits as a
    float: what json reads is the rule, orjson only reads it sooner."""
    value: Any
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    else:
        if type(value) is dict:  # most often an object of scalars other than floats: nothing to walk
            members: dict[str, object] = value  # pyright: ignore[reportUnknownVariableType] (any JSON object)
            for member in members.values():
                if type(member) in _NOT_FLAT:
                    break
            else:
                return members
        if _nested_within(value, what, field, floats=True):
            return cast(Any, value)
    try:
        value = json.loads(body)
    except RecursionError:
        raise _too_deep(what, field) from None
    except (ValueError, UnicodeDecodeError):
        extensions = {"field": field} if field else {}
        raise NotJson(Code.BAD_USER_INPUT, invalid or f"{what} is not valid JSON", extensions=extensions) from None
    _nested_within(value, what, field)
    return value


#: Whole numbers from here on may be floats orjson made of integers too long for it (json keeps them whole).
_LONG = float(2**63)


#: What makes an object need the walk: members that nest, and floats (orjson's reading of a long integer?). Compared
#: by exact type: a third of what `isinstance` costs, line after line of an import.
_NOT_FLAT = frozenset({dict, list, float})


def _nested_within(value: Any, what: str, field: str | None, *, floats: bool = False) -> bool:
    """BAD_USER_INPUT when `value` nests deeper than MAX_JSON_DEPTH; with `floats`, False when it holds a whole
    float of 2**63 or more (orjson's reading of a longer integer, which json is to read instead)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = cast("dict[str, Any]", item).values()
        elif isinstance(item, list):
            children = cast("list[Any]", item)
        else:
            children = (item,)  # the top level's own value
            depth -= 1
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_JSON_DEPTH:
                    raise _too_deep(what, field)
                pending.append((cast(Any, child), depth + 1))
            elif floats and isinstance(child, float) and abs(child) >= _LONG and child.is_integer():
                return False
    return True


def _too_deep(what: str, field: str | None) -> SvcError:
    extensions = {"field": field} if field else {}
    return SvcError(
        Code.BAD_USER_INPUT, f"{what} is nested more than {MAX_JSON_DEPTH} levels deep", extensions=extensions
    )
