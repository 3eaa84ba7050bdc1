"""Value types of svc.yaml: how each scalar is read from YAML or an interpolated string, and its JSON Schema.

SPEC "Configuration": switches also read on/off/yes/no/1/0; limits are a number or `off`; durations carry a unit
(ms, s, m, h). Strings may hold `${NAME}`, so every non-string scalar also accepts the text an interpolation
produces ("4000", "on"). The converter and the JSON Schema generator both read the tables here, so the schema
describes exactly what the loader accepts.
"""

import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, NewType

import attrs
import cattrs

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SWITCH_WORDS = {
    "true": True,
    "on": True,
    "yes": True,
    "1": True,
    "false": False,
    "off": False,
    "no": False,
    "0": False,
}
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_FLOAT = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
#: What an interpolated value looks like before interpolation (the schema accepts it wherever a scalar goes).
_INTERPOLATION_SCHEMA = {"type": "string", "pattern": r"\$\{"}


@attrs.frozen
class Duration:
    """A span of time written with a unit: `500ms`, `30s`, `1.5m`, `1h`."""

    text: str
    seconds: float

    @classmethod
    def parse(cls, value: object) -> "Duration":
        if isinstance(value, str) and (match := _DURATION.match(value)):
            return cls(value.strip(), float(match.group(1)) * _UNIT_SECONDS[match.group(2)])
        raise ValueError(f"expected a duration with a unit (ms, s, m or h), for example 30s; got {value!r}")

    @property
    def milliseconds(self) -> int:
        return round(self.seconds * 1000)

    def __str__(self) -> str:
        return self.text


#: `auto` or `off` (an extension integration).
Toggle = NewType("Toggle", str)
#: `true` (deprecated without a reason) or the reason.
Deprecation = NewType("Deprecation", str)
#: A list of names, or `*` for all of them.
NameList = NewType("NameList", tuple)
#: Any JSON value, taken as written (the payload of a schedule event).
Json = NewType("Json", object)

DEFAULT_DEPRECATION = "No longer supported"


def _switch(value: object, _: object = None) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _SWITCH_WORDS:
        return _SWITCH_WORDS[value.strip().lower()]
    raise ValueError(f"expected a switch (true/false, on/off, yes/no, 1/0); got {value!r}")


def _integer(value: object, _: object = None) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    raise ValueError(f"expected a whole number; got {value!r}")


def _number(value: object, _: object = None) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT.match(value):
        return float(value)
    raise ValueError(f"expected a number; got {value!r}")


def _string(value: object, _: object = None) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string; got {value!r}")


def _json(value: object, _: object = None) -> object:
    return value


def _is_off(value: object) -> bool:
    return value is None or value is False or (isinstance(value, str) and value.strip().lower() == "off")


def _integer_or_off(value: object, _: object = None) -> int | None:
    return None if _is_off(value) else _integer(value)


def _duration(value: object, _: object = None) -> Duration:
    return Duration.parse(value)


def _duration_or_off(value: object, _: object = None) -> Duration | None:
    return None if _is_off(value) else Duration.parse(value)


def _toggle(value: object, _: object = None) -> str:
    if value is False or value == "off":
        return "off"
    if value == "auto":
        return "auto"
    raise ValueError(f"expected auto or off; got {value!r}")


def _deprecation(value: object, _: object = None) -> str | None:
    if value is True:
        return DEFAULT_DEPRECATION
    if value is False or value is None:
        return None
    return _string(value)


def _name_list(value: object, _: object = None) -> tuple[str, ...]:
    if value == "*":
        return ("*",)
    if isinstance(value, list):
        return tuple(_string(item) for item in value)
    raise ValueError(f"expected a list of names or *; got {value!r}")


def _any_of(*schemas: Mapping[str, Any]) -> dict[str, Any]:
    return {"anyOf": [dict(schema) for schema in schemas]}


_SWITCH_SCHEMA = _any_of(
    {"type": "boolean"},
    {"type": "string", "enum": sorted({*_SWITCH_WORDS, *(w.upper() for w in _SWITCH_WORDS)})},
    {"type": "integer", "enum": [0, 1]},
    _INTERPOLATION_SCHEMA,
)
_INTEGER_SCHEMA = _any_of({"type": "integer"}, {"type": "string", "pattern": _INTEGER.pattern}, _INTERPOLATION_SCHEMA)
_OFF_SCHEMA = _any_of({"const": False}, {"type": "string", "pattern": "^(?i:off)$"}, {"type": "null"})
_DURATION_SCHEMA = {"type": "string", "pattern": _DURATION.pattern}


@attrs.frozen
class ValueType:
    """How one scalar type is structured and described."""

    structure: Callable[[object, object], object]
    schema: Mapping[str, Any]


#: Every scalar type the declarations use, keyed by its annotation.
VALUE_TYPES: Mapping[object, ValueType] = {
    bool: ValueType(_switch, _SWITCH_SCHEMA),
    int: ValueType(_integer, _INTEGER_SCHEMA),
    float: ValueType(
        _number, _any_of({"type": "number"}, {"type": "string", "pattern": _FLOAT.pattern}, _INTERPOLATION_SCHEMA)
    ),
    str: ValueType(_string, {"type": "string"}),
    Duration: ValueType(_duration, _any_of(_DURATION_SCHEMA, _INTERPOLATION_SCHEMA)),
    int | None: ValueType(_integer_or_off, _any_of(_INTEGER_SCHEMA, _OFF_SCHEMA)),
    Duration | None: ValueType(_duration_or_off, _any_of(_DURATION_SCHEMA, _OFF_SCHEMA, _INTERPOLATION_SCHEMA)),
    Toggle: ValueType(_toggle, {"enum": ["auto", "off", False]}),
    Deprecation | None: ValueType(_deprecation, _any_of({"type": "boolean"}, {"type": "string"}, {"type": "null"})),
    NameList: ValueType(_name_list, _any_of({"const": "*"}, {"type": "array", "items": {"type": "string"}})),
    Json: ValueType(_json, {}),
}


def _literal(value: object, annotation: object) -> object:
    allowed = typing.get_args(annotation)
    if value in allowed and not isinstance(value, bool):
        return value
    raise ValueError(f"expected one of {', '.join(map(str, allowed))}; got {value!r}")


def make_converter() -> cattrs.Converter:
    """A cattrs converter that refuses unknown keys and reads scalars by the tables above."""
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    for annotation, value_type in VALUE_TYPES.items():
        converter.register_structure_hook(annotation, value_type.structure)
    converter.register_structure_hook_func(lambda t: literal_values(t) is not None, _literal)
    converter.register_unstructure_hook(Duration, str)
    return converter


def optional_inner(annotation: object) -> object | None:
    """X for `X | None`, else None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0]
    return None


def literal_values(annotation: object) -> tuple[object, ...] | None:
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    return None
