"""The parse stage of REST (SPEC "REST API"): a `RestRequest` (the HTTP layer's value) into an `ApiRequest`, before
anything is planned or read.

The path names a target (`_resources.py`); the method an action. Methods a target does not have are 405 with
`Allow`, or 403 PERMISSION_DENIED where the table has the operation but the API withholds it (`omit_operations`, or a
role's grants under `rbac`). OPTIONS answers with the methods of a route that is served, and 404 like its other
methods for one that is not: a search method the resource lacks, a column that is not binary, a global ID of a type
not served here (to the role a request runs as, too). Parameters, headers and body are read in the order a route's
checks are made: its parameters (400 naming the first one that is wrong or unknown), then the headers it reads, then
its body.
"""

from typing import Any
from urllib.parse import parse_qsl, quote, unquote

import attrs

from svc.config import LimitsConfig
from svc.errors import Code, SvcError
from svc.model import Entity, Field, Model, Operation, ReturnKind
from svc.plan import EntityIndex, KeyLookup, decode_global_id, key_value, parse_json
from svc.telemetry import set_route

from . import _parse_bodies as bodies
from . import _parse_headers as headers
from ._api_request import Action, ApiRequest, Changes, Listing, RowKey, Selection
from ._messages import RestRequest
from ._parse_aggregates import AggregateRequests
from ._parse_calls import CallParser
from ._parse_inputs import InputTypes
from ._parse_listing import Listings
from ._parse_query import Parameters
from ._parse_search import parse_global_search, parse_search, search_method
from ._parse_writes import WriteBodies, choice
from ._resources import Kind, RestIndex, Target

_READS = frozenset({Operation.LIST, Operation.CONNECTION})


