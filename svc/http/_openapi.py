"""The OpenAPI document over HTTP (SPEC "Service-level endpoints": `GET /openapi.json` (configurable), JSON, or YAML
with `Accept: application/yaml`). Served when `openapi.spec` is on, and whenever the Scalar reference (`openapi.ui`)
is, since it reads it; never with `openapi.enabled` off. Not an API route: never rate-limited, and a request without
a token gets it. With `rbac.enabled` the document is the one of the role the request runs as: the anonymous role's,
or with a valid token the authenticated role's."""

from svc.config import Config
from svc.rest import openapi_json, openapi_yaml

from ._messages import Request, Response
from ._routing import Route

_YAML = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


class OpenapiRoutes:
    def __init__(self, config: Config) -> None:
        self._config = config

    def routes(self) -> list[Route]:
        openapi = self._config.openapi
        if not openapi.enabled or not (openapi.spec or openapi.ui):
            return []
        return [Route(openapi.path, frozenset({"GET"}), self.document, identify=True)]

    async def document(self, request: Request) -> Response:
        assert request.snapshot is not None
        role = request.role or self._config.auth.roles.anonymous
        document = dict(await request.snapshot.api(role).openapi())
        if _wants_yaml(request.header("accept")):
            return Response(200, openapi_yaml(document).encode(), "application/yaml; charset=utf-8")
        return Response(200, openapi_json(document).encode(), "application/json")


def _wants_yaml(accept: str | None) -> bool:
    """YAML when `Accept` names a YAML type ahead of (or without) JSON."""
    for item in (accept or "").split(","):
        media = item.split(";")[0].strip().lower()
        if media in _YAML:
            return True
        if media in ("application/json", "*/*", "application/*"):
            return False
    return False
