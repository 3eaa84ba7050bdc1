"""The reusable parts of the OpenAPI document: query and header parameters, response headers and error responses.

SPEC "REST API" (list query parameters, counts, ranges, media types, writes) and "Errors" -> REST: every error is an
RFC 9457 problem document (`application/problem+json`); "Limits": with rate limits on, "the OpenAPI document gives
each operation a 429 response and each success the `RateLimit-*` headers". Only the parts an operation refers to
are written, in the order they are defined here, so the same model gives the same document.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from svc.config import Config

from ._openapi_fixed import page_size
from ._openapi_schemas import Schemas
from ._openapi_values import Schema

_STRING: Schema = {"type": "string"}
_COUNT: Schema = {"type": "integer", "minimum": 0}
#: Standard Webhooks signatures, space-separated: `v1,` and a base64 HMAC-SHA256 each.
_SIGNATURES = r"^v1,[A-Za-z0-9+/]+={0,2}(?: v1,[A-Za-z0-9+/]+={0,2})*$"


def _query(name: str, description: str, schema: Schema, **extra: Any) -> Schema:
    return {"name": name, "in": "query", "description": description, "schema": schema, **extra}


def _header(name: str, description: str, schema: Schema | None = None, **extra: Any) -> Schema:
    return {"name": name, "in": "header", "description": description, "schema": schema or _STRING, **extra}


def _parameters(config: Config) -> dict[str, Schema]:
    """Every reusable parameter, by component name (SPEC "List query parameters", "Counts", "Ranges", "Writes"; and
    "Change events and schedules": the signature headers of webhook requests)."""
    page = page_size(config)
    default_page = config.limits.page_size.default
    default = f" (default {default_page})" if default_page is not None else ""
    free_form: Schema = {"type": "object", "additionalProperties": True}
    return {
        "filter": _query(
            "filter",
            "Conditions, ANDed: `filter[<column>][<operator>]=<value>` (operators eq neq gt gte lt lte in nin like"
            " ilike startsWith endsWith isNull regex iregex ... and the GraphQL filter operators of the column's"
            " type), through relations `filter[<relation>][<column>][eq]=<value>`, to-many"
            " `filter[<relation>][some|every|none][...]` and `filter[<relation>][count][<operator>]=<n>`, groups"
            " `filter[or][0][...]`, `filter[and][0][...]`, `filter[not][...]`; or `filter=<JSON object>` in the"
            " GraphQL `<Type>Filter` shape. With `include`, `filter[<relation>][...]` keeps only the matching"
            " embedded rows of a to-many relation.",
            free_form,
            style="deepObject",
            explode=True,
        ),
        "order": _query(
            "order",
            "Comma-separated: `column`, `-column`, `column:desc`, with `:nullsfirst`/`:nullslast`; a to-one"
            " relation's column (`author.name`), a relation's row count (`postsCount`), `natural`, `primary_key`."
            " `order[<relation>]` orders an included to-many relation.",
            _STRING,
        ),
        "first": _query(
            "first", f"Rows to read forward{default}; `first[<relation>]` pages an included relation.", page
        ),  # fmt: skip
        "after": _query("after", "Read the rows after this cursor (a row's `_cursor`).", _STRING),
        "last": _query("last", "Rows to read backward (the page keeps its order).", page),
        "before": _query("before", "Read the rows before this cursor.", _STRING),
        "offset": _query("offset", "Rows to skip; `offset[<relation>]` in an included relation.", _COUNT),
        "fields": _query(
            "fields",
            "Comma-separated members to return (REST or column names, `rowVersion`, computed fields without required"
            " arguments); default every column. `fields[<relation>]` picks an included relation's members.",
            _STRING,
        ),
        "include": _query(
            "include",
            "Comma-separated relations to embed, dotted for deeper levels (`author,comments.author`); at most 10"
            " relations and 3 levels.",
            _STRING,
        ),
        "cursors": _query("cursors", "`true`: each row gets `_cursor`.", {"type": "boolean"}),
        "window": _query(
            "window",
            "Window values of each row, over every row the list selects in its order (earlier pages included),"
            " under `_window`; ranks compare the `order` values only.",
            {"type": "array", "items": {"type": "string", "enum": ["rowNumber", "rank", "denseRank", "percentRank"]}},
            style="form",
            explode=False,
        ),
        "partition": _query(
            "partition",
            "Comma-separated columns (`column:<unit>` truncates a date or timestamp) the window values restart at.",
            _STRING,
        ),
        "running": _query(
            "running", "Comma-separated numeric columns: `_window.runningSum.<column>` up to each row.", _STRING
        ),
        "asOf": _query(
            "asOf",
            "An instant (ISO 8601 timestamp or date): a table with a temporal key is read as of it, keeping the"
            " versions whose period contains it (without it, a list has every version). `asOf[<relation>]` reads"
            " an included temporal relation at its own instant; else included relations are read at the instant of"
            " the rows they hang from, and a to-one relation across a period foreign key at now.",
            {"type": "string"},
        ),
        "inner": _query("inner", "Comma-separated included relations a row must have a row in.", _STRING),
        "anti": _query("anti", "Comma-separated included relations a row must have no row in.", _STRING),
        "path": _query(
            "path",
            "`path[<column>]=<JSON path>`: a JSON column answers the first item the path selects.",
            free_form,
            style="deepObject",
            explode=True,
        ),
        "args": _query(
            "args",
            "`args[<field>][<argument>]=<value>`: the arguments of computed fields in `fields`.",
            free_form,
            style="deepObject",
            explode=True,
        ),
        "by": _query(
            "by",
            "Comma-separated columns of another unique key: the key in the path holds their values, in this order.",
            _STRING,
        ),
        "unfiltered": _query("unfiltered", "`true`: write every row when no filter is given.", {"type": "boolean"}),
        "missing": _query(
            "missing",
            "For columns some rows of an array omit: their default (`default`) or NULL (`null`).",
            {"type": "string", "enum": ["default", "null"], "default": "default"},
        ),
        "conflict": _query(
            "conflict", "Comma-separated columns of the unique key rows conflict on (default the primary key).", _STRING
        ),
        "resolution": _query(
            "resolution",
            "What a conflicting row does: `merge` (update it) or `ignore` (leave it).",
            {"type": "string", "enum": ["merge", "ignore"], "default": "merge"},
        ),
        "update": _query(
            "update",
            "With `resolution=merge`: comma-separated columns to update (default those the rows set, but the key).",
            _STRING,
        ),
        "PreferCount": _header(
            "Prefer",
            "`count=exact` (`X-Total-Count`), `count=planned` (the planner's estimate) or `count=estimated` (exact"
            f" below {config.limits.count_threshold or 'limits.count_threshold'} rows, else the estimate).",
        ),
        "PreferReturn": _header("Prefer", "`return=minimal`: answer 204 without a body."),
        "PreferPrevious": _header(
            "Prefer",
            "`return=minimal`: answer 204 without a body; `previous`: answer `{row, previous}` with the row as it was"
            " (previous null for an inserted row).",
        ),
        "Range": _header(
            "Range",
            "`items=A-B` or `items=A-`: rows A to B counting from 0 (206); not with first, last, after, before or"
            " offset.",
            {"type": "string", "examples": ["items=0-24"]},
        ),
        "IfMatch": _header(
            "If-Match", "The row's `ETag` (or `*`): write only when the row still has that version (else 412)."
        ),
        "IfNoneMatch": _header("If-None-Match", "The row's `ETag`: 304 without a body when it has not changed."),
        # The headers the service signs each webhook request with (Standard Webhooks), for the receiver to check.
        "WebhookId": _header(
            "webhook-id",
            "The event's id (the payload's `id`): the same in every attempt to deliver it, so a receiver can drop"
            " a repeat.",
            required=True,
        ),
        "WebhookTimestamp": _header(
            "webhook-timestamp",
            "When this attempt was signed, in seconds since the Unix epoch; a receiver should refuse one far from"
            " its own clock, so that a captured request cannot be replayed later.",
            {"type": "integer", "minimum": 0},
            required=True,
        ),
        "WebhookSignature": _header(
            "webhook-signature",
            "`v1,<signature>`: the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the"
            " target's secret (the bytes whose base64 follows `whsec_`). While a target's secrets rotate there is"
            " one per secret, space-separated; a receiver accepts the request when one of them matches.",
            {"type": "string", "pattern": _SIGNATURES},
            required=True,
        ),
    }


_HEADERS: dict[str, Schema] = {
    "Link": {
        "description": 'RFC 8288 links keeping the other parameters: `rel="next"` when more rows follow,'
        ' `rel="prev"` when a cursor or offset was given.',
        "schema": _STRING,
    },
    "Accept-Ranges": {"description": "Lists can be read in ranges of items.", "schema": {"const": "items"}},
    "Content-Range": {
        "description": "`items A-B/N` (N is `*` unless a count was asked); `items */N` with 416.",
        "schema": _STRING,
    },
    "X-Total-Count": {"description": "The number of rows matching (with `Prefer: count=...`).", "schema": _COUNT},
    "X-Total-Count-Estimate": {"description": "`true` when `X-Total-Count` is an estimate.", "schema": _STRING},
    "Preference-Applied": {"description": "The `Prefer` preferences honoured.", "schema": _STRING},
    "Location": {"description": "The path of the created row.", "schema": _STRING},
    "ETag": {"description": 'The row\'s version, quoted (`"<rowVersion>"`).', "schema": _STRING},
    "X-Affected-Count": {"description": "The number of rows written.", "schema": _COUNT},
    "X-WAL-Position": {
        "description": "The primary's WAL position after the write committed (`16/B374D848`): sent back as"
        " `X-Min-WAL-Position`, a later read is served by a read replica only once it has replayed the write.",
        "schema": _STRING,
    },  # fmt: skip
    "X-Next-Cursor": {
        "description": "The cursor to continue after this page, when more rows follow.",
        "schema": _STRING,
    },  # fmt: skip
    "X-Previous-Cursor": {"description": "The cursor to read the page before this one.", "schema": _STRING},
    "WWW-Authenticate": {"description": "The RFC 6750 bearer challenge.", "schema": _STRING},
    "Retry-After": {"description": "Seconds until a request would be accepted.", "schema": _COUNT},
    "RateLimit-Limit": {"description": "Requests the client's bucket holds (the burst).", "schema": _COUNT},
    "RateLimit-Remaining": {"description": "Requests left in the client's bucket.", "schema": _COUNT},
    "RateLimit-Reset": {"description": "Seconds until the client's bucket is full again.", "schema": _COUNT},
}
_RATE_LIMIT_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")

#: Error responses by status: component name and when (SPEC "Errors" -> REST).
_ERRORS: dict[str, tuple[str, str]] = {
    "400": ("BadRequest", "An unknown or malformed parameter, operator, field or body member, or a limit exceeded."),
    "401": ("Unauthorized", "A missing or invalid token."),
    "403": ("Forbidden", "The operation is not permitted (grants, row security, `omit_operations`)."),
    "404": ("NotFound", "No such row."),
    "406": ("NotAcceptable", "None of the `Accept`ed media types can be answered."),
    "409": ("Conflict", "A unique key is taken (`<COLUMNS>_TAKEN`, `<COLUMNS>_CONFLICT`) or a foreign key fails."),
    "412": ("PreconditionFailed", "`If-Match` does not match the row's version (`STALE_VERSION`)."),
    "413": (
        "ContentTooLarge",
        "The body or the rows written exceed `limits.request_body_bytes` or"
        " `limits.bulk_rows` (`BULK_LIMIT_EXCEEDED`).",
    ),  # fmt: skip
    "415": ("UnsupportedMediaType", "The request's media type is not accepted here."),
    "416": ("RangeNotSatisfiable", "The range starts past the end or ends before it starts."),
    "422": ("UnprocessableContent", "A value fails validation (NOT NULL, CHECK, `<FIELD>_REQUIRED`, `PATCH_FAILED`)."),
    "429": ("TooManyRequests", "The client's rate limit is used up (`RATE_LIMITED`)."),
    "503": (
        "ServiceUnavailable",
        "The database is unavailable, the schema changed, or the statement timed out;"
        " `DATABASE_UNAVAILABLE` and `SCHEMA_CHANGED` may be retried.",
    ),  # fmt: skip
    "4XX": ("FunctionError", "An error the function raised (`PTxxx` answers status xxx with the author's message)."),
}
_ERROR_HEADERS = {"401": ("WWW-Authenticate",), "416": ("Content-Range",), "429": ("Retry-After", *_RATE_LIMIT_HEADERS)}


class Shared:
    """The reusable components referred to so far; `ref_*` methods answer a reference and remember the part."""

    def __init__(self, config: Config, schemas: Schemas) -> None:
        self.rate_limited = config.limits.rate_limit.enabled
        self._schemas = schemas
        self._parameters = _parameters(config)
        self._used: dict[str, set[str]] = {"parameters": set(), "headers": set(), "responses": set()}

    def parameter(self, name: str) -> Schema:
        self._used["parameters"].add(name)
        return {"$ref": f"#/components/parameters/{name}"}

    def parameters(self, names: Iterable[str]) -> list[Schema]:
        return [self.parameter(name) for name in names]

    def header(self, name: str) -> Schema:
        self._used["headers"].add(name)
        return {"$ref": f"#/components/headers/{name}"}

    def headers(self, names: Iterable[str]) -> dict[str, Schema]:
        return {name: self.header(name) for name in names}

    def success(
        self,
        description: str,
        content: Mapping[str, Schema | None] | None = None,
        headers: Iterable[str] = (),
        *,
        written: bool = False,
    ) -> Schema:
        """A 2xx response; with rate limits on it carries the `RateLimit-*` headers too, and `X-WAL-Position` when it
        answers a write (`written`)."""
        names = [
            *headers,
            *(("X-WAL-Position",) if written else ()),
            *(_RATE_LIMIT_HEADERS if self.rate_limited else ()),
        ]
        response: Schema = {"description": description}
        if names:
            response["headers"] = self.headers(names)
        if content is not None:
            response["content"] = media_types(content)
        return response

    def error(self, status: str) -> Schema:
        self._used["responses"].add(status)
        return {"$ref": f"#/components/responses/{_ERRORS[status][0]}"}

    def not_modified(self) -> Schema:
        return {"description": "The row has not changed since the `ETag` given.", "headers": self.headers(["ETag"])}

    def finish(self, responses: dict[str, Schema], statuses: Iterable[str]) -> dict[str, Schema]:
        """The successes given, then the error statuses given and those of every operation, ordered by status."""
        every = {"400", "401", "403", "503", *statuses, *(("429",) if self.rate_limited else ())}
        for status in every:
            responses[status] = self.error(status)
        return dict(sorted(responses.items(), key=lambda item: item[0].replace("X", "9")))

    def components(self) -> dict[str, Any]:
        """The parameters, headers and responses referred to, in definition order."""
        responses = {}
        for status, (name, description) in _ERRORS.items():
            if status in self._used["responses"]:
                headers = _ERROR_HEADERS.get(status, ())
                response: Schema = {"description": description}
                if headers:
                    response["headers"] = self.headers(headers)
                response["content"] = {"application/problem+json": {"schema": self._schemas.problem()}}
                responses[name] = response
        return {
            "parameters": _used(self._parameters, self._used["parameters"]),
            "headers": _used(_HEADERS, self._used["headers"]),
            "responses": responses,
        }


def media_types(content: Mapping[str, Schema | None]) -> dict[str, Schema]:
    """`content` of a body or response: each media type with its schema (none for bytes of any kind)."""
    return {media: {} if schema is None else {"schema": schema} for media, schema in content.items()}


def _used(defined: Mapping[str, Schema], used: set[str]) -> dict[str, Schema]:
    return {name: part for name, part in defined.items() if name in used}
