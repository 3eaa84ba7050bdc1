"""REST writes (SPEC "REST API" -> writes): bodies into write plans shared with GraphQL (`svc/plan`'s
`WriteInputs`), run by the one mutation runner in one transaction, answered with the rows read back by key.

1. The URL owns the key: a key in the body must match it (a global ID of the same row is fine); PATCH with nothing
   to set is 400. `?by=` addresses a row by another unique key, whose columns may then change (the primary key's
   may not).
2. `ETag` is the row version; `If-Match` on PATCH/PUT/DELETE by key is checked against it (412 STALE_VERSION); PUT
   with `If-Match` needs the row to exist (404); `If-Match: *` only needs it to exist.
3. `Prefer: return=minimal` answers 204; `Prefer: previous` on PATCH/PUT answers `{row, previous}`.
4. Collection PATCH/DELETE take only `filter` (and `unfiltered=true`); they touch at most `limits.bulk_rows` rows
   and answer them, in key order, with `X-Affected-Count`; their body is plain JSON (a patch document is 415).
5. Bulk upsert `PUT /rest/{resource}`: `conflict`, `resolution=merge|ignore`, `update`, `missing=default|null`.
6. JSON Patch and merge patch read the row as the API shows it, patch it, and write the columns that changed, with
   the version read as the expected version (two statements; a change in between is 412); a patch that changes
   nothing writes nothing.
"""

import decimal
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import attrs

from svc.errors import Code, SvcError
from svc.model import Entity, Field
from svc.pipeline import MutationFailed, Payload, Pipeline, answer_error
from svc.plan import (
    Arguments,
    BulkWrite,
    Cardinality,
    ColumnRef,
    DeleteWrite,
    Filter,
    JsonRows,
    KeyIn,
    KeyLookup,
    KeyPosition,
    MutationPlan,
    MutationStep,
    OrderItem,
    Param,
    Params,
    Read,
    ReadPlan,
    RootField,
    Shape,
    Slots,
    WriteInputs,
    check_written_rows,
    count_rows,
    key_value,
    parse_json,
    render_path,
    row_version,
    table,
    without_versions,
)

from . import _bodies as bodies
from . import _headers as headers_
from ._listing import Listing, Selection
from ._messages import RestRequest, RestResponse, json_response
from ._query import Parameters
from ._reads import ReadRun, _Place
from ._resources import Kind, Target

if TYPE_CHECKING:
    from ._endpoint import RestEndpoint


@attrs.frozen
class _Addressed:
    """A write of one row by its URL: which row, the members to answer with, and the request's preconditions."""

    lookup: KeyLookup
    by: bool  # addressed by another unique key (`?by=`)
    selection: Selection
    prefer: headers_.Prefer
    expected: str | None  # `If-Match: "<version>"`
    must_exist: bool  # any `If-Match`


@attrs.frozen
class _Answer:
    """What a write step's payload read is to give back."""

    many: bool
    previous: bool = False
    #: Rows in primary-key order (a write by filter) rather than in the order written.
    key_order: bool = False


