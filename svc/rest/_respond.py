"""The response stage of REST (SPEC "REST API"): the answer written around the database's JSON texts, which are
never decoded (only a version for `ETag`, a created row's key for `Location`, a count, and the bytes of a binary
column are read out of their small JSON).

- Lists (SPEC "Counts", "Ranges", "Media types"): the rows in JSON, NDJSON or CSV (a header row first); `Prefer:
  count=` as `X-Total-Count` (`X-Total-Count-Estimate: true` when estimated); `Range` as 206 with `Content-Range`
  (416 past the end or inverted); RFC 8288 `Link` (next, prev) keeping the other parameters, or for a search or a
  function called by POST `X-Next-Cursor`/`X-Previous-Cursor`; `Accept-Ranges: items` always.
- A row: `ETag` is its version; `If-None-Match` naming it answers 304 without a body; 404 when there is none.
- Writes (SPEC "Writes"): 201 with `Location` for a created row, 200 otherwise; `ETag` of a row written;
  `Prefer: return=minimal` answers 204 and `Prefer: previous` `{row, previous}` (`Preference-Applied` says so); a
  write by filter `X-Affected-Count`.
- OPTIONS: 204 with `Allow`, and where writes are accepted `Accept-Post`/`Accept-Patch`.
"""

import decimal
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from svc.config import Config
from svc.errors import Code, SvcError
from svc.model import ReturnKind
from svc.plan import RowsFormat

from ._api_request import Action, ApiRequest
from ._messages import RestResponse, json_response
from ._planned import (
    AFFECTED,
    END,
    ESTIMATE,
    HAS_NEXT,
    HAS_PREVIOUS,
    KEYS,
    PREVIOUS,
    ROW,
    ROW_COUNT,
    ROWS,
    START,
    TOTAL,
    VALUE,
    Planned,
    PlannedRead,
    read_version,
)
from ._resources import Kind, RestIndex

Answer = Mapping[str, bytes | None]

ACCEPT_POST = "application/json, text/csv, multipart/form-data"
ACCEPT_PATCH = "application/json, application/merge-patch+json, application/json-patch+json, multipart/form-data"
_PAGE_PARAMETERS = ("first", "last", "after", "before", "offset")


