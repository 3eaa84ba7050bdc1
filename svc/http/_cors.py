"""Cross-origin resource sharing per `server.cors` (SPEC "Configuration", "Runtime modes").

An origin is allowed when listed or when the list holds `*` (dev's default; prod allows none unless listed).
Credentials need explicit origins (checked when the configuration loads). Preflight requests (OPTIONS with
`Access-Control-Request-Method`) are answered here with 204; an origin that is not allowed gets no CORS headers,
so the browser refuses. By default every header the service sends is exposed to scripts.
"""

from svc.config import CorsConfig

#: Every response header the service sends that scripts may want (CORS-safelisted ones need no exposing).
SERVICE_HEADERS = (
    "X-Request-Id", "Server-Timing", "ETag", "Location", "Link", "Content-Range", "Accept-Ranges", "X-Total-Count",
    "X-Total-Count-Estimate", "Preference-Applied", "X-Next-Cursor", "X-Previous-Cursor", "X-Affected-Count",
    "X-WAL-Position", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "WWW-Authenticate",
    "X-Debug-SQL", "X-Debug-Explain",
)  # fmt: skip


class CorsPolicy:
    def __init__(self, config: CorsConfig) -> None:
        self._any = "*" in config.origins
        self._origins = frozenset(origin.rstrip("/") for origin in config.origins if origin != "*")
        self._credentials = config.credentials
        self._methods = ", ".join(config.methods)
        self._headers = ", ".join(config.headers)
        self._expose = ", ".join(config.expose_headers if config.expose_headers is not None else SERVICE_HEADERS)
        self._max_age = str(config.max_age)

    def allows(self, origin: str) -> bool:
        return self._any or origin.rstrip("/") in self._origins

    def is_preflight(self, method: str, origin: str | None, requested_method: str | None) -> bool:
        return method == "OPTIONS" and origin is not None and requested_method is not None

    def preflight_headers(self, origin: str) -> list[tuple[str, str]]:
        if not self.allows(origin):
            return [("Vary", "Origin")]
        return [
            *self._origin_headers(origin),
            ("Access-Control-Allow-Methods", self._methods),
            ("Access-Control-Allow-Headers", self._headers),
            ("Access-Control-Max-Age", self._max_age),
        ]

    def response_headers(self, origin: str | None) -> list[tuple[str, str]]:
        if not self._any and not self._origins:
            return []  # no cross-origin access at all: answers do not depend on Origin
        if origin is None:
            return [] if self._any and not self._credentials else [("Vary", "Origin")]
        if not self.allows(origin):
            return [("Vary", "Origin")]
        return [*self._origin_headers(origin), ("Access-Control-Expose-Headers", self._expose)]

    def _origin_headers(self, origin: str) -> list[tuple[str, str]]:
        if self._any and not self._credentials:
            return [("Access-Control-Allow-Origin", "*")]
        headers = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        if self._credentials:
            headers.append(("Access-Control-Allow-Credentials", "true"))
        return headers
