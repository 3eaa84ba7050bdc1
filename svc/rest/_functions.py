"""`/rest/rpc/{function}` (SPEC "REST API" -> functions): every GraphQL root function by its SQL name.

STABLE and IMMUTABLE functions answer GET and POST; VOLATILE ones only POST (GET is 405 with `Allow: POST`) and run
in a write transaction. Arguments use their API names: GET query parameters (lists as `1,2,3` or a JSON array), or
a POST body `{args: {...}}` (beside list options for functions returning rows), or the raw JSON payload for a
function whose single argument is json/jsonb. Defaults make arguments optional; a missing, unknown or mistyped one
is 400. A set of a table's rows is a list with the table's filter, order, page, fields and includes (without `order`
rows keep the function's order); one row is the row or null; values, records and OUT columns are JSON; void is 204.
"""

from typing import TYPE_CHECKING, Any

from graphql import GraphQLError, coerce_input_value, validate_input_value

from svc.errors import Code, SvcError
from svc.model import ReturnKind, RootFunction, ValueType
from svc.pipeline import MutationFailed, Pipeline, answer_error
from svc.plan import (
    Cardinality,
    ColumnOutput,
    ComputedOutput,
    FunctionCall,
    MutationPlan,
    MutationStep,
    Read,
    ReadPlan,
    RootField,
    Shape,
    decode_global_id,
    parse_json,
    render_path,
    value_map,
)

from . import _bodies as bodies
from ._inputs import bad, url_value
from ._listing import Listing
from ._messages import RestRequest, RestResponse, json_response
from ._query import Parameters
from ._reads import ReadRun, _Place, renamed
from ._resources import Target

if TYPE_CHECKING:
    from ._endpoint import RestEndpoint

#: Scalars a key column can have that a global ID (a string) cannot be mistaken for.
_KEY_SCALARS = frozenset({"Int", "BigInt", "UUID"})
_ROW_MEMBERS = ("fields", "include", "embed")
_LIST_MEMBERS = ("filter", "order", "first", "after", "last", "before", "offset", "fields", "include", "embed")


