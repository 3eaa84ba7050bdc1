"""The closed set of typed errors: each code with its HTTP status and whether a client may retry.

SPEC "Errors": GraphQL and REST share these codes; the edges (`svc/http/`, later `svc/graphql/` and
`svc/rest/`) render them as a GraphQL error or an RFC 9457 problem document. Nothing else invents an error
format. Codes derived from the catalog (`EMAIL_TAKEN`, `AUTHOR_NOT_FOUND`, ...) keep a `Code` for their kind and
carry their own name in `code_name`; every other code is a member of `Code`.
"""

import enum
from collections.abc import Mapping, Sequence
from typing import Any


class Code(enum.Enum):
    """A fixed error code: its HTTP status and a short title for problem documents."""

    BAD_USER_INPUT = (400, "Bad Request")
    GRAPHQL_PARSE_FAILED = (400, "GraphQL Parse Failed")
    GRAPHQL_VALIDATION_FAILED = (400, "GraphQL Validation Failed")
    FILTER_REQUIRED = (400, "Filter Required")
    PAGE_SIZE_EXCEEDED = (400, "Page Size Exceeded")
    DEPTH_LIMIT_EXCEEDED = (400, "Depth Limit Exceeded")
    COST_LIMIT_EXCEEDED = (400, "Cost Limit Exceeded")
    INTROSPECTION_DISABLED = (400, "Introspection Disabled")
    PERSISTED_QUERY_HASH_MISMATCH = (400, "Persisted Query Hash Mismatch")
    PERSISTED_QUERY_NOT_SUPPORTED = (400, "Persisted Query Not Supported")
    PERSISTED_QUERY_NOT_FOUND = (200, "Persisted Query Not Found")
    UNAUTHENTICATED = (401, "Unauthorized")
    PERMISSION_DENIED = (403, "Forbidden")
    OPERATION_NOT_ALLOWED = (403, "Operation Not Allowed")
    NOT_FOUND = (404, "Not Found")
    METHOD_NOT_ALLOWED = (405, "Method Not Allowed")
    NOT_ACCEPTABLE = (406, "Not Acceptable")
    CONFLICT = (409, "Conflict")  # `<COLUMNS>_TAKEN`, `<COLUMNS>_CONFLICT`, foreign keys (their own names)
    STALE_VERSION = (412, "Precondition Failed")
    BULK_LIMIT_EXCEEDED = (413, "Bulk Limit Exceeded")
    PAYLOAD_TOO_LARGE = (413, "Content Too Large")
    UNSUPPORTED_MEDIA_TYPE = (415, "Unsupported Media Type")
    RANGE_NOT_SATISFIABLE = (416, "Range Not Satisfiable")
    INVALID = (422, "Unprocessable Content")  # CHECK, NOT NULL, too long, out of range (their own names)
    PATCH_FAILED = (422, "Patch Failed")
    TOO_MANY_GROUPS = (422, "Too Many Groups")
    RATE_LIMITED = (429, "Too Many Requests")
    TOO_MANY_SUBSCRIPTIONS = (429, "Too Many Subscriptions")
    CUSTOM = (400, "Application Error")  # raised by SQL with SQLSTATE PTxxx, or named by `errors.map`
    INTERNAL_SERVER_ERROR = (500, "Internal Server Error")
    DATABASE_UNAVAILABLE = (503, "Database Unavailable")
    SCHEMA_CHANGED = (503, "Schema Changed")
    STATEMENT_TIMEOUT = (503, "Statement Timeout")
    SOURCE_UNAVAILABLE = (503, "Source Unavailable")

    def __init__(self, status: int, title: str) -> None:
        self.status = status
        self.title = title


#: Codes a client may retry as they are (SPEC "Retryable (HTTP 503)").
RETRYABLE = frozenset({Code.DATABASE_UNAVAILABLE, Code.SCHEMA_CHANGED})


def first_line(exc: BaseException) -> str:
    """What a log line or a message says of an exception: the first line of its text, else its type's name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class SvcError(Exception):
    """An error the service answers with: a code, an HTTP status, a message and extension members.

    `extensions` carries the spec's extra members (`limit`, `actual`, `retryAfter`, `fields`, `field`, `type`,
    `validationErrors`); both renderers copy them as they are. `headers` go with an HTTP answer of the error.
    """

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        extensions: Mapping[str, Any] | None = None,
        code_name: str | None = None,
        status: int | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extensions: Mapping[str, Any] = dict(extensions or {})
        self.code_name = code_name or code.name
        self.status = status if status is not None else code.status
        #: HTTP headers the answer carries (`Allow` of a 405, `Content-Range` of a 416).
        self.headers = tuple(headers)

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    @property
    def title(self) -> str:
        return self.code.title

    def __repr__(self) -> str:
        return f"SvcError({self.code_name}, {self.message!r})"
