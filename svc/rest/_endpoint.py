"""A REST request answered (SPEC "REST API"): the path names a target, the method an operation; parameters, headers
and body become a plan; the plan runs through the one pipeline; the response is written around the database's
JSON texts (rows are never decoded, except where a client's JSON Patch needs the row it patches).

Methods a target does not have are 405 with `Allow`; OPTIONS answers 204 with `Allow` and, where writes are
accepted, `Accept-Post`/`Accept-Patch`; HEAD answers like GET (the HTTP layer drops the body).
"""

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

import attrs
import psycopg
from graphql import GraphQLSchema

from svc.config import Config
from svc.errors import Code, SvcError
from svc.model import Entity, Model, Operation
from svc.pipeline import Mutations, Pipeline, StatementCache, answer_error
from svc.plan import EntityIndex, KeyLookup, RowsFormat, decode_global_id, key_value

from . import _headers as headers_
from ._functions import FunctionCalls
from ._inputs import InputTypes
from ._listing import Listing, Listings
from ._messages import RestRequest, RestResponse, json_response
from ._query import Parameters
from ._reads import END, ESTIMATE, HAS_NEXT, HAS_PREVIOUS, ROW_COUNT, ROWS, START, TOTAL, Count, ReadRun
from ._resources import Kind, RestIndex, Target
from ._writes import WriteRequests

_READS = frozenset({Operation.LIST, Operation.CONNECTION})
ACCEPT_POST = "application/json, text/csv, multipart/form-data"
ACCEPT_PATCH = "application/json, application/merge-patch+json, application/json-patch+json, multipart/form-data"


