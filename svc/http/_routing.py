"""The route table: exact paths to handlers, with the methods each accepts.

Unknown paths are 404 and known paths with another method 405 with `Allow` (RFC 9457 problems); HEAD is
accepted wherever GET is, and OPTIONS answers 204 with `Allow` on every known path. A prefix route (`/rest`) serves
the paths below it too and answers every method itself.
"""

from collections.abc import Awaitable, Callable, Iterable

import attrs

from ._messages import Request, Response
from ._problem import problem

Handler = Callable[[Request], Awaitable[Response]]
ErrorRenderer = Callable[..., Response]  # (error, request, *, headers) -> the error's response


@attrs.frozen
class Route:
    path: str
    methods: frozenset[str]
    handler: Handler
    #: An interactive UI page: the strict preset's CSP and frame header are left off it.
    ui: bool = False
    #: Served before a snapshot exists (probes): the handler does not need one.
    needs_snapshot: bool = True
    #: An API route (/graphql, /rest...): requests are authenticated and rate-limited (SPEC "Authentication",
    #: "Limits"); probes, metrics, SDL, OpenAPI and UIs are not.
    api: bool = False
    #: How typed errors the app raises for this route are answered: problem documents, or GraphQL responses.
    render_error: ErrorRenderer = problem
    #: Serves every path under `path` too (`/rest/...`, `/import/...`).
    prefix: bool = False
    #: Answers every method itself, OPTIONS and 405 included: the methods a path has depend on what it names
    #: (`/rest`). Otherwise the app answers OPTIONS and refuses what `methods` leaves out.
    own_methods: bool = False
    #: Not an API route, but a token, when one is sent, is verified and names the role the answer is for (the
    #: SDL and the OpenAPI document with `rbac.enabled`); a request without one is answered as anonymous.
    identify: bool = False

    @property
    def template(self) -> str:
        """Telemetry's `http.route`: the path; for a prefix route, none until its handler names one (it knows what
        the path below it names)."""
        return "" if self.prefix else self.path

    def allowed(self) -> list[str]:
        methods = set(self.methods) | {"OPTIONS"}
        if "GET" in methods:
            methods.add("HEAD")
        return sorted(methods)


class Router:
    def __init__(self, routes: Iterable[Route]) -> None:
        self._routes: dict[str, Route] = {}
        self._prefixes: list[Route] = []
        for route in routes:
            if route.path in self._routes:
                raise ValueError(f"two routes for {route.path}")
            self._routes[route.path] = route
            if route.prefix:
                self._prefixes.append(route)

    def find(self, path: str) -> Route | None:
        found = self._routes.get(path)
        if found is not None:
            return found
        return next((r for r in self._prefixes if path.startswith(r.path + "/")), None)
