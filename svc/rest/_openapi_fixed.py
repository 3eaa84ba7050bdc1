"""The service's own shapes in the OpenAPI document: the problem document (SPEC "Other fixed shapes"), the body of
`POST /rest/{resource}/search` and a JSON Patch (SPEC "Writes", rule 8)."""

from svc.config import Config

from ._openapi_values import Schema


def _strings() -> Schema:
    """A comma-separated list, or the same as a JSON array."""
    return {"type": ["string", "array"], "items": {"type": "string"}}


def problem() -> Schema:
    """SPEC "Other fixed shapes": `type`, `title`, `status`, `detail`, `instance`, `code`, `fields`, `requestId`, plus
    `limit`/`actual` for limit errors, `validationErrors` for schema-check failures, `databaseDetail`, `hint` for
    custom errors."""
    text: Schema = {"type": "string"}
    return {
        "type": "object",
        "description": "An RFC 9457 problem document. `code` names the problem with the codes the GraphQL API uses"
        " (`PAGE_SIZE_EXCEEDED`, `EMAIL_TAKEN`, ...); custom errors raised by SQL may add members of their own.",
        "properties": {
            "type": {"type": "string", "description": "`about:blank`."},
            "title": text,
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "detail": text,
            "instance": {"type": "string", "description": "The path of the request, as sent."},
            "code": {"type": "string", "description": "What went wrong, as a code shared with the GraphQL API."},
            "requestId": {"type": "string", "description": "The request's id, as logged."},
            "fields": {"type": "array", "items": text, "description": "The input paths or fields at fault."},
            "field": {"type": ["string", "null"], "description": "The input path at fault (length and precision)."},
            "limit": {"type": "integer", "description": "The limit exceeded."},
            "actual": {"type": "integer", "description": "What the request asked for."},
            "retryAfter": {"type": "integer", "description": "Seconds to wait before retrying (429)."},
            "validationErrors": {
                "type": "array",
                "description": "Why a JSON value does not match its column's JSON Schema.",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "A JSON Pointer."}, "message": text},
                },
            },
            "hint": {"type": "string", "description": "The hint of an error raised by SQL."},
            "databaseDetail": {"type": "string", "description": "The DETAIL line of an error raised by SQL."},
        },
        "required": ["code", "requestId"],
    }


def list_members(config: Config) -> dict[str, Schema]:
    """The list parameters as JSON body members (SPEC "Route table": `POST /rest/{resource}/search`, all optional):
    as the query parameters of the same names, lists as comma-separated strings or arrays."""
    page = page_size(config)
    return {
        "filter": {"type": "object", "description": "A filter in the GraphQL `<Type>Filter` shape."},
        "order": _strings(),
        "first": page,
        "after": {"type": "string"},
        "last": page,
        "before": {"type": "string"},
        "offset": {"type": "integer", "minimum": 0},
        "fields": _strings(),
        "include": _strings(),
        "embed": {
            "type": "object",
            "description": "Per included relation (by include path): `filter`, `order`, `first`, `fields`.",
            "additionalProperties": {"type": "object"},
        },
        "inner": _strings(),
        "anti": _strings(),
    }


def search_request(config: Config) -> Schema:
    return {
        "type": "object",
        "description": "The list parameters of `GET` as a JSON body; members as the query parameters of the same"
        " names (lists as comma-separated strings or arrays).",
        "properties": list_members(config),
        "additionalProperties": False,
    }


def page_size(config: Config) -> Schema:
    """`first`/`last`: at most `limits.page_size.max` (SPEC "Limits")."""
    schema: Schema = {"type": "integer", "minimum": 0}
    if config.limits.page_size.max is not None:
        schema["maximum"] = config.limits.page_size.max
    return schema


def json_patch() -> Schema:
    """RFC 6902, against the row as the API shows it (SPEC "Writes", rule 8)."""
    return {
        "type": "array",
        "description": "A JSON Patch (RFC 6902) against the row as the API shows it (`/title`, `/settings/theme`).",
        "items": {
            "type": "object",
            "properties": {
                "op": {"type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]},
                "path": {"type": "string"},
                "from": {"type": "string"},
                "value": {},
            },
            "required": ["op", "path"],
        },
    }
