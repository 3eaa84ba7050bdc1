"""The request and response values of the REST front end (the HTTP layer builds the one and sends the other)."""

from collections.abc import Mapping, Sequence

import attrs

from svc.pipeline import Context, Session

JSON = "application/json"


@attrs.frozen
class RestRequest:
    method: str  # HEAD is answered as GET
    raw_path: str  # as sent (percent-encoded)
    query_string: bytes
    headers: Mapping[str, str]  # lower-case names
    request_id: str
    body: bytes = b""
    session: Session | None = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def context(self, resource: str) -> Context:
        """Whom the request's statements run for; their comments name the method and the resource."""
        return Context(self.request_id, self.session, {"api": "rest", "method": self.method, "resource": resource})


@attrs.frozen
class RestResponse:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


def json_response(status: int, body: bytes, headers: Sequence[tuple[str, str]] = ()) -> RestResponse:
    return RestResponse(status, body, JSON, tuple(headers))
