"""`/graphql` (POST and GET) and the SDL over HTTP (SPEC "Endpoints" -> service-level, "GraphQL behaviour").

POST takes a JSON body `{query, operationName, variables, extensions, onError}` (at most
`limits.request_body_bytes`); GET takes the same as URL parameters (`variables` and `extensions` as JSON), and only
queries: a mutation over GET is 405. With `subscriptions.enabled`, a POST asking for
`multipart/mixed;subscriptionSpec=1.0` streams a subscription's results, and `/graphql/stream` serves GraphQL over
server-sent events (`_streams.py`; the WebSocket transport is `_socket.py`). `POST /export` streams the rows of one
root connection as NDJSON or CSV. The SDL (`graphql.sdl_path`) is served as text when `graphql.sdl` is on.
"""

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from svc.config import Config
from svc.errors import Code, SvcError
from svc.graphql import GraphqlRequest, GraphqlSchema
from svc.pipeline import Pipeline
from svc.plan import RowsFormat, parse_json

from ._live import Live
from ._messages import Request, Response
from ._problem import GRAPHQL_RESPONSE_JSON, graphql_error, graphql_media_type
from ._routing import Route
from ._streams import Streams, incremental_response, wants_multipart

_JSON_TYPES = ("application/json", "application/graphql-response+json", "application/graphql+json")
_MEMBERS = ("query", "operationName", "variables", "extensions", "onError", "documentId")


#: GraphQL over server-sent events (SPEC leaves subscription paths open).
STREAM_PATH = "/graphql/stream"
EXPORT_PATH = "/export"
_EXPORT_FORMATS = {"ndjson": RowsFormat.NDJSON, "csv": RowsFormat.CSV}


