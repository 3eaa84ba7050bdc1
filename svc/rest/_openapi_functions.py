"""The path of each root function in the OpenAPI document (SPEC "REST API" -> "Functions").

"Every GraphQL root function is at `/rest/rpc/{sql name}`. STABLE/IMMUTABLE: GET and POST; VOLATILE: POST only ...
Arguments use camelCase names: GET query parameters (arrays as 1,2,3 or a JSON array); POST body `{args: {...}}`, or
the raw JSON payload for a function with a single json/jsonb argument. Defaults make arguments optional ... Returns:
set of a table's rows gives a list with the table's filter/order/first/after/fields/include/`Prefer: count=exact`
...; one row gives the row or null ...; value/record/OUT columns give JSON; void gives 204."

operationIds: GET `<field>` and POST `<field>Post` for a STABLE/IMMUTABLE function, POST `<field>` for a VOLATILE one
(`<field>` is the GraphQL root field's name); `rpc<Field>` and `rpc<Field>Post` when a generated operation already
has one of those names (`searchProducts` beside a function `search_products`).
"""

from typing import Any

from svc.model import ReturnKind, Returns, ValueKind, ValueType, pascal

from ._openapi_fixed import list_members
from ._openapi_operations import Operations, body
from ._openapi_values import Schema, is_json, nullable
from ._resources import FunctionRoute

#: What a function returning rows takes besides its arguments.
_LIST_PARAMETERS = ("filter", "order", "first", "after", "fields", "include")
_GET = "Arguments are query parameters (lists as `1,2,3` or a JSON array); those with a default may be left out."
_POST = "Arguments are members of the body's `args`; those with a default may be left out."


class FunctionPaths:
    """The path of one root function: GET (STABLE/IMMUTABLE) and POST (SPEC "Functions")."""

    def __init__(self, operations: Operations, route: FunctionRoute) -> None:
        self.operations = operations
        self.shared = operations.shared
        self.schemas = operations.schemas
        self.function = route.function
        tag = route.path.removeprefix("/rest/").rsplit("/", 1)[0]
        self.tag = (tag, "Functions of the default schema." if tag == "rpc" else f"Functions of `{tag[:-4]}`.")
        self.rows = self.function.returns.kind is ReturnKind.ROWS

    def path_item(self) -> dict[str, Any]:
        """GET `<field>` and POST `<field>Post` (POST `<field>` alone for a VOLATILE function); both `rpc<Field>...`
        when a generated operation already has one of those names (`searchProducts` beside `search_products()`)."""
        function, item = self.function, {}
        names = [function.name] if function.mutation else [function.name, f"{function.name}Post"]
        if any(self.operations.taken(name) for name in names):
            names = [f"rpc{pascal(name)}" for name in names]
        if not function.mutation:
            item["get"] = self._operation(names[0], get=True)
        item["post"] = self._operation(names[-1], get=False)
        return item

    def _operation(self, name: str, *, get: bool) -> Schema:
        function = self.function
        errors = ("413", "415", "4XX") if not get else ("4XX",)
        if function.mutation:
            errors = ("409", "422", *errors)
        summary = f"Call `{function.schema}.{function.function}`"
        return self.operations.operation(
            name,
            summary + (" (arguments in the query string)" if get else ""),
            self.tag,
            self._responses(get),
            errors,
            description=_described(function.description, _GET if get else _POST),
            parameters=self._parameters() if get else None,
            body=None if get else self._body(),
            deprecated=function.deprecation is not None,
        )

    def _parameters(self) -> list[Schema]:
        arguments = self.function.arguments
        parameters = [self._argument(argument.name, argument.type, argument.required) for argument in arguments]
        if self.rows:
            taken = {argument.name for argument in arguments}
            names = [name for name in _LIST_PARAMETERS if name not in taken]
            parameters += self.shared.parameters([*names, "PreferCount"])
        return parameters

    def _argument(self, name: str, value: ValueType, required: bool) -> Schema:
        """An argument as a query parameter: plain text for scalars and enums, `1,2,3` for their lists, JSON text
        for the rest."""
        parameter: Schema = {"name": name, "in": "query", "required": required}
        schema = self.schemas.value(value)
        item = value.item if value.kind is ValueKind.LIST else value
        plain = item is not None and item.kind in (ValueKind.SCALAR, ValueKind.ENUM) and not is_json(item)
        if not plain:
            return {**parameter, "content": {"application/json": {"schema": schema}}}
        if value.kind is ValueKind.LIST:
            parameter |= {"style": "form", "explode": False}
        return {**parameter, "schema": schema}

    def _body(self) -> Schema:
        function = self.function
        arguments = {
            a.name: self.schemas.value(a.type, nullable_=not (a.required and function.strict))
            for a in function.arguments
        }
        args: Schema = {"type": "object", "properties": arguments, "additionalProperties": False}
        required = [a.name for a in function.arguments if a.required]
        if required:
            args["required"] = required
        payload: Schema = {"type": "object", "properties": {"args": args}, "additionalProperties": False}
        if self.rows:
            members = list_members(self.operations.config)  # shaped as in a search body
            payload["properties"] |= {name: members[name] for name in _LIST_PARAMETERS}
        if required:
            payload["required"] = ["args"]
        if len(function.arguments) == 1 and is_json(function.arguments[0].type):
            payload = {"description": "`{args: {...}}`, or the argument's JSON value itself."}
        return body({"application/json": payload}, required=bool(required))

    def _responses(self, get: bool) -> dict[str, Schema]:
        returns = self.function.returns
        written = self.function.mutation  # a VOLATILE function runs on the primary as a write
        if returns.kind is ReturnKind.VOID:
            return {"204": self.shared.success("Done.", written=written)}
        headers: tuple[str, ...] = ()
        if self.rows:
            headers = ("Link" if get else "X-Next-Cursor", "X-Total-Count", "Preference-Applied")
        result = {"application/json": self._result(returns)}
        return {"200": self.shared.success("The result.", result, headers, written=written)}

    def _result(self, returns: Returns) -> Schema:
        kind = returns.kind
        if kind in (ReturnKind.ROWS, ReturnKind.ROW):
            assert returns.entity is not None
            row = self.schemas.row(self.operations.model.entity(returns.entity))
            return {"type": "array", "items": row} if kind is ReturnKind.ROWS else nullable(row)
        if kind in (ReturnKind.RECORD, ReturnKind.RECORDS):
            assert returns.record is not None
            record = self.schemas.record(returns.record)
            return {"type": "array", "items": record} if kind is ReturnKind.RECORDS else nullable(record)
        assert returns.type is not None
        value = self.schemas.value(returns.type, nullable_=True)
        return {"type": "array", "items": value} if kind is ReturnKind.SCALARS else value


def _described(text: str | None, calling: str) -> str:
    return f"{text}\n\n{calling}" if text else calling