class FunctionCalls:
    def __init__(self, endpoint: "RestEndpoint") -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.schema = endpoint.inputs.schema

    async def call(
        self, target: Target, function: RootFunction, method: str, request: RestRequest, pipeline: Pipeline
    ) -> RestResponse:
        root_type = self.schema.mutation_type if function.mutation else self.schema.query_type
        definition = root_type.fields.get(function.name) if root_type is not None else None
        if definition is None:
            raise SvcError(Code.NOT_FOUND, f"no function {function.function!r} here")
        rows = function.returns.kind is ReturnKind.ROWS
        returns_row = function.returns.kind is ReturnKind.ROW
        if method == "GET":
            parameters = Parameters.parse(request.query_string)
            given = {}
            for argument in function.arguments:
                text = parameters.take_value(argument.name)
                if text is not None:
                    key = self._global_key(argument.type, text)
                    type_ = definition.args[argument.name].type
                    given[argument.name] = url_value(text, type_, argument.name, self.schema) if key == text else key
            listing = self._listing(function, parameters, rows) if rows or returns_row else Listing()
            parameters.finish([a.name for a in function.arguments])
        else:
            Parameters.parse(request.query_string).finish()
            given, options = self._body(function, request)
            listing = self.endpoint.listings.from_body(self._entity(function), options) if options else Listing()
        # Errors name an argument as the client gave it: a query parameter (GET) or a member of `args` (POST).
        prefix = "" if method == "GET" else "args."
        arguments = self._coerce(function, definition.args, given, prefix)
        run = ReadRun(self.model, self.endpoint.fields, self.endpoint.limits)
        try:
            planned = run.arguments.call(function.arguments, arguments, ["args"])
        except SvcError as error:
            raise renamed(error, "args", lambda parts: prefix + ".".join(parts)) from error
        call = FunctionCall(function.schema, function.function, planned)
        if rows and not function.mutation:
            entity = self._entity(function)
            return await self.endpoint.rows(
                target, entity, listing, request, pipeline, search=method == "POST", source=call, run=run
            )
        root = self._root(function, call, run, listing)
        run.budget.check()
        tags = {"api": "rest", "method": request.method, "resource": target.base}
        if function.mutation:
            step = MutationStep("rpc", call=ReadPlan((root,)), call_values=tuple(run.params.values))
            try:
                (payload,) = await self.endpoint.mutations.run(
                    pipeline.executor, MutationPlan((step,)), tags=tags, session=request.session
                )
            except MutationFailed as failed:
                raise answer_error(failed.error, self.endpoint.config.errors, request.request_id) from failed
            text = payload.texts.get("rpc")
        else:
            (text,) = await pipeline.read(
                self.endpoint.statements, ReadPlan((root,)), run.params.named(), tags=tags, session=request.session
            )
        if function.returns.kind is ReturnKind.VOID:
            return RestResponse(204)
        return json_response(200, text if text is not None else b"null")

    def _entity(self, function: RootFunction) -> Any:
        if function.returns.entity is None:
            raise SvcError(Code.BAD_USER_INPUT, f"{function.function} does not return rows: it takes only args")
        return self.model.entity(function.returns.entity)

    def _listing(self, function: RootFunction, parameters: Parameters, rows: bool) -> Listing:
        """A list's parameters for a set of rows; a row's members (fields, include) for one row."""
        return self.endpoint.listings.from_query(self._entity(function), parameters, rows=rows)

    def _body(self, function: RootFunction, request: RestRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        """(arguments, list options) of a POST: `{args: {...}, ...options}`, or the raw JSON payload of a function
        whose one argument is json/jsonb. No body is no arguments (`{}` would be a JSON payload)."""
        if not request.body.strip():
            return {}, {}
        media = bodies.media_type(request.header("content-type"))
        if media and media != bodies.JSON and not media.endswith("+json"):  # none given: taken as JSON
            raise bodies.unsupported(media, bodies.JSON)
        body = parse_json(request.body)
        single = function.arguments[0] if len(function.arguments) == 1 else None
        raw = single is not None and single.type.sql_type in ("json", "jsonb")
        if raw and not (isinstance(body, dict) and set(body) <= {"args", *_LIST_MEMBERS} and "args" in body):
            assert single is not None
            return {single.name: body}, {}
        if not isinstance(body, dict):
            raise SvcError(Code.BAD_USER_INPUT, "the body of a function call is a JSON object {args: {...}}")
        kind = function.returns.kind
        allowed = (
            "args",
            *(_LIST_MEMBERS if kind is ReturnKind.ROWS else _ROW_MEMBERS if kind is ReturnKind.ROW else ()),
        )
        unknown = [name for name in body if name not in allowed]
        if unknown:
            raise bad(f"unknown member {unknown[0]!r} (this call takes {', '.join(allowed)})", unknown[0])
        args = body.get("args") or {}
        if not isinstance(args, dict):
            raise bad("args must be an object of the function's arguments", "args")
        return dict(args), {name: value for name, value in body.items() if name != "args"}

    def _coerce(self, function: RootFunction, definitions: Any, given: dict[str, Any], prefix: str) -> dict[str, Any]:
        """Each argument against its GraphQL type; unknown, missing required and mistyped ones are 400."""
        names = {argument.name for argument in function.arguments}
        for name in given:
            if name not in names:
                known = ", ".join(sorted(names)) or "none"
                raise bad(f"{function.function} has no argument {name!r} (its arguments: {known})", prefix + name)
        coerced = {}
        for argument in function.arguments:
            if argument.name not in given:
                if argument.required:
                    raise bad(f"{function.function} needs the argument {argument.name}", prefix + argument.name)
                continue

            def on_error(error: GraphQLError, path: Any, name: str = argument.name) -> None:
                where = render_path([f"{prefix}{name}", *path])
                raise bad(f"{where}: {error.message.rstrip('.')}", where)

            type_ = definitions[argument.name].type
            value = self._global_key(argument.type, given[argument.name])
            validate_input_value(value, type_, on_error)
            coerced[argument.name] = coerce_input_value(value, type_)
        return coerced

    def _global_key(self, type_: ValueType, value: Any) -> Any:
        """SPEC "Functions": key-like arguments accept global IDs. An argument typed like a single-column primary key
        (Int, BigInt, UUID) given the global ID of a row of such a key takes the row's key."""
        decoded = decode_global_id(value) if isinstance(value, str) and type_.name in _KEY_SCALARS else None
        entity = self.model.entity_named(decoded[0]) if decoded else None
        if decoded is None or entity is None or not entity.node or entity.primary_key is None:
            return value
        field = entity.field_of_column(entity.primary_key[0])
        if field is None or field.type.name != type_.name:
            return value
        return int(decoded[1]) if type_.name == "Int" and decoded[1].lstrip("-").isdigit() else decoded[1]

    def _root(self, function: RootFunction, call: FunctionCall, run: ReadRun, listing: Listing) -> RootField:
        """The call's JSON: a value, one row or record, or (VOLATILE functions) a list of rows or records."""
        returns = function.returns
        kind = returns.kind
        if kind in (ReturnKind.SCALAR, ReturnKind.SCALARS, ReturnKind.VOID):
            mapping = value_map(returns.type, self.model) if returns.type is not None else None
            output = (
                ComputedOutput("value", call, mapping, returns_set=kind is ReturnKind.SCALARS)
                if mapping
                else (ComputedOutput("value", call))
            )
            return RootField("value", call=output)
        if kind in (ReturnKind.RECORD, ReturnKind.RECORDS):
            assert returns.record is not None
            outputs = tuple(
                ColumnOutput(f.name, f.column, value_map(f.type, self.model)) for f in returns.record.fields
            )
            many = kind is ReturnKind.RECORDS
            run.budget.read(1, (self.endpoint.limits.page_size.max or 1000) if many else 1, 1)
            return RootField("value", Read(call, Shape(outputs), Cardinality.MANY if many else Cardinality.ONE))
        entity = self._entity(function)
        if kind is ReturnKind.ROW:
            run.budget.read(1, 1, 1)
            shape = run.shape(entity, listing.selection, _Place().below(1))
            return RootField("value", Read(call, shape, Cardinality.ONE))
        page, rows = run.arguments.list_page({"first": listing.first, "offset": listing.offset}, ())
        run.budget.read(1, rows, 1)
        order = run.arguments.order(entity, listing.order, default_key=False)
        shape = run.shape(entity, listing.selection, _Place().below(rows))
        filter_ = run.filter(entity, listing.filter, "filter")
        return RootField("value", Read(call, shape, Cardinality.MANY, filter=filter_, order=order.items, page=page))