class GraphqlRoutes:
    def __init__(self, config: Config, pipeline: Pipeline, live: Live | None = None) -> None:
        self._config = config
        self._pipeline = pipeline
        #: Subscriptions' transports (None: `subscriptions.enabled` is off).
        self._live = live
        self._streams = Streams(config, live) if live is not None else None

    def routes(self) -> list[Route]:
        graphql = self._config.graphql
        routes = []
        if graphql.enabled:
            routes.append(
                Route("/graphql", frozenset({"GET", "POST"}), self.graphql, api=True, render_error=graphql_error)
            )
            if self._streams is not None:
                routes.append(
                    Route(STREAM_PATH, frozenset({"GET", "POST"}), self.stream, api=True, render_error=graphql_error)
                )
            routes.append(Route(EXPORT_PATH, frozenset({"POST"}), self.export, api=True))
        if graphql.sdl:
            routes.append(Route(graphql.sdl_path, frozenset({"GET"}), self.sdl, identify=True))
        if graphql.enabled and graphql.federation.enabled:
            # What `_service { sdl }` answers to anyone, so served whatever `graphql.sdl` says.
            routes.append(Route(graphql.subgraph_path, frozenset({"GET"}), self.subgraph, identify=True))
        return routes

    async def graphql(self, request: Request) -> Response:
        assert request.snapshot is not None
        graphql_request = await self._request(request)
        if self._streams is not None and request.method == "POST" and wants_multipart(request):
            assert self._live is not None
            opened = await self._live.open(request.snapshot, request, graphql_request, request.request_id)
            return await self._streams.multipart(request, opened)
        api = request.snapshot.api(request.role)
        answer = await api.endpoint.execute(graphql_request, self._pipeline, request.request_id)
        headers = [("Allow", "POST")] if answer.status == 405 else []
        if answer.subsequent:
            return incremental_response([answer.body, *answer.subsequent])
        media = graphql_media_type(request)
        body = answer.body
        if media == GRAPHQL_RESPONSE_JSON and not answer.executed:
            # GraphQL over HTTP: a request error has no `data` member (application/json keeps `data: null`).
            body = json.dumps({"errors": answer.errors}, separators=(",", ":"), ensure_ascii=False).encode()
        return Response(answer.status, body, media, headers)

    async def export(self, request: Request) -> Response:
        """`POST /export`: the body is a GraphQL request (one root connection, `ExportQuery`) and `format`,
        `ndjson` (the default) or `csv`; every row it selects, streamed as it is fetched. Bad requests are answered
        before the first byte; a database failure after it ends the stream without its last chunk, so a client
        never takes a cut export for a whole one."""
        assert request.snapshot is not None
        members = await self._body(request)
        format_name = members.pop("format", "ndjson")
        format_ = _EXPORT_FORMATS.get(format_name) if isinstance(format_name, str) else None
        if format_ is None:
            raise SvcError(Code.BAD_USER_INPUT, "format must be ndjson or csv", extensions={"field": "format"})
        api = request.snapshot.api(request.role)
        query = api.endpoint.export(graphql_request(members, request), request.request_id)

        async def stream(write: Callable[[bytes], Awaitable[None]]) -> None:
            await self._pipeline.export(
                query.statements, query.plan, query.params, query.context, format=format_, write=write
            )

        return Response.streaming(stream, format_.content_type)

    async def stream(self, request: Request) -> Response:
        """GraphQL over server-sent events (distinct connections mode): any operation, its results as events."""
        assert request.snapshot is not None and self._live is not None and self._streams is not None
        graphql_request = await self._request(request)
        opened = await self._live.open(request.snapshot, request, graphql_request, request.request_id)
        return await self._streams.event_stream(request, opened)

    async def _request(self, request: Request) -> GraphqlRequest:
        members = await (self._body(request) if request.method == "POST" else self._query(request))
        return graphql_request(members, request, method="GET" if request.method in ("GET", "HEAD") else "POST")

    async def sdl(self, request: Request) -> Response:
        """The SDL, served without a token; with `rbac.enabled`, as the role the request runs as sees the schema (the
        anonymous role's, or with a valid token the authenticated role's)."""
        return Response(200, self._schema(request).sdl.encode(), "text/plain; charset=utf-8")

    async def subgraph(self, request: Request) -> Response:
        """The federation subgraph SDL (`_service { sdl }`), for the role as `sdl` says."""
        sdl = self._schema(request).subgraph_sdl
        assert sdl is not None  # the route exists only with federation on
        return Response(200, sdl.encode(), "text/plain; charset=utf-8")

    def _schema(self, request: Request) -> GraphqlSchema:
        assert request.snapshot is not None
        return request.snapshot.api(request.role or self._config.auth.roles.anonymous).graphql

    async def _body(self, request: Request) -> dict[str, Any]:
        media = (request.header("content-type") or "").split(";")[0].strip().lower()
        if media not in _JSON_TYPES:
            raise SvcError(Code.UNSUPPORTED_MEDIA_TYPE, "send the GraphQL request as application/json")
        members = parse_json(await request.body(self._config.limits.request_body_bytes))
        if not isinstance(members, dict):
            raise SvcError(Code.BAD_USER_INPUT, "the request body must be a JSON object")
        return members

    async def _query(self, request: Request) -> dict[str, Any]:
        try:
            pairs = parse_qsl(request.query_string.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            raise SvcError(Code.BAD_USER_INPUT, "the query string is not UTF-8") from None
        members: dict[str, Any] = {}
        for name, value in pairs:
            if name in members:
                raise SvcError(Code.BAD_USER_INPUT, f"the URL parameter {name} is given twice")
            members[name] = _json_parameter(name, value) if name in ("variables", "extensions") else value
        return members


def graphql_request(members: Mapping[str, Any], request: Request, *, method: str = "POST") -> GraphqlRequest:
    """The GraphQL request that `members` (a POST body, GET parameters, a graphql-transport-ws payload) make;
    BAD_USER_INPUT names an unknown member or one of the wrong type."""
    unknown = sorted(set(members) - set(_MEMBERS))
    if unknown:
        raise SvcError(Code.BAD_USER_INPUT, f"unknown request member(s): {', '.join(unknown)}")
    return GraphqlRequest(
        query=_string(members.get("query"), "query"),
        operation_name=_string(members.get("operationName"), "operationName"),
        variables=_object(members.get("variables"), "variables"),
        extensions=_object(members.get("extensions"), "extensions"),
        on_error=_string(members.get("onError"), "onError"),
        document_id=_string(members.get("documentId"), "documentId"),
        incremental="multipart/mixed" in (request.header("accept") or "").lower(),
        method=method,
        session=request.session(),
    )


def _json_parameter(name: str, value: str) -> Any:
    if value == "":
        return None
    return parse_json(value.encode(), f"the URL parameter {name}")


def _string(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise SvcError(Code.BAD_USER_INPUT, f"{name} must be a string")


def _object(value: Any, name: str) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    raise SvcError(Code.BAD_USER_INPUT, f"{name} must be an object")
