"""The JSON Schema (2020-12) of svc.yaml, generated from the declarations in `_model.py` and `_types.py`.

There is no hand-kept copy: `svc export-config-schema` writes what this module derives, so an editor validating
against it accepts exactly the keys and values the loader accepts (defaults and docs included).
"""

import typing
from collections.abc import Mapping
from typing import Any

import attrs

from ._model import Config, declared_keys
from ._types import VALUE_TYPES, literal_values, make_converter, optional_inner

SCHEMA_ID = "https://svc.dev/schemas/svc.yaml.json"
_CONVERTER = make_converter()


def config_json_schema() -> dict[str, Any]:
    """The whole schema: shared sections at the top level, plus `dev:` (which may hold `debug`) and `prod:`."""
    defs: dict[str, Any] = {}
    sections = _properties(Config, defs)
    debug = sections.pop("debug")
    defs["ProdBlock"] = {
        "type": "object",
        "description": "Settings merged over the shared ones in prod mode.",
        "properties": dict(sections),
        "additionalProperties": False,
    }
    defs["DevBlock"] = {
        "type": "object",
        "description": "Settings merged over the shared ones in dev mode; the only place for debug.",
        "properties": {**sections, "debug": debug},
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "svc.yaml",
        "description": "Configuration of svc. Secrets (DATABASE_URL, DATABASE_REPLICA_URLS, AUTH_JWT_SECRET) "
        "are read from the environment only.",
        "type": ["object", "null"],
        "properties": {
            **sections,
            "dev": {"anyOf": [{"$ref": "#/$defs/DevBlock"}, {"type": "null"}]},
            "prod": {"anyOf": [{"$ref": "#/$defs/ProdBlock"}, {"type": "null"}]},
        },
        "additionalProperties": False,
        "$defs": dict(sorted(defs.items())),
    }


def _properties(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key, field in declared_keys(cls).items():
        schema = _schema(field.type, defs)
        schema["description"] = field.metadata["doc"] + (f" (alias of {field.name})" if key != field.name else "")
        default = _default(field)
        if default is not attrs.NOTHING and (field.type is None or not attrs.has(field.type)):
            schema["default"] = default
        properties[key] = schema
    return properties


def _default(field: "attrs.Attribute[Any]") -> Any:
    default: Any = field.default
    # attrs' stubs declare Factory a function (so that `x: list[int] = Factory(list)` checks); it is the class a
    # factory default is kept in.
    if isinstance(default, attrs.Factory):  # pyright: ignore[reportArgumentType]
        default = default.factory()
    return attrs.NOTHING if default is attrs.NOTHING else _CONVERTER.unstructure(default)


def _schema(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if annotation in VALUE_TYPES:
        return dict(VALUE_TYPES[annotation].schema)
    inner = optional_inner(annotation)
    if inner is not None:
        return {"anyOf": [_schema(inner, defs), {"type": "null"}]}
    values = literal_values(annotation)
    if values is not None:
        return {"enum": list(values)}
    if attrs.has(annotation):
        name = annotation.__name__
        if name not in defs:
            defs[name] = {}  # placeholder against recursion
            required = [f.name for f in attrs.fields(annotation) if f.default is attrs.NOTHING]
            defs[name] = {
                "type": "object",
                "description": (annotation.__doc__ or "").strip().split("\n")[0] or name,
                "properties": _properties(annotation, defs),
                "additionalProperties": False,
                **({"required": required} if required else {}),
            }
        return {"$ref": f"#/$defs/{name}"}
    origin = typing.get_origin(annotation)
    if origin is Mapping:
        _, item = typing.get_args(annotation)
        return {"type": "object", "additionalProperties": _schema(item, defs)}
    if origin is tuple:
        item, _ = typing.get_args(annotation)
        return {"type": "array", "items": _schema(item, defs)}
    raise TypeError(f"no JSON Schema for {annotation!r}")
