"""`/rest/rpc/{function}` parsed (SPEC "REST API" -> functions): every GraphQL root function by its SQL name.

Arguments use their API names: GET query parameters (lists as `1,2,3` or a JSON array), or a POST body
`{args: {...}}` (beside list options for functions returning rows), or the raw JSON payload for a function whose
single argument is json/jsonb. Key-like arguments take global IDs. Defaults make arguments optional; a missing,
unknown or mistyped one is 400 naming it as the client gave it: a query parameter (`a`) or a member of `args`
(`args.a`). A set of a table's rows takes the table's list parameters; one row takes `fields`, `include` and `embed`.
"""

from collections.abc import Mapping
from typing import Any

from graphql import GraphQLArgument, GraphQLError, coerce_input_value, validate_input_value

from svc.errors import Code, SvcError
from svc.model import Entity, Model, ReturnKind, RootFunction, ValueType
from svc.plan import decode_global_id, parse_json, render_path

from . import _parse_bodies as bodies
from ._api_request import Call, Listing
from ._messages import RestRequest
from ._parse_inputs import InputTypes, bad, url_value
from ._parse_listing import Listings
from ._parse_query import Parameters

#: Scalars a key column can have that a global ID (a string) cannot be mistaken for.
_KEY_SCALARS = frozenset({"Int", "BigInt", "UUID"})
_ROW_MEMBERS = ("fields", "include", "embed")
_LIST_MEMBERS = ("filter", "order", "first", "after", "last", "before", "offset", "fields", "include", "embed")


class CallParser:
    """Reads function calls against one model and its GraphQL schema."""

    def __init__(self, model: Model, inputs: InputTypes, listings: Listings) -> None:
        self.model = model
        self.schema = inputs.schema
        self.listings = listings

    def parse(self, function: RootFunction, method: str, request: RestRequest) -> tuple[Call, Listing]:
        """The call, and the list or row parameters of the rows it returns."""
        root_type = self.schema.mutation_type if function.mutation else self.schema.query_type
        definition = root_type.fields.get(function.name) if root_type is not None else None
        if definition is None:
            raise SvcError(Code.NOT_FOUND, f"no function {function.function!r} here")
        kind = function.returns.kind
        if method == "GET":
            parameters = Parameters.parse(request.query_string)
            given: dict[str, Any] = {}
            for argument in function.arguments:
                text = parameters.take_value(argument.name)
                if text is not None:
                    key = self._global_key(argument.type, text)
                    type_ = definition.args[argument.name].type
                    given[argument.name] = url_value(text, type_, argument.name, self.schema) if key == text else key
            listing = Listing()
            if kind in (ReturnKind.ROWS, ReturnKind.ROW):
                listing = self.listings.from_query(self.entity(function), parameters, rows=kind is ReturnKind.ROWS)
            parameters.finish([a.name for a in function.arguments])
        else:
            Parameters.parse(request.query_string).finish()
            given, options = self._body(function, request)
            listing = self.listings.from_body(self.entity(function), options) if options else Listing()
        # Errors name an argument as the client gave it: a query parameter (GET) or a member of `args` (POST).
        arguments = self._coerce(function, definition.args, given, "" if method == "GET" else "args.")
        return Call(function, arguments, in_body=method != "GET"), listing

    def entity(self, function: RootFunction) -> Entity:
        """The entity whose rows the function returns (list and row parameters are that entity's)."""
        if function.returns.entity is None:
            raise SvcError(Code.BAD_USER_INPUT, f"{function.function} does not return rows: it takes only args")
        return self.model.entity(function.returns.entity)

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
        members: dict[str, Any] = body
        kind = function.returns.kind
        allowed = (
            "args",
            *(_LIST_MEMBERS if kind is ReturnKind.ROWS else _ROW_MEMBERS if kind is ReturnKind.ROW else ()),
        )
        unknown = [name for name in members if name not in allowed]
        if unknown:
            raise bad(f"unknown member {unknown[0]!r} (this call takes {', '.join(allowed)})", unknown[0])
        args = members.get("args") or {}
        if not isinstance(args, dict):
            raise bad("args must be an object of the function's arguments", "args")
        return dict(args), {name: value for name, value in members.items() if name != "args"}

    def _coerce(
        self, function: RootFunction, definitions: Mapping[str, GraphQLArgument], given: dict[str, Any], prefix: str
    ) -> dict[str, Any]:
        """Each argument against its GraphQL type; unknown, missing required and mistyped ones are 400."""
        names = {argument.name for argument in function.arguments}
        for name in given:
            if name not in names:
                known = ", ".join(sorted(names)) or "none"
                raise bad(f"{function.function} has no argument {name!r} (its arguments: {known})", prefix + name)
        coerced: dict[str, Any] = {}
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