class RestEndpoint:
    """Answers REST requests on one snapshot (its model, GraphQL input types and caches)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        model: Model,
        config: Config,
        statements: StatementCache,
        mutations: Mutations,
    ) -> None:
        self.model = model
        self.config = config
        self.limits = config.limits
        self.index = RestIndex(model, config.database.schemas)
        self.fields = EntityIndex(model)
        self.inputs = InputTypes(schema, model)
        self.listings = Listings(model, self.inputs, self.fields)
        self.statements = statements
        self.mutations = mutations
        self.functions = FunctionCalls(self)
        self.writes = WriteRequests(self)

    # --- dispatch ----------------------------------------------------------------------------------------------

    async def handle(self, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        target = self.index.resolve(request.raw_path)
        allowed = self.allowed(target)
        method = "GET" if request.method == "HEAD" else request.method
        if method == "OPTIONS":
            return RestResponse(204, headers=self._options(target, allowed))
        if target.kind in (Kind.AGGREGATE, Kind.SEARCH_METHOD, Kind.GLOBAL_SEARCH):
            raise self._not_served(target)
        if method not in allowed:
            if target.entity is not None and target.entity.withheld:
                whole = attrs.evolve(target.entity, operations=target.entity.operations | target.entity.withheld)
                if method in self.allowed(attrs.evolve(target, entity=whole)):
                    raise SvcError(
                        Code.PERMISSION_DENIED,
                        f"{request.method} is not permitted on {unquote(request.raw_path)}",
                    )
            methods = ", ".join(sorted({*allowed, "OPTIONS"} | ({"HEAD"} if "GET" in allowed else set())))
            raise SvcError(
                Code.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on {unquote(request.raw_path)}",
                headers=(("Allow", methods),),
            )
        try:
            return await self._dispatch(target, method, request, pipeline)
        except psycopg.Error as exc:
            raise answer_error(exc, self.config.errors, request.request_id) from exc

    async def _dispatch(self, target: Target, method: str, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        kind = target.kind
        if kind is Kind.INDEX:
            return self._index(target, request)
        if kind is Kind.NODE:
            return self._node(target, request)
        if kind is Kind.RPC:
            assert target.function is not None
            return await self.functions.call(target, target.function, method, request, pipeline)
        entity = target.entity
        assert entity is not None
        if kind is Kind.COLLECTION and method == "GET":
            parameters = Parameters.parse(request.query_string)
            listing = self.listings.from_query(entity, parameters)
            parameters.finish()
            return await self.rows(target, entity, listing, request, pipeline)
        if kind is Kind.SEARCH:
            return await self._search(target, entity, request, pipeline)
        if kind is Kind.ROW and method == "GET":
            return await self._row(target, entity, request, pipeline)
        if kind is Kind.COLUMN and method == "GET":
            return await self.writes.read_column(target, entity, request, pipeline)
        return await self.writes.handle(target, entity, method, request, pipeline)

    def allowed(self, target: Target) -> set[str]:
        """The methods a target has (SPEC route table), from its entity's operations and key."""
        kind = target.kind
        if kind in (Kind.INDEX, Kind.NODE):
            return {"GET"}
        if kind is Kind.RPC:
            assert target.function is not None
            return {"POST"} if target.function.mutation else {"GET", "POST"}
        if kind in (Kind.AGGREGATE, Kind.SEARCH_METHOD, Kind.GLOBAL_SEARCH):
            return {"GET", "POST"}
        entity = target.entity
        assert entity is not None
        ops, keyed = entity.operations, entity.primary_key is not None
        upsert = keyed and entity.upsertable and Operation.CREATE in ops and Operation.UPDATE in ops
        if kind is Kind.SEARCH:
            return {"POST"} if ops & _READS else set()
        if kind is Kind.COLLECTION:
            methods = {"GET"} if ops & _READS else set()
            methods |= {"POST"} if Operation.CREATE in ops else set()
            methods |= {"PATCH"} if Operation.UPDATE in ops and keyed else set()
            methods |= {"DELETE"} if Operation.DELETE in ops and keyed else set()
            return methods | ({"PUT"} if upsert else set())
        if not keyed:
            return set()
        if kind is Kind.ROW:
            methods = {"GET"} if Operation.READ in ops else set()
            methods |= {"PATCH"} if Operation.UPDATE in ops else set()
            methods |= {"DELETE"} if Operation.DELETE in ops else set()
            return methods | ({"PUT"} if upsert else set())
        assert kind is Kind.COLUMN
        methods = {"GET"} if Operation.READ in ops else set()
        return methods | ({"PUT"} if Operation.UPDATE in ops else set())

    def _options(self, target: Target, allowed: set[str]) -> tuple[tuple[str, str], ...]:
        methods = {*allowed, "OPTIONS"} | ({"HEAD"} if "GET" in allowed else set())
        answer = [("Allow", ", ".join(sorted(methods)))]
        if target.kind is Kind.COLLECTION and "POST" in allowed:
            answer.append(("Accept-Post", ACCEPT_POST))
        if target.kind is Kind.ROW and "PATCH" in allowed:
            answer.append(("Accept-Patch", ACCEPT_PATCH))
        return tuple(answer)

    def _not_served(self, target: Target) -> SvcError:
        if target.kind is Kind.AGGREGATE:
            return SvcError(Code.NOT_FOUND, f"{target.base}/aggregate: aggregates are not served yet")
        if target.kind is Kind.SEARCH_METHOD:
            return SvcError(
                Code.NOT_FOUND,
                f"{target.word!r} is not a search method of {target.base}; it supports none (no search index)",
                extensions={"supported": []},
            )
        return SvcError(Code.NOT_FOUND, "no resource is searchable: none has a search index")

    # --- the index and global IDs ------------------------------------------------------------------------------

    def _index(self, target: Target, request: RestRequest) -> RestResponse:
        """SPEC route table, `GET /rest`: resources (name, schema, GraphQL type, path), functions, the document."""
        Parameters.parse(request.query_string).finish()
        schema = target.schema
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
        openapi = self.config.openapi.path if self.config.openapi.spec or self.config.openapi.ui else None
        body = {"resources": resources, "functions": functions, "openapi": openapi}
        return json_response(200, json.dumps(body, ensure_ascii=False).encode())

    def _node(self, target: Target, request: RestRequest) -> RestResponse:
        """SPEC route table: a global ID answers 303 to its row's URL; an ID that names no row type is 404."""
        Parameters.parse(request.query_string).finish()
        decoded = decode_global_id(target.word)
        entity = self.model.entity_named(decoded[0]) if decoded else None
        if decoded is None or entity is None or not entity.node or not self.index.serves(entity):
            raise SvcError(Code.NOT_FOUND, f"{target.word!r} is not the global ID of a row served here")
        location = f"{self.index.path_of(entity)}/{quote(decoded[1], safe='')}"
        return RestResponse(303, headers=(("Location", location),))

    # --- lists -------------------------------------------------------------------------------------------------

    async def rows(
        self,
        target: Target,
        entity: Entity,
        listing: Listing,
        request: RestRequest,
        pipeline: Pipeline,
        *,
        search: bool = False,
        source: Any = None,
        run: ReadRun | None = None,
    ) -> RestResponse:
        """Rows of a list (or of a function returning rows): the body, and the headers of counts, ranges and
        pages (SPEC "Counts", "Ranges", "Media types")."""
        format_ = headers_.list_format(request.header("accept"))
        prefer = headers_.Prefer.parse(request.header("prefer"))
        range_ = headers_.Range.parse(request.header("range"))
        if range_ is not None:
            if any(v is not None for v in (listing.first, listing.last, listing.after, listing.before, listing.offset)):
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    "a Range header cannot be combined with first, last, after, before or offset",
                    extensions={"field": "Range"},
                )
            maximum = self.limits.page_size.max
            size = range_.size
            if maximum is not None:
                size = maximum if size is None else min(size, maximum)
            listing = attrs.evolve(listing, first=size, offset=range_.first)
        count = Count(prefer.count, self.limits.count_threshold) if prefer.count else None
        run = run or ReadRun(self.model, self.fields, self.limits)
        planned = run.rows(entity, listing, format=format_, count=count, source=source)
        tags = {"api": "rest", "method": request.method, "resource": target.base}
        texts = await pipeline.read(
            self.statements, planned.plan, planned.params.named(), tags=tags, session=request.session
        )
        read = planned.plan.roots[0].read
        assert read is not None
        members = dict(zip((o.key for o in read.page_outputs), texts, strict=True))
        answer: list[tuple[str, str]] = [("Accept-Ranges", "items")]
        applied = []
        total = None
        if prefer.count:
            total = _number(members.get(TOTAL)) if TOTAL in members else _number(members.get(ESTIMATE))
            estimated = TOTAL not in members or (
                ESTIMATE in members and (_number(members.get(ESTIMATE)) or 0) > (self.limits.count_threshold or 0)
            )
            answer.append(("X-Total-Count", str(total)))
            if estimated:
                answer.append(("X-Total-Count-Estimate", "true"))
            applied.append(f"count={prefer.count}")
        rows_on_page = _number(members.get(ROW_COUNT)) or 0
        has_next = members.get(HAS_NEXT) == b"true"
        has_previous = members.get(HAS_PREVIOUS) == b"true"
        status = 200
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
                answer.append(("Content-Range", f"items {range_.first}-{range_.first + rows_on_page - 1}/{length}"))
            else:
                answer.append(("Content-Range", f"items */{length}"))
            status = 200 if range_.first == 0 and not has_next else 206
        cursors = {"next": members.get(END), "prev": members.get(START)}
        answer += self._page_links(
            request, size=planned.size, cursors=cursors, has_next=has_next, has_previous=has_previous, search=search
        )
        answer += headers_.preference_applied(applied)
        body = members.get(ROWS) or b""
        if format_ is RowsFormat.CSV:
            body = _csv_header([o.key for o in read.shape.outputs]) + body
        return RestResponse(status, body, headers_.CONTENT_TYPES[format_], tuple(answer))

    def _page_links(
        self,
        request: RestRequest,
        *,
        size: int,
        cursors: Mapping[str, bytes | None],
        has_next: bool,
        has_previous: bool,
        search: bool,
    ) -> list[tuple[str, str]]:
        """RFC 8288 `Link` (next, prev) keeping the other parameters; a search answers `X-Next-Cursor` and
        `X-Previous-Cursor` instead."""
        following = cursors["next"].decode() if has_next and cursors["next"] else None
        preceding = cursors["prev"].decode() if has_previous and cursors["prev"] else None
        if search:
            return [
                *((("X-Next-Cursor", following),) if following else ()),
                *((("X-Previous-Cursor", preceding),) if preceding else ()),
            ]
        pairs = parse_qsl(request.query_string.decode("utf-8"), keep_blank_values=True)
        base = unquote(request.raw_path)
        links = []
        if following:
            links.append(headers_.page_link(base, pairs, {"first": str(size), "after": following}, "next"))
        if preceding:
            links.append(headers_.page_link(base, pairs, {"last": str(size), "before": preceding}, "prev"))
        return [("Link", ", ".join(links))] if links else []

    async def _search(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        """`POST /rest/{resource}/search`: the list's options in a JSON body; the query string must be empty."""
        if request.query_string:
            raise SvcError(
                Code.BAD_USER_INPUT, "a search takes its options in the body: the query string must be empty"
            )
        body = self.writes.json_body(request, allow_empty=True)
        listing = self.listings.from_body(entity, body if body is not None else {})
        return await self.rows(target, entity, listing, request, pipeline, search=True)

    # --- one row -----------------------------------------------------------------------------------------------

    async def _row(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        """One row by key; `ETag` is its version; `If-None-Match` naming it answers 304 without a body."""
        parameters = Parameters.parse(request.query_string)
        lookup = self.lookup(target, entity, parameters)
        listing = self.listings.from_query(entity, parameters, rows=False)
        parameters.finish()
        row, version = await self.read_row(entity, lookup, listing, request, pipeline)
        if row is None:
            raise SvcError(Code.NOT_FOUND, f"no {entity.type_name} has the key {unquote(target.key or '')}")
        answer = [("ETag", headers_.etag(version))] if version is not None else []
        wanted = headers_.matching_versions(request.header("if-none-match"))
        if wanted is not None and version is not None and ("*" in wanted or version in wanted):
            return RestResponse(304, headers=tuple(answer))
        return json_response(200, row, answer)

    async def read_row(
        self, entity: Entity, lookup: KeyLookup, listing: Listing, request: RestRequest, pipeline: Pipeline
    ) -> tuple[bytes | None, str | None]:
        """A row's JSON text (None: no such row) and its version."""
        planned = ReadRun(self.model, self.fields, self.limits).row(entity, lookup, listing.selection)
        tags = {"api": "rest", "method": request.method, "resource": entity.table}
        texts = await pipeline.read(
            self.statements, planned.plan, planned.params.named(), tags=tags, session=request.session
        )
        version = None
        if len(texts) > 1 and texts[1] is not None:
            version = json.loads(texts[1])["v"]
        return texts[0], version

    def lookup(self, target: Target, entity: Entity, parameters: Parameters) -> KeyLookup:
        """The row a row path names: its primary key (composite: values comma-separated; a global ID for a single
        column), or `?by=<unique key columns>` with the values in that order."""
        raw = target.key or ""
        by = parameters.take_value("by")
        values = [unquote(part) for part in raw.split(",")]
        if by is None:
            if entity.primary_key is None:
                raise SvcError(Code.NOT_FOUND, f"{entity.table} rows have no key to be addressed by")
            columns = list(entity.primary_key)
        else:
            named = [entity.rest_field(name.strip()) for name in by.split(",")]
            if any(field is None for field in named):
                raise SvcError(Code.BAD_USER_INPUT, f"by={by}: unknown column", extensions={"field": "by"})
            columns = [field.column for field in named if field is not None]
            if not any(set(lookup.columns) == set(columns) for lookup in entity.lookups):
                keys = "; ".join(
                    ",".join(f.rest_name for c in lookup.columns if (f := entity.field_of_column(c)))
                    for lookup in entity.lookups
                )
                raise SvcError(
                    Code.BAD_USER_INPUT, f"by={by} is not a unique key of {entity.table} (one of: {keys})",
                    extensions={"field": "by"},
                )  # fmt: skip
        if len(values) != len(columns):
            if len(columns) == 1:
                values = [unquote(raw)]
            else:
                raise SvcError(
                    Code.NOT_FOUND, f"{unquote(raw)!r} is not a key of {entity.table}: it has {len(columns)} columns"
                )
        pairs = []
        for column, value in zip(columns, values, strict=True):
            field = entity.field_of_column(column)
            assert field is not None
            try:
                pairs.append((column, key_value(self.model, entity, field, value, [field.rest_name])))
            except SvcError as error:
                raise SvcError(Code.NOT_FOUND, f"no {entity.type_name} has the key {unquote(raw)}") from error
        return KeyLookup(tuple(pairs), ("key",))


def _number(text: bytes | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def _csv_header(keys: list[str]) -> bytes:
    cells = []
    for key in keys:
        quoted = any(c in key for c in '",\r\n') or key != key.strip() or not key
        cells.append('"' + key.replace('"', '""') + '"' if quoted else key)
    return (",".join(cells) + "\r\n").encode()
