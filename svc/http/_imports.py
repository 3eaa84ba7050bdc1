"""`POST /import/{Type}` (SPEC "Endpoints"): the body is one `Create<Type>Input` JSON object per line (NDJSON), read
as it arrives and never held whole (not size-limited); each line is checked by the rules a mutation's input follows
(unknown members, types, TOO_LONG, OUT_OF_RANGE...) and copied into a staging table as it comes, then every row is
inserted all or nothing in one transaction (svc.pipeline's import). A failure names its line (`line`, counted from
1, blank lines included) and leaves the table as it was, as does a client that goes away mid-upload. Relation
members are refused (an import writes the one table). The answer is 201 `{"created": n}`, with `"keys"` (each row's
primary key, in line order) when `?keys=true`.

An API route: authenticated (the request's role and claims, so row-level security applies) and rate-limited.
"""

import json
from collections.abc import AsyncIterator
from urllib.parse import parse_qsl

from svc.errors import Code, SvcError
from svc.model import Entity, Operation
from svc.pipeline import Context, Pipeline, at_line
from svc.plan import Values, WriteInputs, parse_json
from svc.telemetry import set_route

from ._messages import Request, Response
from ._routing import Route

PATH = "/import"


class ImportRoutes:
    def __init__(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline

    def routes(self) -> list[Route]:
        return [Route(PATH, frozenset({"POST"}), self.import_, api=True, prefix=True)]

    async def import_(self, request: Request) -> Response:
        assert request.snapshot is not None
        set_route(f"{PATH}/{{Type}}")
        api = request.snapshot.api(request.role)
        entity = _entity(api.model.entities, request.path.removeprefix(PATH + "/"))
        keys = _keys(request.query_string)
        inputs = WriteInputs(api.model)

        async def rows() -> AsyncIterator[tuple[int, Values]]:
            async for number, line in _lines(request):
                if not line.strip():
                    continue
                try:
                    value = parse_json(line, "the line")
                    if not isinstance(value, dict):
                        raise SvcError(Code.BAD_USER_INPUT, f"expected a Create{entity.type_name}Input object")
                    write = inputs.create(entity, value, (), relations="an import")
                except SvcError as error:
                    raise at_line(error, number) from error
                yield number, write.values

        context = Context(request.request_id, request.session(), {"api": "import", "resource": entity.type_name})
        imported = await self._pipeline.import_rows(api.endpoint.statements, entity, rows(), context, keys=keys)
        body: dict[str, object] = {"created": imported.created}
        if imported.keys is not None:
            body["keys"] = [json.loads(key) for key in imported.keys]
        return Response.json(body, status=201)


def _entity(entities: tuple[Entity, ...], name: str) -> Entity:
    """The type an import names; 404 for no such type, 403 when its rows may not be created here."""
    entity = next((e for e in entities if e.type_name == name), None)
    if entity is None:
        raise SvcError(Code.NOT_FOUND, f"no type {name!r} to import into (the path names a GraphQL type)")
    if Operation.CREATE not in entity.operations:
        if Operation.CREATE in entity.withheld:
            raise SvcError(Code.PERMISSION_DENIED, f"creating {name} rows is not permitted")
        raise SvcError(Code.METHOD_NOT_ALLOWED, f"{name} rows cannot be created")
    return entity


def _keys(query: bytes) -> bool:
    """`?keys=true` asks for the rows' keys; no other parameter is taken."""
    given = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
    unknown = sorted(set(given) - {"keys"})
    if unknown:
        raise SvcError(Code.BAD_USER_INPUT, f"unknown parameter(s): {', '.join(unknown)}")
    value = given.get("keys", "false")
    if value not in ("true", "false"):
        raise SvcError(Code.BAD_USER_INPUT, "keys must be true or false", extensions={"field": "keys"})
    return value == "true"


async def _lines(request: Request) -> AsyncIterator[tuple[int, bytes]]:
    """The body's lines as they arrive, numbered from 1 (a final line may lack its newline; CRLF is taken)."""
    pending, number = b"", 0
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise SvcError(Code.BAD_USER_INPUT, "the body ended before its end: the client went away")
        pending += message.get("body", b"")
        *complete, pending = pending.split(b"\n")
        for line in complete:
            number += 1
            yield number, line.removesuffix(b"\r")
        if not message.get("more_body", False):
            break
    if pending:
        yield number + 1, pending.removesuffix(b"\r")
