"""`/rest` and everything below it (SPEC "REST API"): the HTTP side of the REST front end.

Requests are authenticated and rate-limited like every API route (the app does that before this handler runs);
the body of a write is read here, never beyond `limits.request_body_bytes` (413). The snapshot's REST endpoint
answers; its typed errors become problem documents with the path as the client wrote it as `instance`.
"""

from svc.config import Config
from svc.pipeline import Pipeline
from svc.rest import RestRequest

from ._messages import Request, Response
from ._routing import Route

_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_ANY_METHOD = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})


class RestRoutes:
    def __init__(self, config: Config, pipeline: Pipeline) -> None:
        self._config = config
        self._pipeline = pipeline

    def routes(self) -> list[Route]:
        if not self._config.openapi.enabled:
            return []
        return [Route("/rest", _ANY_METHOD, self.rest, api=True, prefix=True, own_methods=True)]

    async def rest(self, request: Request) -> Response:
        assert request.snapshot is not None
        body = b""
        if request.method in _WITH_BODY:
            body = await request.body(self._config.limits.request_body_bytes)
        rest_request = RestRequest(
            method=request.method,
            raw_path=request.raw_path or request.path,
            query_string=request.query_string,
            headers=request.headers,
            request_id=request.request_id,
            body=body,
            session=request.session(),
        )
        answer = await request.snapshot.api(request.role).rest.handle(rest_request, self._pipeline)
        return Response(answer.status, answer.body, answer.content_type, answer.headers)
