"""The JSON Schema of one value (SPEC "Scalars and value mapping", "Naming").

"REST rows use the API's field names (camelCase ...); enums use their GraphQL values; 64-bit integers and numeric
values are JSON strings". So: Int is an integer, BigInt and Decimal are strings with a numeric pattern, Float a
number, Boolean a boolean, UUID a string of format uuid, JSON any value, enums `{type: string, enum: [GraphQL
values]}` (`_openapi_schemas.py`), arrays of their items, ranges `{start: {value, inclusive} | null, end: ...}`,
composites objects of their attributes. Dates, times and intervals are plain strings described in words: PostgreSQL
answers `infinity` and timestamps without a zone, which `format: date-time` would refuse. bytea columns are
PostgreSQL's hex text in rows (their bytes are served at their own path). A nullable value admits null (`type: [...,
"null"]`, or `anyOf` with `{type: "null"}` around a `$ref` or an enum).
"""

from typing import Any

from svc.model import Field, Scalar, ValueKind, ValueType

Schema = dict[str, Any]
NULL: Schema = {"type": "null"}

_BIG_INT_PATTERN = r"^[-+]?[0-9]+$"
_DECIMAL_PATTERN = r"^(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|NaN|[-+]?Infinity)$"
_INFINITY = "or `infinity`/`-infinity`"
_TEMPORAL = {
    "timestamp with time zone": f"An ISO 8601 timestamp with a UTC offset (`2024-05-01T12:00:00+00:00`), {_INFINITY}.",
    "timestamp without time zone": f"An ISO 8601 timestamp without a UTC offset (`2024-05-01T12:00:00`), {_INFINITY}.",
    "date": f"An ISO 8601 date (`2024-05-01`), {_INFINITY}.",
}
_SCALARS: dict[Scalar, Schema] = {
    Scalar.INT: {"type": "integer", "format": "int32"},
    Scalar.BIG_INT: {
        "type": "string",
        "pattern": _BIG_INT_PATTERN,
        "description": "A 64-bit integer, as a string (JSON numbers lose precision past 2^53).",
    },
    Scalar.FLOAT: {"type": "number", "format": "double"},
    Scalar.DECIMAL: {
        "type": "string",
        "pattern": _DECIMAL_PATTERN,
        "description": "An arbitrary-precision decimal number, as a string.",
    },
    Scalar.BOOLEAN: {"type": "boolean"},
    Scalar.STRING: {"type": "string"},
    Scalar.UUID: {"type": "string", "format": "uuid"},
    Scalar.DATETIME: {"type": "string", "description": _TEMPORAL["timestamp with time zone"]},
    Scalar.DATE: {"type": "string", "description": _TEMPORAL["date"]},
    Scalar.TIME: {"type": "string", "description": "A time of day (`12:00:00`; with its UTC offset for `timetz`)."},
    Scalar.INTERVAL: {
        "type": "string",
        "description": "A span of time as PostgreSQL writes it (`1 day 02:00:00`); ISO 8601 (`P1DT2H`) is read too.",
    },
    Scalar.JSON: {"description": "Any JSON value."},
}
_BYTEA = "Bytes, as PostgreSQL's hex text (`\\x` followed by two hex digits per byte)."


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """The schema, admitting null too: a second type where there is one, else `anyOf` with null."""
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    if not any(key in schema for key in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")):
        return schema  # no type: any value, null among them
    return {"anyOf": [schema, NULL]}


def described(schema: Schema, text: str | None) -> Schema:
    """The schema with a description in front of the one it has (a `$ref` may carry one beside it in 3.1)."""
    if not text:
        return schema
    own = schema.get("description")
    return {**schema, "description": f"{text}\n\n{own}" if own else text}


def is_bytea(field: Field) -> bool:
    """A binary column: String in the API, `bytea` in the database (a hex string in rows, bytes at its own path)."""
    value = field.type
    return value.kind is ValueKind.SCALAR and value.name == Scalar.STRING.value and value.sql_type == "bytea"


def is_json(value: ValueType) -> bool:
    return value.kind is ValueKind.SCALAR and value.name == Scalar.JSON.value


def scalar(value: ValueType) -> Schema:
    """The schema of a scalar value (a new dict: callers may add to it)."""
    kind = Scalar(value.name)
    if kind is Scalar.STRING and value.sql_type == "bytea":
        return {"type": "string", "description": _BYTEA}
    if kind is Scalar.DATETIME and value.sql_type in _TEMPORAL:
        return {"type": "string", "description": _TEMPORAL[value.sql_type]}
    return dict(_SCALARS[kind])


def bounded(schema: Schema, field: Field) -> Schema:
    """A write body's property with the column's length and simple CHECK bounds (SPEC "@constraint directive").

    CHECK patterns are left out: they are POSIX regular expressions, not the ECMA-262 ones JSON Schema means.
    """
    bounds = field.bounds
    kind = schema.get("type")
    extra: dict[str, Any] = {}
    if kind in ("integer", "number") and bounds is not None:
        whole = kind == "integer"
        for key, value in (
            ("minimum", bounds.minimum),
            ("maximum", bounds.maximum),
            ("exclusiveMinimum", bounds.exclusive_minimum),
            ("exclusiveMaximum", bounds.exclusive_maximum),
        ):
            if value is not None:
                extra[key] = int(value) if whole and float(value).is_integer() else value
    if kind == "string":
        max_length = bounds.max_length if bounds is not None and bounds.max_length is not None else field.max_length
        if bounds is not None and bounds.min_length is not None:
            extra["minLength"] = bounds.min_length
        if max_length is not None:
            extra["maxLength"] = max_length
    if kind == "array" and bounds is not None:
        if bounds.min_items is not None:
            extra["minItems"] = bounds.min_items
        if bounds.max_items is not None:
            extra["maxItems"] = bounds.max_items
    return {**schema, **extra}