class RequestParser:
    """Parses REST requests against one snapshot's model, resources and GraphQL input types."""

    def __init__(
        self, model: Model, index: RestIndex, inputs: InputTypes, fields: EntityIndex, limits: LimitsConfig
    ) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.listings = Listings(model, inputs, fields)
        self.aggregates = AggregateRequests(self.listings, inputs)
        self.calls = CallParser(model, inputs, self.listings)
        self.writes = WriteBodies(model, inputs, limits)

    def parse(self, request: RestRequest) -> ApiRequest:
        target = self.index.resolve(request.raw_path)
        set_route(target.template)
        allowed = allowed_methods(target)
        method = "GET" if request.method == "HEAD" else request.method
        base = ApiRequest(Action.DESCRIBE, target, request.method, path=unquote(request.raw_path))
        if method == "OPTIONS":
            self._served(target)
            return attrs.evolve(base, allowed=frozenset(allowed))
        self._served(target)
        if method not in allowed:
            raise _refused(target, request, allowed)
        kind = target.kind
        if kind is Kind.INDEX:
            Parameters.parse(request.query_string).finish()
            return attrs.evolve(base, action=Action.INDEX)
        if kind is Kind.NODE:
            Parameters.parse(request.query_string).finish()
            return attrs.evolve(base, action=Action.NODE, location=self._node(target))
        if kind is Kind.RPC:
            return self._call(base, method, request)
        if kind is Kind.COLLECTION and method == "GET":
            parameters = Parameters.parse(request.query_string)
            listing = self.listings.from_query(base.entity, parameters)
            parameters.finish()
            return self._list(attrs.evolve(base, action=Action.READ_LIST), listing, request)
        if kind is Kind.SEARCH:
            return self._search(base, request)
        if kind is Kind.AGGREGATE:
            return self._aggregate(base, method, request)
        if kind is Kind.SEARCH_METHOD:
            found = search_method(base.entity, target.word or "", target.base)
            body = _options_body(request, "a search takes its members")
            search, listing = parse_search(self.listings, base.entity, found, body)
            return attrs.evolve(base, action=Action.SEARCH, search=search, listing=listing)
        if kind is Kind.GLOBAL_SEARCH:
            if method == "GET":
                parameters = Parameters.parse(request.query_string)
                search = parse_global_search(method, parameters, None, self._searched(target))
            else:
                body = _options_body(request, "a search takes its members")
                search = parse_global_search(method, None, body, self._searched(target))
            return attrs.evolve(base, action=Action.GLOBAL_SEARCH, search=search)
        if kind is Kind.ROW and method == "GET":
            parameters = Parameters.parse(request.query_string)
            key = self._key(target, parameters, versions=True)
            listing = self.listings.from_query(base.entity, parameters, rows=False)
            parameters.finish()
            conditions = headers.preconditions(None, request.header("if-none-match"))
            return attrs.evolve(base, action=Action.READ_ROW, key=key, listing=listing, preconditions=conditions)
        if kind is Kind.COLUMN and method == "GET":
            column = self._binary(target)
            parameters = Parameters.parse(request.query_string)
            key = self._key(target, parameters)
            parameters.finish()
            return attrs.evolve(base, action=Action.READ_COLUMN, key=key, column=column)
        return self._write(base, method, request)

    def patched(self, api: ApiRequest, text: bytes | None, version: str | None) -> ApiRequest | None:
        """A PATCH with a patch document, once its row is read: the update it makes (None: it changes nothing)."""
        return self.writes.patched(api, text, version)

    # --- routes ------------------------------------------------------------------------------------------------

    def _served(self, target: Target) -> None:
        """SvcError NOT_FOUND, as the route's other methods answer, for a route that is not served: a search method
        the resource does not have, a global search with nothing to search, a column that is not binary, a global
        ID of a type not served here."""
        if target.kind is Kind.SEARCH_METHOD:
            assert target.entity is not None
            search_method(target.entity, target.word or "", target.base)
        elif target.kind is Kind.GLOBAL_SEARCH:
            self._searched(target)
        elif target.kind is Kind.COLUMN:
            self._binary(target)
        elif target.kind is Kind.NODE:
            self._node(target)

    def _searched(self, target: Target) -> tuple[tuple[Entity, str], ...]:
        """The resources a global search reads: those of the path's schema, or of every schema."""
        sources = self.index.searchable(target.schema)
        if not sources:
            raise SvcError(Code.NOT_FOUND, "no resource is searchable here: none has a text search index")
        return sources

    def _node(self, target: Target) -> str:
        """SPEC route table: the URL of the row a global ID names; an ID that names no row type served is 404."""
        decoded = decode_global_id(target.word)
        entity = self.model.entity_named(decoded[0]) if decoded else None
        if decoded is None or entity is None or not entity.node or not self.index.serves(entity):
            raise SvcError(Code.NOT_FOUND, f"{target.word!r} is not the global ID of a row served here")
        return f"{self.index.path_of(entity)}/{quote(decoded[1], safe='')}"

    def _binary(self, target: Target) -> Field:
        """The binary column a column path names."""
        assert target.entity is not None
        field = target.entity.rest_field(target.column or "")
        if field is None or field.type.sql_type != "bytea":
            raise SvcError(Code.NOT_FOUND, f"{target.column!r} is not a binary column of {target.entity.table}")
        return field

    def _key(self, target: Target, parameters: Parameters, *, versions: bool = False) -> RowKey:
        """The row a row path names: its primary key (composite: values comma-separated; a global ID for a single
        column), or `?by=<unique key columns>` with the values in that order. A key that cannot be a key of the
        table names no row: 404, as the write of a missing row answers (`KeyLookup.missing`). Where a read names
        `versions` of a row, a temporal table's key without its period names the version valid at `asOf` (else
        now)."""
        entity = target.entity
        assert entity is not None
        raw = target.key or ""
        missing = SvcError(Code.NOT_FOUND, f"no {entity.type_name} has the key {unquote(raw)}")
        by = parameters.take_value("by")
        values = [unquote(part) for part in raw.split(",")]
        if by is None:
            if entity.primary_key is None:
                raise SvcError(Code.NOT_FOUND, f"{entity.table} rows have no key to be addressed by")
            columns = list(entity.primary_key)
        else:
            columns = self._unique_key(entity, by)
        temporal = entity.temporal
        at_instant = (
            versions
            and by is None
            and temporal is not None
            and tuple(columns) == (*temporal.columns, temporal.period)
            and len(values) == len(temporal.columns)
        )
        if at_instant:
            assert temporal is not None
            columns = list(temporal.columns)
        if len(values) != len(columns):
            if len(columns) == 1:
                values = [unquote(raw)]
            else:
                raise SvcError(
                    Code.NOT_FOUND, f"{unquote(raw)!r} is not a key of {entity.table}: it has {len(columns)} columns"
                )
        pairs: list[tuple[str, object]] = []
        for column, value in zip(columns, values, strict=True):
            field = entity.field_of_column(column)
            assert field is not None
            try:
                pairs.append((column, key_value(self.model, entity, field, value, [field.rest_name])))
            except SvcError as error:
                raise missing from error
        return RowKey(KeyLookup(tuple(pairs), (), missing=missing), by=by is not None, versions=at_instant)

    def _unique_key(self, entity: Entity, by: str) -> list[str]:
        named = [entity.rest_field(name.strip()) for name in by.split(",")]
        columns = [field.column for field in named if field is not None]
        if len(columns) != len(named):
            raise SvcError(Code.BAD_USER_INPUT, f"by={by}: unknown column", extensions={"field": "by"})
        if not any(set(lookup.columns) == set(columns) for lookup in entity.lookups):
            keys = "; ".join(
                ",".join(f.rest_name for c in lookup.columns if (f := entity.field_of_column(c)))
                for lookup in entity.lookups
            )
            raise SvcError(
                Code.BAD_USER_INPUT,
                f"by={by} is not a unique key of {entity.table} (one of: {keys})",
                extensions={"field": "by"},
            )
        return columns

    # --- reads -------------------------------------------------------------------------------------------------

    def _search(self, base: ApiRequest, request: RestRequest) -> ApiRequest:
        """`POST /rest/{resource}/search`: the list's options in a JSON body; the query string must be empty."""
        listing = self.listings.from_body(base.entity, _options_body(request, "a search takes its options"))
        return self._list(attrs.evolve(base, action=Action.READ_LIST), listing, request)

    def _aggregate(self, base: ApiRequest, method: str, request: RestRequest) -> ApiRequest:
        """`GET|POST /rest/{resource}/aggregate`: its members in the query string (GET) or a JSON body (POST, whose
        query string must be empty)."""
        api = attrs.evolve(base, action=Action.AGGREGATE)
        if method == "GET":
            parameters = Parameters.parse(request.query_string)
            return attrs.evolve(api, aggregate=self.aggregates.from_query(base.entity, parameters))
        body = _options_body(request, "a POST aggregate takes its members")
        return attrs.evolve(api, aggregate=self.aggregates.from_body(base.entity, body))

    def _list(self, api: ApiRequest, listing: Listing, request: RestRequest) -> ApiRequest:
        """The headers of a list (SPEC "Counts", "Ranges", "Media types"): `Accept`, `Prefer: count=`, and
        `Range: items=A-B`, which becomes the page (cut at `limits.page_size.max`); with another page parameter it
        is 400."""
        list_format = headers.list_format(request.header("accept"))
        preferences = headers.preferences(request.header("prefer"))
        range_ = headers.item_range(request.header("range"))
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
        # A page's `Link` keeps the other parameters (the query string is UTF-8: its parameters were read).
        query = tuple(parse_qsl(request.query_string.decode("utf-8"), keep_blank_values=True))
        return attrs.evolve(
            api, listing=listing, list_format=list_format, preferences=preferences, range=range_, query=query
        )

    def _call(self, base: ApiRequest, method: str, request: RestRequest) -> ApiRequest:
        function = base.target.function
        assert function is not None
        call, listing = self.calls.parse(function, method, request)
        api = attrs.evolve(base, action=Action.CALL, call=call, listing=listing)
        if function.returns.kind is ReturnKind.ROWS and not function.mutation:
            return self._list(api, listing, request)  # a list of the entity's rows
        return api

    # --- writes ------------------------------------------------------------------------------------------------

    def _write(self, base: ApiRequest, method: str, request: RestRequest) -> ApiRequest:
        kind, entity = base.target.kind, base.entity
        preferences = headers.preferences(request.header("prefer"))
        if kind is Kind.COLLECTION:
            if method == "POST":
                parameters = Parameters.parse(request.query_string)
                selection = self.listings.selection_from_query(entity, parameters)
                missing = choice(parameters.take_value("missing"), "missing", ("default", "null"), "default")
                parameters.finish()
                body = self.writes.rows_body(entity, request, csv=True, form=True)
                rows = self.writes.created(entity, body, missing)
                return attrs.evolve(
                    base, action=Action.CREATE, listing=Listing(selection), body=rows, preferences=preferences
                )
            if method == "PUT":
                return attrs.evolve(self._upsert(base, request), preferences=preferences)
            return attrs.evolve(self._by_filter(base, method, request), preferences=preferences)
        if kind is Kind.COLUMN:
            column = self._binary(base.target)
            parameters = Parameters.parse(request.query_string)
            key = self._key(base.target, parameters)
            parameters.finish()
            conditions = headers.preconditions(request.header("if-match"), None)
            values = {column.name: bodies.hex_bytes(request.body)}
            return attrs.evolve(
                base,
                action=Action.WRITE_COLUMN,
                key=key,
                column=column,
                preconditions=conditions,
                body=Changes(values),
                preferences=preferences,
            )
        parameters = Parameters.parse(request.query_string)
        key = self._key(base.target, parameters)
        selection = self.listings.selection_from_query(entity, parameters)
        parameters.finish()
        conditions = headers.preconditions(request.header("if-match"), None)
        addressed = attrs.evolve(
            base, key=key, listing=Listing(selection), preconditions=conditions, preferences=preferences
        )
        if method == "DELETE":
            if request.body:
                raise SvcError(Code.BAD_USER_INPUT, "DELETE takes no body")
            return attrs.evolve(addressed, action=Action.DELETE_ROW)
        if method == "PUT":
            body = self.writes.put_body(entity, key, conditions.must_exist, request)
            return attrs.evolve(addressed, action=Action.PUT_ROW, body=body)
        return attrs.evolve(addressed, action=Action.UPDATE_ROW, body=self.writes.patch_body(entity, key, request))

    def _upsert(self, base: ApiRequest, request: RestRequest) -> ApiRequest:
        """Bulk upsert (SPEC "Writes" 6): `conflict`, `resolution`, `update`, `missing`."""
        entity = base.entity
        parameters = Parameters.parse(request.query_string)
        selection = self.listings.selection_from_query(entity, parameters)
        conflict = parameters.take_value("conflict")
        resolution = choice(parameters.take_value("resolution"), "resolution", ("merge", "ignore"), "merge")
        update = parameters.take_value("update")
        missing = choice(parameters.take_value("missing"), "missing", ("default", "null"), "default")
        parameters.finish()
        body = self.writes.rows_body(entity, request, csv=True, form=False)
        rows = self.writes.upserted(
            entity, body, missing=missing, conflict=conflict, resolution=resolution, update=update
        )
        return attrs.evolve(base, action=Action.UPSERT, listing=Listing(selection), body=rows)

    def _by_filter(self, base: ApiRequest, method: str, request: RestRequest) -> ApiRequest:
        """Collection PATCH/DELETE (SPEC "Writes" 5): only `filter` and `unfiltered`; a body of plain JSON."""
        entity = base.entity
        parameters = Parameters.parse(request.query_string)
        filter_parameter = parameters.take("filter")
        unfiltered = parameters.take_value("unfiltered")
        parameters.finish(("filter", "unfiltered"))
        if unfiltered not in (None, "true", "false"):
            raise SvcError(Code.BAD_USER_INPUT, "unfiltered must be true or false", extensions={"field": "unfiltered"})
        filter_ = self.listings.filter(entity, filter_parameter) if filter_parameter is not None else None
        if filter_ is None and unfiltered != "true":
            raise SvcError(
                Code.FILTER_REQUIRED,
                "a write by filter needs a filter (or unfiltered=true to touch every row)",
                extensions={"field": "filter"},
            )
        api = attrs.evolve(base, listing=Listing(Selection(), filter=filter_))
        if method == "DELETE":
            if request.body:
                raise SvcError(Code.BAD_USER_INPUT, "DELETE takes no body")
            return attrs.evolve(api, action=Action.DELETE_WHERE)
        media = bodies.media_type(request.header("content-type"))
        if media != bodies.JSON and (not media.endswith("+json") or media in bodies.PATCHES):
            # A patch document is of one row (SPEC "Writes" 8: JSON Patch on a collection is 415).
            raise SvcError(
                Code.UNSUPPORTED_MEDIA_TYPE, f"a write by filter takes {bodies.JSON}; got {media or 'no Content-Type'}"
            )
        body = parse_json(request.body)
        if isinstance(body, dict) and not body:
            raise SvcError(Code.BAD_USER_INPUT, "PATCH with no fields to set")
        values = self.writes.coerce(entity, body, entity.names.update_input, "input")
        return attrs.evolve(api, action=Action.UPDATE_WHERE, body=Changes(values))