class Responder:
    """Writes REST responses for one snapshot (its resources and configuration)."""

    def __init__(self, index: RestIndex, config: Config) -> None:
        self.index = index
        self.config = config

    def respond(self, api: ApiRequest, planned: Planned | None, answer: Answer) -> RestResponse:
        """The response to a request, from its plan and the pipeline's answer (texts by key)."""
        action = api.action
        if action is Action.INDEX:
            return self._index(api)
        if action is Action.NODE:
            assert api.location is not None
            return RestResponse(303, headers=(("Location", api.location),))
        if action is Action.DESCRIBE:
            return RestResponse(204, headers=_allow(api))
        if isinstance(planned, PlannedRead) and planned.page_size is not None:
            return self._list(api, planned, answer)
        if action is Action.READ_ROW:
            return self._row(api, answer)
        if action is Action.READ_COLUMN:
            return self._column(api, answer)
        if action in (Action.AGGREGATE, Action.SEARCH, Action.GLOBAL_SEARCH):  # one text: an object or a list
            (text,) = answer.values()
            return json_response(200, text if text is not None else b"null")
        if action is Action.CALL:
            assert api.call is not None
            if api.call.function.returns.kind is ReturnKind.VOID:
                return RestResponse(204)
            text = answer.get(VALUE)
            return json_response(200, text if text is not None else b"null")
        return self._written(api, answer)

    def unchanged(self, api: ApiRequest, answer: Answer) -> RestResponse:
        """A patch that leaves the row as it was (only `test` operations, values it already has): no write, so no
        new version; the row as it is."""
        row, etag = _row(api, answer)
        if api.preferences.return_ == "minimal":
            return RestResponse(204, headers=(*etag, *_applied(["return=minimal"])))
        return json_response(200, row, etag)

    # --- the index ---------------------------------------------------------------------------------------------

    def _index(self, api: ApiRequest) -> RestResponse:
        """SPEC route table, `GET /rest`: resources (name, schema, GraphQL type, path), functions, the document."""
        schema = api.target.schema
        resources = [
            {"name": r.name, "schema": r.entity.schema, "type": r.entity.type_name, "path": r.path}
            for r in self.index.resources
            if schema is None or r.entity.schema == schema
        ]
        functions = [
            {"name": f.name, "schema": f.function.schema, "path": f.path, "mutation": f.function.mutation}
            for f in self.index.functions
            if schema is None or f.function.schema == schema
        ]
        openapi = self.config.openapi
        body = {
            "resources": resources,
            "functions": functions,
            "openapi": openapi.path if openapi.spec or openapi.ui else None,
        }
        return json_response(200, json.dumps(body, ensure_ascii=False).encode())

    # --- lists -------------------------------------------------------------------------------------------------

    def _list(self, api: ApiRequest, planned: PlannedRead, members: Answer) -> RestResponse:
        """Rows of a list (or of a function returning rows): the body, and the headers of counts, ranges and
        pages."""
        headers: list[tuple[str, str]] = [("Accept-Ranges", "items")]
        applied: list[str] = []
        total = None
        if api.preferences.count:
            threshold = self.config.limits.count_threshold or 0
            total = _number(members.get(TOTAL)) if TOTAL in members else _number(members.get(ESTIMATE))
            estimated = TOTAL not in members or (
                ESTIMATE in members and (_number(members.get(ESTIMATE)) or 0) > threshold
            )
            headers.append(("X-Total-Count", str(total)))
            if estimated:
                headers.append(("X-Total-Count-Estimate", "true"))
            applied.append(f"count={api.preferences.count}")
        rows_on_page = _number(members.get(ROW_COUNT)) or 0
        has_next = members.get(HAS_NEXT) == b"true"
        has_previous = members.get(HAS_PREVIOUS) == b"true"
        status = 200
        range_ = api.range
        if range_ is not None:
            length = "*" if total is None else str(total)
            if range_.inverted or (rows_on_page == 0 and (range_.first > 0 or has_previous)):
                reason = "ends before it starts" if range_.inverted else "starts past the end of the list"
                raise SvcError(
                    Code.RANGE_NOT_SATISFIABLE,
                    f"the range items={range_.first}-{'' if range_.last is None else range_.last} {reason}",
                    headers=(("Content-Range", f"items */{length}"),),
                )
            if rows_on_page:
                headers.append(("Content-Range", f"items {range_.first}-{range_.first + rows_on_page - 1}/{length}"))
            else:
                headers.append(("Content-Range", f"items */{length}"))
            status = 200 if range_.first == 0 and not has_next else 206
        following = members.get(END) if has_next else None
        preceding = members.get(START) if has_previous else None
        assert planned.page_size is not None
        headers += _pages(api, planned.page_size, following, preceding)
        headers += _applied(applied)
        body = members.get(ROWS) or b""
        if api.list_format is RowsFormat.CSV:
            body = RowsFormat.CSV.header(planned.csv_header) + body
        return RestResponse(status, body, api.list_format.content_type, tuple(headers))

    # --- rows --------------------------------------------------------------------------------------------------

    def _row(self, api: ApiRequest, answer: Answer) -> RestResponse:
        """One row by key; `ETag` is its version; `If-None-Match` naming it answers 304 without a body."""
        row, etag = _row(api, answer)
        wanted = api.preconditions.none_match
        version = read_version(answer)
        if wanted is not None and version is not None and ("*" in wanted or version in wanted):
            return RestResponse(304, headers=etag)
        return json_response(200, row, etag)

    def _column(self, api: ApiRequest, answer: Answer) -> RestResponse:
        """The bytes of a binary column, with a media type sniffed from the first bytes (SPEC route table)."""
        row, etag = _row(api, answer)
        field = api.column
        assert field is not None
        value = json.loads(row)[field.rest_name]
        if value is None:
            raise SvcError(Code.NOT_FOUND, f"{field.rest_name} of this {api.entity.type_name} is null")
        data = bytes.fromhex(value[2:])
        return RestResponse(200, data, sniff(data), (("X-Content-Type-Options", "nosniff"), *etag))

    # --- writes ------------------------------------------------------------------------------------------------

    def _written(self, api: ApiRequest, answer: Answer) -> RestResponse:
        action = api.action
        row = answer.get(ROW)
        if row is None and api.key is not None:
            raise api.key.missing  # the row the URL names is not there (a delete or update that found none)
        headers: list[tuple[str, str]] = []
        count = answer.get(AFFECTED)
        if count is not None:
            headers.append(("X-Affected-Count", count.decode()))
        keys = answer.get(KEYS)
        if keys is not None and keys != b"[]":
            headers.append(("Location", _location(api, keys)))
        version = read_version(answer)
        if version is not None:
            headers.append(("ETag", etag(version)))
        if api.preferences.return_ == "minimal":
            return RestResponse(204, headers=(*headers, *_applied(["return=minimal"])))
        body = row if row is not None else b"null"
        if PREVIOUS in answer:
            body = b'{"row":' + body + b',"previous":' + (answer[PREVIOUS] or b"null") + b"}"
            headers += _applied(["previous"] if api.preferences.previous else [])
        return json_response(201 if action is Action.CREATE else 200, body, headers)