class WriteRequests:
    """The writes of one REST endpoint."""

    def __init__(self, endpoint: "RestEndpoint") -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.limits = endpoint.limits
        self.inputs = WriteInputs(endpoint.model)
        self.types = endpoint.inputs
        self._renamed = {f.name for e in endpoint.model.entities for f in e.fields if f.rest_name != f.name}
        self._kept = {f.name for e in endpoint.model.entities for f in e.fields if f.rest_name == f.name}

    async def handle(
        self, target: Target, entity: Entity, method: str, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        try:
            if target.kind is Kind.COLLECTION:
                if method == "POST":
                    return await self._create(target, entity, request, pipeline)
                if method == "PUT":
                    return await self._upsert_many(target, entity, request, pipeline)
                return await self._by_filter(target, entity, method, request, pipeline)
            if target.kind is Kind.COLUMN:
                return await self._write_column(target, entity, request, pipeline)
            if method == "DELETE":
                return await self._delete(target, entity, request, pipeline)
            if method == "PUT":
                return await self._put(target, entity, request, pipeline)
            return await self._patch(target, entity, request, pipeline)
        except SvcError as error:
            if error.code is Code.NOT_FOUND and error.extensions.get("fields") == ["key"]:
                raise self._missing(entity, target) from error  # the row the URL names (the runner's "key")
            raise self._rest_paths(error) from error

    def _missing(self, entity: Entity, target: Target) -> SvcError:
        return SvcError(Code.NOT_FOUND, f"no {entity.type_name} has the key {unquote(target.key or '')}")

    # --- bodies ------------------------------------------------------------------------------------------------

    def json_body(self, request: RestRequest, *, allow_empty: bool = False) -> Any:
        media = bodies.media_type(request.header("content-type"))
        if not request.body and allow_empty:
            return None
        if media != bodies.JSON and not media.endswith("+json"):
            raise bodies.unsupported(media, bodies.JSON)
        return parse_json(request.body)

    def _rows_body(
        self, entity: Entity, request: RestRequest, *, csv: bool, form: bool, input_type: str | None = None
    ) -> Any:
        """A create or upsert body (or, with `input_type`, an update's): JSON (object or array), CSV rows, or one
        row as form fields, typed by the input type they fill."""
        media = bodies.media_type(request.header("content-type"))
        type_ = self.types.get(input_type or entity.names.create_input)
        if type_ is None:
            done = "changed" if input_type else "created"
            raise SvcError(Code.PERMISSION_DENIED, f"{entity.table} rows cannot be {done}")
        if media == bodies.JSON or (media.endswith("+json") and media not in bodies.PATCHES):
            return parse_json(request.body)
        if media == bodies.CSV and csv:
            return bodies.csv_rows(request.body, entity, type_, self.types.schema)
        if media == bodies.MULTIPART and form:
            content_type = request.header("content-type") or ""
            return bodies.form_fields(request.body, content_type, entity, type_, self.types.schema)
        accepted = ", ".join([bodies.JSON, *([bodies.CSV] if csv else []), *([bodies.MULTIPART] if form else [])])
        raise bodies.unsupported(media, accepted)

    def _coerce(self, entity: Entity, value: Any, type_name: str, root: str | tuple[str, int]) -> Any:
        """A body object validated against an input type: paths named like GraphQL's (`input.title`,
        `inputs[1].email`), with REST names."""
        prefix = root if isinstance(root, str) else f"{root[0]}[{root[1]}]"
        if not isinstance(value, dict):
            raise SvcError(Code.BAD_USER_INPUT, f"{prefix} must be a JSON object", extensions={"field": prefix})
        return self.types.coerce(value, type_name, lambda path: self._rest_path(render_path([prefix, *path])))

    # --- creates -----------------------------------------------------------------------------------------------

    async def _create(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        """POST: an object gives 201 with `Location` and `ETag`; an array creates its rows in one statement."""
        parameters = Parameters.parse(request.query_string)
        selection = self.endpoint.listings.selection_from_query(entity, parameters)
        missing = _choice(parameters.take_value("missing"), "missing", ("default", "null"), "default")
        parameters.finish()
        body = self._rows_body(entity, request, csv=True, form=True)
        prefer = headers_.Prefer.parse(request.header("prefer"))
        if isinstance(body, list):
            rows = self._many(entity, body, missing)
            writes = tuple(self.inputs.create(entity, row, ("inputs", i)) for i, row in enumerate(rows))
            check_written_rows(self.limits, sum(count_rows(w) for w in writes))
            payload = await self._run(entity, writes, _Answer(many=True), selection, request=request, pipeline=pipeline)
            return self._answer(201, payload, prefer, entity)
        value = self._coerce(entity, body, entity.names.create_input, "input")
        write = self.inputs.create(entity, value, ("input",))
        check_written_rows(self.limits, count_rows(write))
        payload = await self._run(entity, write, _Answer(many=False), selection, request=request, pipeline=pipeline)
        location = self._location(target, entity, payload)
        return self._answer(201, payload, prefer, entity, location=location)

    def _many(self, entity: Entity, body: list[Any], missing: str) -> list[Any]:
        limit = self.limits.bulk_rows
        if limit is not None and len(body) > limit:
            raise SvcError(
                Code.BULK_LIMIT_EXCEEDED,
                f"the body holds {len(body)} rows, more than {limit}",
                extensions={"limit": limit, "actual": len(body)},
            )
        rows = [self._coerce(entity, row, entity.names.create_input, ("inputs", i)) for i, row in enumerate(body)]
        if missing == "null":
            columns = [name for row in rows for name in row if entity.field(name) is not None]
            every = dict.fromkeys(columns)
            rows = [{**{name: None for name in every if name not in row}, **row} for row in rows]
        return rows

    async def _upsert_many(
        self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        """Bulk upsert of an array (SPEC "Writes" 6): conflict key, merge or ignore, the columns to update."""
        parameters = Parameters.parse(request.query_string)
        selection = self.endpoint.listings.selection_from_query(entity, parameters)
        conflict = parameters.take_value("conflict")
        resolution = _choice(parameters.take_value("resolution"), "resolution", ("merge", "ignore"), "merge")
        update = parameters.take_value("update")
        missing = _choice(parameters.take_value("missing"), "missing", ("default", "null"), "default")
        parameters.finish()
        body = self._rows_body(entity, request, csv=True, form=False)
        if not isinstance(body, list):
            raise SvcError(Code.BAD_USER_INPUT, "a bulk upsert takes a JSON array (or CSV rows)")
        rows = self._many(entity, body, missing)
        columns = self._field_names(entity, conflict, "conflict") if conflict else None
        if columns is None:
            assert entity.primary_key is not None
            columns = [self._field_of(entity, c).name for c in entity.primary_key]
        elif not any({entity.field(n).column for n in columns} == set(lk.columns) for lk in entity.lookups):  # type: ignore[union-attr]
            keys = "; ".join(",".join(self._field_of(entity, c).rest_name for c in lk.columns) for lk in entity.lookups)
            raise SvcError(
                Code.BAD_USER_INPUT,
                f"conflict={conflict} is not a unique key of {entity.table} (one of: {keys})",
                extensions={"field": "conflict"},
            )
        on_conflict: dict[str, Any] = {"columns": columns}
        if resolution == "ignore":
            on_conflict["action"] = "NOTHING"
        elif update is not None:
            on_conflict["update"] = self._field_names(entity, update, "update")
        writes = tuple(
            self.inputs.create(entity, row, ("inputs", i), on_conflict=on_conflict, conflict_path=("conflict",))
            for i, row in enumerate(rows)
        )
        check_written_rows(self.limits, sum(count_rows(w) for w in writes))
        payload = await self._run(entity, writes, _Answer(many=True), selection, request=request, pipeline=pipeline)
        return self._answer(200, payload, headers_.Prefer.parse(request.header("prefer")), entity)

    # --- one row by key ----------------------------------------------------------------------------------------

    def _addressed(self, target: Target, entity: Entity, request: RestRequest) -> _Addressed:
        """The row a PATCH, PUT or DELETE names (its key, or `?by=`), its answer's members, `Prefer`, `If-Match`."""
        parameters = Parameters.parse(request.query_string)
        lookup, by = self._lookup(target, entity, parameters)
        selection = self.endpoint.listings.selection_from_query(entity, parameters)
        parameters.finish()
        expected, must_exist = self._if_match(request)
        return _Addressed(lookup, by, selection, headers_.Prefer.parse(request.header("prefer")), expected, must_exist)

    async def _patch(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        addressed = self._addressed(target, entity, request)
        lookup, by, selection, prefer = addressed.lookup, addressed.by, addressed.selection, addressed.prefer
        expected, must_exist = addressed.expected, addressed.must_exist
        media = bodies.media_type(request.header("content-type"))
        patched = media in bodies.PATCHES
        if patched:
            value, expected = await self._patched(
                target, entity, lookup=lookup, media=media, expected=expected, request=request, pipeline=pipeline
            )
            must_exist = True
        elif media == bodies.MULTIPART:
            value = self._rows_body(entity, request, csv=False, form=True, input_type=entity.names.update_input)
        elif media == bodies.JSON or media.endswith("+json"):
            value = parse_json(request.body)
        else:
            raise bodies.unsupported(
                media, f"{bodies.JSON}, {bodies.MERGE_PATCH}, {bodies.JSON_PATCH}, {bodies.MULTIPART}"
            )
        rest, _ = self._owned_key(entity, lookup, _object(value, "input"), by=by)
        if not rest:
            if patched:  # the patch changes nothing: the row as it is, nothing written
                return await self._unchanged(
                    target, entity, lookup, selection, prefer=prefer, request=request, pipeline=pipeline
                )
            raise SvcError(Code.BAD_USER_INPUT, "PATCH with no fields to set")
        coerced = self._coerce(entity, rest, entity.names.update_input, "input")
        write = self.inputs.update(
            entity, lookup, coerced, ("input",), expected_version=expected, previous=prefer.previous,
            must_exist=must_exist,
        )  # fmt: skip
        payload = await self._run(
            entity, write, _Answer(False, prefer.previous), selection, request=request, pipeline=pipeline
        )
        return self._answer(200, payload, prefer, entity, missing=target)

    async def _unchanged(
        self,
        target: Target,
        entity: Entity,
        lookup: KeyLookup,
        selection: Selection,
        *,
        prefer: headers_.Prefer,
        request: RestRequest,
        pipeline: Pipeline,
    ) -> RestResponse:
        """A patch that leaves the row as it was (only `test` operations, values it already has): no write, so
        no new version; the row as it is."""
        row, version = await self.endpoint.read_row(entity, lookup, Listing(selection), request, pipeline)
        if row is None:
            raise self._missing(entity, target)
        answer = [("ETag", headers_.etag(version))] if version is not None else []
        if prefer.return_ == "minimal":
            return RestResponse(204, headers=(*answer, *headers_.preference_applied(["return=minimal"])))
        return json_response(200, row, answer)

    async def _put(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        """Insert or update the row the URL names (200 either way); with `If-Match`, an update of an existing row."""
        addressed = self._addressed(target, entity, request)
        lookup, by, selection, prefer = addressed.lookup, addressed.by, addressed.selection, addressed.prefer
        body = self._rows_body(entity, request, csv=False, form=True)
        if not isinstance(body, dict):
            raise SvcError(Code.BAD_USER_INPUT, "PUT takes one row: a JSON object")
        rest, owned = self._owned_key(entity, lookup, body, by=by, fill=True)
        expected = addressed.expected
        if addressed.must_exist:
            coerced = self._coerce(entity, rest, entity.names.update_input, "input") | owned
            write = self.inputs.update(
                entity, lookup, coerced, ("input",), expected_version=expected, previous=prefer.previous,
                must_exist=True,
            )  # fmt: skip
        else:
            coerced = self._coerce(entity, rest, entity.names.create_input, "input") | owned
            key_names = list(owned)
            on_conflict: dict[str, Any] = {"columns": key_names}
            if not [name for name in coerced if name not in key_names and entity.field(name) is not None]:
                on_conflict["update"] = []
            write = self.inputs.create(entity, coerced, ("input",), on_conflict=on_conflict, previous=prefer.previous)
        payload = await self._run(
            entity, write, _Answer(False, prefer.previous), selection, request=request, pipeline=pipeline
        )
        return self._answer(200, payload, prefer, entity, missing=target)

    async def _delete(self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        addressed = self._addressed(target, entity, request)
        if request.body:
            raise SvcError(Code.BAD_USER_INPUT, "DELETE takes no body")
        assert entity.primary_key is not None
        write = DeleteWrite(
            table(entity), entity.primary_key, addressed.lookup, addressed.expected, entity.version_column
        )
        selection, prefer = addressed.selection, addressed.prefer
        payload = await self._run(
            entity, write, _Answer(False), selection, request=request, pipeline=pipeline, deleting=True
        )
        return self._answer(200, payload, prefer, entity, missing=target)

    async def _by_filter(
        self, target: Target, entity: Entity, method: str, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        """Collection PATCH/DELETE (SPEC "Writes" 5): only `filter` and `unfiltered`; at most `bulk_rows` rows."""
        parameters = Parameters.parse(request.query_string)
        filter_parameter = parameters.take("filter")
        unfiltered = parameters.take_value("unfiltered")
        parameters.finish(("filter", "unfiltered"))
        if unfiltered not in (None, "true", "false"):
            raise SvcError(Code.BAD_USER_INPUT, "unfiltered must be true or false", extensions={"field": "unfiltered"})
        value = self.endpoint.listings.filter_from_query(entity, filter_parameter, Selection())
        filter_params = Params()
        arguments = Arguments(self.model, self.endpoint.fields, self.limits, filter_params)
        condition = arguments.filter(entity, value, ["filter"])
        if condition is None and unfiltered != "true":
            raise SvcError(
                Code.FILTER_REQUIRED,
                "a write by filter needs a filter (or unfiltered=true to touch every row)",
                extensions={"field": "filter"},
            )
        values = None
        if method == "PATCH":
            media = bodies.media_type(request.header("content-type"))
            if media != bodies.JSON and (not media.endswith("+json") or media in bodies.PATCHES):
                # A patch document is of one row (SPEC "Writes" 8: JSON Patch on a collection is 415).
                raise SvcError(
                    Code.UNSUPPORTED_MEDIA_TYPE,
                    f"a write by filter takes {bodies.JSON}; got {media or 'no Content-Type'}",
                )
            body = parse_json(request.body)
            if isinstance(body, dict) and not body:
                raise SvcError(Code.BAD_USER_INPUT, "PATCH with no fields to set")
            coerced = self._coerce(entity, body, entity.names.update_input, "input")
            values = self.inputs.bulk_values(entity, coerced, ("input",))
        elif request.body:
            raise SvcError(Code.BAD_USER_INPUT, "DELETE takes no body")
        write = BulkWrite(
            table(entity), entity.primary_key, condition, values, self.limits.bulk_rows,
            filter_values=tuple(filter_params.values),
        )  # fmt: skip
        payload = await self._run(
            entity,
            write,
            _Answer(True, key_order=True),
            Selection(),
            request=request,
            pipeline=pipeline,
            deleting=method == "DELETE",
        )
        prefer = headers_.Prefer.parse(request.header("prefer"))
        affected = [("X-Affected-Count", str(len(payload.outcome.rows)))]
        return self._answer(200, payload, prefer, entity, extra=affected)

    # --- binary columns ----------------------------------------------------------------------------------------

    def _binary_field(self, target: Target, entity: Entity) -> Field:
        field = entity.rest_field(target.column or "")
        if field is None or field.type.sql_type != "bytea":
            raise SvcError(Code.NOT_FOUND, f"{target.column!r} is not a binary column of {entity.table}")
        return field

    async def read_column(
        self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        """The bytes of a binary column, with a media type sniffed from the first bytes (SPEC route table)."""
        field = self._binary_field(target, entity)
        parameters = Parameters.parse(request.query_string)
        lookup = self.endpoint.lookup(target, entity, parameters)
        parameters.finish()
        listing = Listing(Selection(fields=(field.name,)))
        row, version = await self.endpoint.read_row(entity, lookup, listing, request, pipeline)
        if row is None:
            raise SvcError(Code.NOT_FOUND, f"no {entity.type_name} has the key {unquote(target.key or '')}")
        value = json.loads(row)[field.rest_name]
        if value is None:
            raise SvcError(Code.NOT_FOUND, f"{field.rest_name} of this {entity.type_name} is null")
        data = bytes.fromhex(value[2:])
        answer = [("X-Content-Type-Options", "nosniff")]
        if version is not None:
            answer.append(("ETag", headers_.etag(version)))
        return RestResponse(200, data, bodies.sniff(data), tuple(answer))

    async def _write_column(
        self, target: Target, entity: Entity, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        """PUT of a binary column: the body, of any media type, replaces its bytes (`If-Match` applies)."""
        field = self._binary_field(target, entity)
        parameters = Parameters.parse(request.query_string)
        lookup, _ = self._lookup(target, entity, parameters)
        parameters.finish()
        expected, _ = self._if_match(request)
        value = {field.name: bodies.hex_bytes(request.body)}
        write = self.inputs.update(entity, lookup, value, ("input",), expected_version=expected, must_exist=True)
        selection = Selection()
        payload = await self._run(entity, write, _Answer(False), selection, request=request, pipeline=pipeline)
        return self._answer(200, payload, headers_.Prefer.parse(request.header("prefer")), entity, missing=target)

    # --- patches -----------------------------------------------------------------------------------------------

    async def _patched(
        self,
        target: Target,
        entity: Entity,
        *,
        lookup: KeyLookup,
        media: str,
        expected: str | None,
        request: RestRequest,
        pipeline: Pipeline,
    ) -> tuple[dict[str, Any], str | None]:
        """JSON Patch or merge patch: the row as the API shows it, patched; the members that changed, and the
        version they were read at (the write expects it: a change in between is STALE_VERSION)."""
        patch = parse_json(request.body)
        # The row as the API shows it: its columns and its version (a `test` of `/rowVersion` checks it).
        columns = (*(f.name for f in entity.fields), *(("rowVersion",) if entity.primary_key else ()))
        listing = Listing(Selection(fields=columns))
        text, version = await self.endpoint.read_row(entity, lookup, listing, request, pipeline)
        if text is None:
            raise self._missing(entity, target)
        if expected is not None and expected != version:
            raise SvcError(
                Code.STALE_VERSION,
                "the row has changed since that version was read",
                extensions={"type": entity.names.error_code, "fields": ["If-Match"]},
            )
        row = json.loads(text, parse_float=decimal.Decimal)
        if media == bodies.MERGE_PATCH:
            if not isinstance(patch, dict):
                raise SvcError(Code.BAD_USER_INPUT, "a merge patch of a row is a JSON object")
            patched = bodies.merge_row(row, patch)
        else:
            patched = bodies.json_patch(row, patch)
        changed = {name: value for name, value in patched.items() if name not in row or row[name] != value}
        for name in row:
            if name not in patched:
                changed[name] = None  # `remove` of a member: the column becomes NULL
        return _plain(changed), version

    # --- running -----------------------------------------------------------------------------------------------

    async def _run(
        self,
        entity: Entity,
        write: Any,
        answer: _Answer,
        selection: Selection,
        *,
        request: RestRequest,
        pipeline: Pipeline,
        deleting: bool = False,
    ) -> Payload:
        step = self._step(entity, write, answer, selection, deleting=deleting)
        tags = {"api": "rest", "method": request.method, "resource": entity.table}
        try:
            (payload,) = await self.endpoint.mutations.run(
                pipeline.executor, MutationPlan((step,)), tags=tags, session=request.session
            )
        except MutationFailed as failed:
            raise answer_error(failed.error, self.endpoint.config.errors, request.request_id) from failed
        return payload

    def _step(
        self, entity: Entity, write: Any, answer: _Answer, selection: Selection, *, deleting: bool
    ) -> MutationStep:
        """The write and the read of its rows: by key (their relations as they are now), or for deleted rows and
        tables without a key the rows the write answered."""
        run = ReadRun(self.model, self.endpoint.fields, self.limits)
        params = run.params
        slots: dict[str, Param] = {}

        def slot(name: str) -> Param:
            """The parameter the write fills: the written rows' keys, the rows, or the rows as they were."""
            if name not in slots:
                slots[name] = params.add(None, "json")
            return slots[name]

        cardinality = Cardinality.MANY if answer.many else Cardinality.ONE
        rows = (self.limits.bulk_rows or 1000) if answer.many else 1
        run.budget.read(1, rows, 1)
        shape = run.shape(entity, selection, _Place().below(rows))
        by_key = entity.primary_key is not None and not deleting
        key_order = tuple(OrderItem(ColumnRef(c), nullable=False) for c in entity.primary_key or ())
        roots: list[RootField] = []
        if by_key:
            assert entity.primary_key is not None
            keys = slot("keys")
            condition: Filter = KeyIn(table(entity), entity.primary_key, keys)
            order = (OrderItem(KeyPosition(table(entity), entity.primary_key, keys), nullable=False),)
            if answer.key_order:
                order = key_order
            roots.append(RootField("row", Read(table(entity), shape, cardinality, filter=condition, order=order)))
            if not answer.many:
                version = Shape((row_version("v", entity),))
                roots.append(RootField("version", Read(table(entity), version, Cardinality.ONE, filter=condition)))
        else:
            source = JsonRows(table(entity), slot("rows"))
            order = key_order if answer.key_order else ()
            roots.append(RootField("row", Read(source, without_versions(shape), cardinality, order=order)))
        if answer.previous:
            previous = JsonRows(table(entity), slot("previous"))
            roots.append(RootField("previous", Read(previous, without_versions(shape), Cardinality.ONE)))
        run.budget.check()
        return MutationStep(
            "rest",
            write=write,
            payload=ReadPlan(tuple(roots)),
            payload_values=tuple(params.values),
            slots=Slots(*(slots[name].index if name in slots else None for name in ("keys", "rows", "previous"))),
            key_columns=entity.primary_key or (),
        )

    def _answer(
        self,
        status: int,
        payload: Payload,
        prefer: headers_.Prefer,
        entity: Entity,
        *,
        location: str | None = None,
        missing: Target | None = None,
        extra: Sequence[tuple[str, str]] = (),
    ) -> RestResponse:
        texts = payload.texts
        row = texts.get("row")
        if missing is not None and row is None:
            raise self._missing(entity, missing)
        answer = list(extra)
        if location is not None:
            answer.append(("Location", location))
        version = texts.get("version")
        if version is not None:
            answer.append(("ETag", headers_.etag(json.loads(version)["v"])))
        if prefer.return_ == "minimal":
            return RestResponse(204, headers=(*answer, *headers_.preference_applied(["return=minimal"])))
        applied = headers_.preference_applied(["previous"] if prefer.previous and "previous" in texts else [])
        body = row if row is not None else b"null"
        if "previous" in texts:
            body = b'{"row":' + body + b',"previous":' + (texts["previous"] or b"null") + b"}"
        return json_response(status, body, [*answer, *applied])

    def _location(self, target: Target, entity: Entity, payload: Payload) -> str | None:
        """The created row's URL, under the path the client used (SPEC "Several schemas")."""
        if entity.primary_key is None or not payload.outcome.rows:
            return None
        row = payload.outcome.rows[0]
        key = ",".join(quote(_text(row.get(column)), safe="") for column in entity.primary_key)
        return f"{target.base}/{key}"

    # --- keys and preconditions --------------------------------------------------------------------------------

    def _lookup(self, target: Target, entity: Entity, parameters: Parameters) -> tuple[KeyLookup, bool]:
        by = parameters.peek("by") is not None
        return self.endpoint.lookup(target, entity, parameters), by

    def _owned_key(
        self, entity: Entity, lookup: KeyLookup, body: dict[str, Any], *, by: bool, fill: bool = False
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """SPEC "Writes" 1: the URL owns the key. A key member of the body must name the URL's row (its raw value,
        or its global ID); another value is 400. With `?by=` a PATCH may change the unique key's columns, but not
        the primary key's. Answers the body without the members the URL owns, and (`fill`, for PUT) the URL's key
        by field name, to be added to the coerced row."""
        rest = dict(body)
        urls = dict(lookup.values)
        primary = set(entity.primary_key or ())
        changeable = by and not fill and set(urls) != primary  # PATCH by another unique key
        for name, member in body.items():
            field = self._body_field(entity, name)
            if field is None:
                continue  # an unknown member: the input type's validation names it
            at = f"input.{field.rest_name}"
            if by and field.column in primary and field.column not in urls:
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"{at}: the primary key cannot change in a write by another key",
                    extensions={"field": at},
                )
            if field.column not in urls or changeable:
                continue
            if key_value(self.model, entity, field, member, ["input", field.rest_name]) != urls[field.column]:
                raise SvcError(Code.BAD_USER_INPUT, f"{at} differs from the key in the URL", extensions={"field": at})
            del rest[name]
        owned = {self._field_of(entity, column).name: value for column, value in lookup.values} if fill else {}
        return rest, owned

    def _body_field(self, entity: Entity, name: str) -> Field | None:
        """The field a body member names: by its GraphQL name, REST name or column name (as the input types
        accept them)."""
        field = entity.field(name)
        return field if field is not None else entity.rest_field(name)

    def _if_match(self, request: RestRequest) -> tuple[str | None, bool]:
        """(the expected version, whether the row must exist): `If-Match: "v"` expects v, `*` any version."""
        versions = headers_.matching_versions(request.header("if-match"))
        if versions is None:
            return None, False
        if "*" in versions:
            return None, True
        if len(versions) != 1:
            raise SvcError(Code.BAD_USER_INPUT, "If-Match names one version (or *)")
        return versions[0], True

    def _field_of(self, entity: Entity, column: str) -> Field:
        field = entity.field_of_column(column)
        assert field is not None
        return field

    def _field_names(self, entity: Entity, text: str, name: str) -> list[str]:
        names = []
        for item in text.split(","):
            field = entity.rest_field(item.strip())
            if field is None:
                raise SvcError(
                    Code.BAD_USER_INPUT, f"{name}: {entity.table} has no column {item.strip()!r}",
                    extensions={"field": name},
                )  # fmt: skip
            names.append(field.name)
        return names

    # --- REST names in errors ----------------------------------------------------------------------------------

    def _rest_path(self, path: str) -> str:
        """An input path in REST names: `rowId` is `id` where GraphQL renamed the key column, and list items are
        bracketed (`input.tags.connect[0].id`; the planner's bad-input paths dot them: `connect.0.id`)."""
        rendered = ""
        for part in path.split("."):
            if part.isdigit() and rendered:
                rendered += f"[{part}]"
                continue
            head, bracket, rest = part.partition("[")
            if head in self._renamed and head not in self._kept:
                head = "id"
            rendered += ("." if rendered else "") + head + bracket + rest
        return rendered

    def _rest_paths(self, error: SvcError) -> SvcError:
        extensions = dict(error.extensions)
        changed = False
        if isinstance(extensions.get("field"), str):
            extensions["field"] = self._rest_path(extensions["field"])
            changed = True
        if isinstance(extensions.get("fields"), list):
            extensions["fields"] = [
                # The version a REST write expects comes from `If-Match` (GraphQL's `expectedVersion`).
                "If-Match" if f == "expectedVersion" else self._rest_path(f) if isinstance(f, str) else f
                for f in extensions["fields"]
            ]
            changed = True
        if not changed:
            return error
        return SvcError(
            error.code,
            error.message,
            extensions=extensions,
            code_name=error.code_name,
            status=error.status,
            headers=error.headers,
        )


def _choice(value: str | None, name: str, allowed: Sequence[str], default: str) -> str:
    if value is None:
        return default
    if value not in allowed:
        raise SvcError(
            Code.BAD_USER_INPUT, f"{name} must be {' or '.join(allowed)}; got {value!r}", extensions={"field": name}
        )
    return value


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SvcError(Code.BAD_USER_INPUT, f"{name} must be a JSON object", extensions={"field": name})
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _plain(value: Any) -> Any:
    """Decimals read from a row back to JSON numbers' Python form for input coercion."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
