"""JSON Schemas of json and jsonb columns (SPEC "Extension integrations"), checked before any SQL with the
`jsonschema` library: the draft a schema names with `$schema`, else 2020-12. The service reads the database's CHECK
and never calls pg_jsonschema itself; the database still checks what it is given."""

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

#: Validators kept by schema text (a snapshot's schemas are few and fixed).
_VALIDATORS = 256


@functools.lru_cache(maxsize=_VALIDATORS)
def _validator(schema: str) -> Validator:
    document = json.loads(schema)
    return validator_for(document, default=Draft202012Validator)(document)


def json_schema_errors(schema: str, value: Any) -> list[dict[str, str]]:
    """What `value` breaks of the JSON Schema `schema` (its JSON text), each `{path, message}` with `path` the JSON
    Pointer of the failing part of the value (`""`: the whole value), in path order; empty when it matches."""
    failures = [
        {"path": "".join(f"/{_escaped(part)}" for part in error.absolute_path), "message": error.message}
        for error in _validator(schema).iter_errors(value)
    ]
    return sorted(failures, key=lambda failure: (failure["path"], failure["message"]))


def json_schema_problem(schema: str) -> str | None:
    """Why `schema` (a CHECK's literal) is not a JSON Schema the service can check with; None when it is."""
    try:
        document = json.loads(schema)
        validator_for(document, default=Draft202012Validator).check_schema(document)
    except Exception as exc:  # not JSON, or not a schema of its draft: either way unusable
        return str(exc).splitlines()[0]
    return None


def _escaped(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


# --- as OpenAPI 3.1 documents them -------------------------------------------------------------------------------

#: `$schema` values of the drafts before 2019-09, whose keywords 2020-12 (OpenAPI 3.1's dialect) spells otherwise.
_OLDER_DRAFTS = ("draft-03", "draft-04", "draft-06", "draft-07")
#: Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_SCHEMA_VALUED = ("additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")


def openapi_json_schema(schema: str) -> tuple[Any, bool]:
    """A CHECK's JSON Schema as OpenAPI 3.1 documents it (JSON Schema 2020-12): an older draft's rewritten (tuple
    `items` to `prefixItems`, `dependencies` split, numeric exclusive bounds, keywords beside a `$ref` dropped,
    `$schema` removed); and whether it refers to itself (a `$ref` into the same document), so that it must be a
    component of its own whose references are rebased on it (`rebased`)."""
    document = json.loads(schema)
    older = isinstance(document, dict) and any(draft in str(document.get("$schema", "")) for draft in _OLDER_DRAFTS)
    rewritten = _to_2020_12(document, older=older)
    if isinstance(rewritten, dict):
        rewritten.pop("$schema", None)
    return rewritten, _refers_to_itself(rewritten)


def rebased(document: Any, base: str) -> Any:
    """`document` with its references into itself (`#`, `#/...`) made references into `base` (a component's)."""
    if isinstance(document, list):
        return [rebased(item, base) for item in document]
    if not isinstance(document, dict):
        return document
    return {
        key: (
            base + value[1:]
            if key == "$ref" and isinstance(value, str) and value.startswith("#")
            else rebased(value, base)
        )
        for key, value in document.items()
    }


def _refers_to_itself(document: Any) -> bool:
    if isinstance(document, list):
        return any(_refers_to_itself(item) for item in document)
    if not isinstance(document, dict):
        return False
    reference = document.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        return True
    return any(_refers_to_itself(value) for value in document.values())


def _to_2020_12(schema: Any, *, older: bool) -> Any:
    """`schema` with its subschemas, in 2020-12's keywords (rewritten only when `older`)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = dict(schema)
    if older:
        if "$ref" in out:
            return {"$ref": out["$ref"]}  # before 2019-09 a reference's siblings are ignored
        items = out.get("items")
        if isinstance(items, list):
            out["prefixItems"] = items
            del out["items"]
            if "additionalItems" in out:
                out["items"] = out.pop("additionalItems")
        dependencies = out.pop("dependencies", None)
        if isinstance(dependencies, dict):
            required = {k: v for k, v in dependencies.items() if isinstance(v, list)}
            schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
            if required:
                out["dependentRequired"] = required
            if schemas:
                out["dependentSchemas"] = schemas
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(exclusive), bool) and out.pop(exclusive) and bound in out:
                out[exclusive] = out.pop(bound)
    for key in _SCHEMA_VALUED:
        if key in out:
            out[key] = _to_2020_12(out[key], older=older)
    if "items" in out:
        out["items"] = (
            [_to_2020_12(item, older=older) for item in out["items"]]
            if isinstance(out["items"], list)
            else _to_2020_12(out["items"], older=older)
        )
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_to_2020_12(item, older=older) for item in out[key]]
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _to_2020_12(value, older=older) for name, value in out[key].items()}
    return out
