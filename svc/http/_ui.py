"""The interactive UI pages (SPEC "Endpoints" -> service-level): GraphiQL at `/graphiql`, Scalar at `/scalar`.

GraphiQL is served when `graphql.ui` is on and posts to `/graphql` (so `graphql.enabled` must be on too); Scalar is
served when `openapi.ui` and `openapi.enabled` are on and shows the document at `openapi.path`. Otherwise both are
404. Pages and assets are files of this package (`svc/http/ui/`, written by `ops/ui/build.sh`): nothing is fetched
from anywhere but the service. Each asset has its own exact route under the page's path (`/graphiql/<file>`).

Assets are stored gzip-compressed and sent as stored (`Content-Encoding: gzip`) when the request's
`Accept-Encoding` allows gzip, else decompressed once per process and kept. Their names carry a hash of their
content, so browsers may keep them for a year; the pages are `no-cache`. UI routes take no token and are never
rate-limited (`api=False`), need no schema snapshot, and the strict preset leaves the content-security policy and
the frame header off them (`ui=True`, SPEC "Operations").
"""

import gzip
import html
from importlib import resources
from importlib.resources.abc import Traversable
from string import Template

import attrs
import trio

from svc.config import Config

from ._messages import Request, Response
from ._routing import Route

#: What the build writes: a page `<ui>.html` and its assets in `<ui>/`.
_FILES = resources.files("svc.http") / "ui"

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".ttf": "font/ttf",
}
#: Hashed names never change content: no revalidation for a year.
CACHE_ASSET = "public, max-age=31536000, immutable"
#: A page names the current assets, so it is revalidated on every load.
CACHE_PAGE = "no-cache"


class UiRoutes:
    def __init__(self, config: Config) -> None:
        self._config = config

    def routes(self) -> list[Route]:
        """The enabled UIs' routes: the page, then one route per asset. Reads the files once, here."""
        graphql, openapi = self._config.graphql, self._config.openapi
        routes: list[Route] = []
        if graphql.ui and graphql.enabled:
            routes += _ui("graphiql", _read(_FILES / "graphiql.html"))
        if openapi.ui and openapi.enabled:
            # A root-relative URL (no leading slash) resolves against the page's own URL, also behind a path prefix.
            document = html.escape(openapi.path.lstrip("/"), quote=True)
            page = Template(_read(_FILES / "scalar.html").decode()).substitute(openapi_url=document)
            routes += _ui("scalar", page.encode())
        return routes


def _ui(name: str, page: bytes) -> list[Route]:
    routes = [_route(f"/{name}", _Asset(_CONTENT_TYPES[".html"], CACHE_PAGE, plain=page))]
    for file in sorted((_FILES / name).iterdir(), key=lambda file: file.name):
        asset_name = file.name.removesuffix(".gz")
        asset = _Asset(_content_type(asset_name), CACHE_ASSET)
        if file.name.endswith(".gz"):
            asset.gzipped = _read(file)
        else:
            asset.plain = _read(file)
        routes.append(_route(f"/{name}/{asset_name}", asset))
    return routes


def _route(path: str, asset: "_Asset") -> Route:
    return Route(path, frozenset({"GET"}), asset.serve, ui=True, needs_snapshot=False, api=False)


@attrs.define
class _Asset:
    """One file of a UI: its media type, how long to cache it, and its bytes as stored (gzip or plain)."""

    content_type: str
    cache_control: str
    gzipped: bytes | None = None
    #: The plain bytes: as stored, or decompressed from `gzipped` the first time a client does not accept gzip.
    plain: bytes | None = None

    async def serve(self, request: Request) -> Response:
        headers = [("Cache-Control", self.cache_control)]
        if self.gzipped is None:
            assert self.plain is not None
            return Response(200, self.plain, self.content_type, headers)
        headers.append(("Vary", "Accept-Encoding"))
        if accepts_gzip(request.header("accept-encoding")):
            return Response(200, self.gzipped, self.content_type, [*headers, ("Content-Encoding", "gzip")])
        if self.plain is None:
            # Off the event loop: the largest bundle takes tens of milliseconds to decompress.
            self.plain = await trio.to_thread.run_sync(gzip.decompress, self.gzipped)
        return Response(200, self.plain, self.content_type, headers)


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether `Accept-Encoding` allows gzip (RFC 9110, 12.5.3): `gzip` (or `x-gzip`) with a weight above 0, or
    else `*` with one. Without the header the body is sent as it is: clients that send none (curl, scripts) want
    what they asked for, not bytes they must decompress."""
    if not accept_encoding:
        return False
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        coding, *parameters = (part.strip() for part in item.split(";"))
        weights[coding.lower()] = _weight(parameters)
    weight = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return weight > 0


def _weight(parameters: list[str]) -> float:
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0  # a malformed weight refuses the coding rather than guessing
    return 1.0


def _content_type(name: str) -> str:
    suffix = name[name.rfind(".") :]
    if suffix not in _CONTENT_TYPES:
        raise ValueError(f"svc/http/ui: no media type for {name}")
    return _CONTENT_TYPES[suffix]


def _read(file: Traversable) -> bytes:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"the UI file {file} is missing from the installed package") from None
