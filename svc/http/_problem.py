"""RFC 9457 problem documents for typed errors (SPEC "Other fixed shapes", "Errors" -> REST).

`type` is always `about:blank`; `code` is the typed code; `requestId` always present; extension members (`limit`,
`actual`, `fields`, ...) are copied as they are, but for `type`: a typed error's `type` names the GraphQL enum its
code belongs to (`CustomerErrorCode`), which a problem document carries as `codeType`. Only an application's own
error (SQLSTATE PTxxx, `errors.map`) sets the problem's `type` (SPEC "Custom SQL errors").
"""

from typing import Any

from svc.errors import Code, SvcError

from ._messages import Request, Response

PROBLEM_JSON = "application/problem+json"


def problem(error: SvcError, request: Request, *, headers: tuple[tuple[str, str], ...] = ()) -> Response:
    extensions = dict(error.extensions)
    if error.code is not Code.CUSTOM and "type" in extensions:
        extensions["codeType"] = extensions.pop("type")
    document = {
        "type": "about:blank",
        "title": error.title,
        "status": error.status,
        "detail": error.message,
        "instance": request.path,
        "code": error.code_name,
        "requestId": request.request_id,
        **extensions,
    }
    response = Response.json(document, error.status, headers=(*error.headers, *headers))
    return Response(response.status, response.body, PROBLEM_JSON, response.headers)


#: GraphQL over HTTP's own response media type.
GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"


def graphql_media_type(request: Request) -> str:
    """`application/graphql-response+json` when the request's `Accept` ranks it at least as high as
    `application/json` (GraphQL over HTTP), else `application/json` (also for no `Accept` and wildcards: the
    legacy answer, as that specification asks)."""
    accept = request.header("accept")
    if not accept or GRAPHQL_RESPONSE_JSON not in accept.lower():
        return "application/json"
    graphql, plain = 0.0, 0.0
    for item in accept.lower().split(","):
        media, *parameters = (part.strip() for part in item.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media == GRAPHQL_RESPONSE_JSON:
            graphql = max(graphql, quality)
        elif media in ("application/json", "application/*", "*/*"):
            plain = max(plain, quality)
    return GRAPHQL_RESPONSE_JSON if graphql > 0 and graphql >= plain else "application/json"


def graphql_error(error: SvcError, request: Request, *, headers: tuple[tuple[str, str], ...] = ()) -> Response:
    """A request refused before GraphQL runs (authentication, rate limits, a malformed request): a GraphQL response
    with `data` absent (GraphQL over HTTP), the error's status, in the media type the client accepts."""
    response = Response.json(
        {"errors": [graphql_error_entry(error, request.request_id)]}, error.status, headers=headers
    )
    return Response(response.status, response.body, graphql_media_type(request), response.headers)


def graphql_error_entry(error: SvcError, request_id: str) -> dict[str, Any]:
    """One GraphQL error of a typed error the edge answers itself (SPEC "Errors" -> GraphQL)."""
    extensions = {"code": error.code_name, "requestId": request_id, **error.extensions}
    return {"message": error.message, "extensions": extensions}


def internal_error(request: Request, exc: BaseException, *, full_detail: bool) -> Response:
    """SPEC "Masking": masked answers say only that it failed and under which request id it was logged."""
    detail = (
        f"{type(exc).__name__}: {exc}"
        if full_detail
        else f"an internal error occurred; it was logged under request id {request.request_id}"
    )
    return problem(SvcError(Code.INTERNAL_SERVER_ERROR, detail), request)