def allowed_methods(target: Target) -> set[str]:
    """The methods a target has (SPEC route table), from its entity's operations and key."""
    kind = target.kind
    if kind in (Kind.INDEX, Kind.NODE):
        return {"GET"}
    if kind is Kind.RPC:
        assert target.function is not None
        return {"POST"} if target.function.mutation else {"GET", "POST"}
    if kind is Kind.GLOBAL_SEARCH:
        return {"GET", "POST"}
    entity = target.entity
    assert entity is not None
    ops, keyed = entity.operations, entity.primary_key is not None
    upsert = keyed and entity.upsertable and Operation.CREATE in ops and Operation.UPDATE in ops
    if kind is Kind.SEARCH:
        return {"POST"} if ops & _READS else set()
    if kind is Kind.SEARCH_METHOD:  # searches read rows as a list does
        return {"POST"} if Operation.LIST in ops else set()
    if kind is Kind.AGGREGATE:  # SPEC: a resource whose list is not permitted has no aggregates
        return {"GET", "POST"} if ops & _READS else set()
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


def _refused(target: Target, request: RestRequest, allowed: set[str]) -> SvcError:
    """403 for a method the table has but the API withholds; else 405 with `Allow`."""
    method = "GET" if request.method == "HEAD" else request.method
    entity = target.entity
    if entity is not None and entity.withheld:
        whole = attrs.evolve(entity, operations=entity.operations | entity.withheld)
        if method in allowed_methods(attrs.evolve(target, entity=whole)):
            return SvcError(Code.PERMISSION_DENIED, f"{request.method} is not permitted on {unquote(request.raw_path)}")
    methods = ", ".join(sorted({*allowed, "OPTIONS"} | ({"HEAD"} if "GET" in allowed else set())))
    return SvcError(
        Code.METHOD_NOT_ALLOWED,
        f"{request.method} is not allowed on {unquote(request.raw_path)}",
        headers=(("Allow", methods),),
    )


def _options_body(request: RestRequest, what: str) -> Any:
    """The JSON body of a POST that takes its options there (a search, an aggregate; none: `{}`), whose query string
    must be empty."""
    if request.query_string:
        raise SvcError(Code.BAD_USER_INPUT, f"{what} in the body: the query string must be empty")
    media = bodies.media_type(request.header("content-type"))
    if not request.body:
        return {}
    if media != bodies.JSON and not media.endswith("+json"):
        raise bodies.unsupported(media, bodies.JSON)
    body = parse_json(request.body)
    return body if body is not None else {}