def etag(version: str) -> str:
    return f'"{version}"'


def _row(api: ApiRequest, answer: Answer) -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """The row read by key (404 when there is none) and its `ETag`."""
    row = answer.get(ROW)
    if row is None:
        assert api.key is not None
        raise api.key.missing
    version = read_version(answer)
    return row, ((("ETag", etag(version)),) if version is not None else ())


def _location(api: ApiRequest, keys: bytes) -> str:
    """The created row's URL, under the path the client used (SPEC "Several schemas"): its key, the first (and
    only) of the keys the write answered."""
    values: dict[str, Any] = json.loads(keys, parse_float=decimal.Decimal)[0]
    primary = api.entity.primary_key or ()
    return f"{api.target.base}/" + ",".join(quote(_text(values[column]), safe="") for column in primary)


def _allow(api: ApiRequest) -> tuple[tuple[str, str], ...]:
    allowed = api.allowed
    methods = {*allowed, "OPTIONS"} | ({"HEAD"} if "GET" in allowed else set())
    headers = [("Allow", ", ".join(sorted(methods)))]
    if api.target.kind is Kind.COLLECTION and "POST" in allowed:
        headers.append(("Accept-Post", ACCEPT_POST))
    if api.target.kind is Kind.ROW and "PATCH" in allowed:
        headers.append(("Accept-Patch", ACCEPT_PATCH))
    return tuple(headers)


def _pages(api: ApiRequest, size: int, following: bytes | None, preceding: bytes | None) -> list[tuple[str, str]]:
    """RFC 8288 `Link` (next, prev) keeping the other parameters; a search, or a function called by POST, answers
    `X-Next-Cursor` and `X-Previous-Cursor` instead."""
    after = following.decode() if following else None
    before = preceding.decode() if preceding else None
    if api.method == "POST":
        return [
            *((("X-Next-Cursor", after),) if after else ()),
            *((("X-Previous-Cursor", before),) if before else ()),
        ]
    links: list[str] = []
    if after:
        links.append(_link(api, {"first": str(size), "after": after}, "next"))
    if before:
        links.append(_link(api, {"last": str(size), "before": before}, "prev"))
    return [("Link", ", ".join(links))] if links else []


def _link(api: ApiRequest, members: Mapping[str, str], rel: str) -> str:
    """One `Link` entry: the same request with its page parameters replaced (SPEC "Counts": keeping the other
    parameters)."""
    kept = [(n, v) for n, v in api.query if n not in _PAGE_PARAMETERS]
    query = urlencode([*kept, *members.items()], quote_via=lambda text, *_: quote(text, safe=",:"))
    return f'<{api.path}?{query}>; rel="{rel}"'


def _applied(values: Sequence[str]) -> list[tuple[str, str]]:
    return [("Preference-Applied", ", ".join(values))] if values else []


def _number(text: bytes | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


#: Leading bytes of common formats (SPEC route table: a media type sniffed from the first bytes).
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"BM", "image/bmp"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
)


def sniff(data: bytes) -> str:
    for signature, media in _SIGNATURES:
        if data.startswith(signature):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return "application/octet-stream"
