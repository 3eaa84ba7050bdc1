"""`POST /import/{Type}` (SPEC "Endpoints"): the body is one `Create<Type>Input` JSON object per line (NDJSON), read
as it arrives in batches of whole lines and never held whole (not size-limited); each line is checked by the rules a
mutation's input follows (unknown members, types, TOO_LONG, OUT_OF_RANGE...: `WriteInputs`) and every row is written
all or nothing in one transaction (svc.pipeline's import). A failure names its line (`line`, counted from 1, blank
lines included) and leaves the table as it was, as does a client that goes away mid-upload. Relation members are
refused (an import writes the one table). The answer is 201 `{"created": n}`, with `"keys"` (each row's primary
key, in line order) when `?keys=true`.

An API route: authenticated (the request's role and claims, so row-level security applies) and rate-limited.
"""

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl

from svc.errors import Code, SvcError
from svc.model import Entity, Operation
from svc.pipeline import Context, LineBatch, Pipeline, at_line
from svc.plan import WriteInputs, parse_json
from svc.telemetry import set_route

from ._messages import Request, Response
from ._routing import Route

PATH = "/import"
#: About how much of the body one batch of whole lines holds (a batch is written, or refused, as a whole: one COPY or
#: staged insert per run of lines giving the same members, under one savepoint).
BATCH_BYTES = 1 << 20


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

        def checked(number: int, line: bytes) -> tuple[tuple[str, ...], list[Any]]:
            try:
                value: Any = parse_json(line, "the line")
                if not isinstance(value, dict):
                    raise SvcError(Code.BAD_USER_INPUT, f"expected a Create{entity.type_name}Input object")
                found = inputs.column_values(entity, value, ())
                if found is not None:
                    columns, values, _ = found
                    return columns, values
                row = inputs.create(entity, value, (), relations="an import").values
                return row.given, [value for _, value in row.values]
            except SvcError as error:
                raise at_line(error, number) from error

        context = Context(request.request_id, request.session(), {"api": "import", "resource": entity.type_name})
        imported = await self._pipeline.import_rows(
            api.endpoint.statements, entity, _batches(request), context, keys=keys, checked=checked
        )
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


async def _batches(request: Request) -> AsyncIterator[LineBatch]:
    """The body's lines as they arrive, in batches of whole lines of about `BATCH_BYTES` (a final line may lack its
    newline; a CR before it is the JSON's whitespace)."""
    chunks: list[bytes] = []
    size, first = 0, 1
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise SvcError(Code.BAD_USER_INPUT, "the body ended before its end: the client went away")
        chunk: bytes = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        more = message.get("more_body", False)
        if more and (size < BATCH_BYTES or b"\n" not in chunk):  # (a line longer than a batch is joined once)
            continue
        pending = b"".join(chunks)
        end = pending.rfind(b"\n")
        if end >= 0:
            yield LineBatch(first, pending[:end])
            first += pending.count(b"\n", 0, end) + 1
        rest = pending[end + 1 :]
        chunks, size = [rest], len(rest)
        if not more:
            break
    if rest:
        yield LineBatch(first, rest)
