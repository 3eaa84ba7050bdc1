"""The parse and validate stage (SPEC "GraphQL behaviour": parse, cached by document text): a document's text into
its validated AST, or the error that refuses it, kept so a repeated document costs one lookup either way (the
`document` cache of `svc_cache_requests_total`).

A syntax error (graphql-core's `GraphQLSyntaxError`, whatever its message says) is GRAPHQL_PARSE_FAILED; a document
the schema's validation rules refuse is GRAPHQL_VALIDATION_FAILED.
"""

import functools

import attrs
from graphql import DocumentNode, GraphQLError, GraphQLSchema, GraphQLSyntaxError, parse, validate

from svc.errors import Code, SvcError
from svc.telemetry import cache_lookup, cache_miss

DOCUMENT_CACHE_SIZE = 500
#: Parsing stops past this many tokens: a huge document costs no more than this to refuse.
MAX_TOKENS = 50_000
#: Messages of a refused document joined into its error's message, at most.
_MESSAGES = 10


@attrs.frozen
class _Refused:
    """A document that is not run: the stage that refused it (its code) and graphql-core's reasons."""

    code: Code
    errors: tuple[GraphQLError, ...]

    def error(self) -> SvcError:
        """A fresh error each time (raising one kept instance would grow its traceback with every request)."""
        errors = self.errors
        message = errors[0].message if len(errors) == 1 else "; ".join(e.message for e in errors[:_MESSAGES])
        locations = [{"line": loc.line, "column": loc.column} for e in errors for loc in (e.locations or ())]
        return SvcError(self.code, message, extensions={"locations": locations} if locations else {})


class DocumentParser:
    """Parsed and validated documents of one schema by their text, least recently used out."""

    def __init__(self, schema: GraphQLSchema, size: int = DOCUMENT_CACHE_SIZE) -> None:
        self._schema = schema
        self._documents = functools.lru_cache(maxsize=size)(self._read)

    def parse(self, text: str) -> DocumentNode:
        """The document of `text`, parsed and validated; raises SvcError when it is refused."""
        cache_lookup("document")
        entry = self._documents(text)
        if isinstance(entry, _Refused):
            raise entry.error()
        return entry

    def _read(self, text: str) -> DocumentNode | _Refused:
        cache_miss("document")
        try:
            document = parse(text, no_location=False, max_tokens=MAX_TOKENS)
        except GraphQLSyntaxError as error:
            return _Refused(Code.GRAPHQL_PARSE_FAILED, (error,))
        errors = validate(self._schema, document)
        if errors:
            return _Refused(Code.GRAPHQL_VALIDATION_FAILED, tuple(errors))
        return document
