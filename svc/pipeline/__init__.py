"""The one run path both APIs call (layer 6): plans are compiled (once per shape) and executed; reads come back as
the database's JSON texts, never decoded; writes run as a sequence of statements in one transaction, their database
errors typed by the catalog (ARCHITECTURE.md, "The one idea")."""

from ._errors import answer_error, application_error
from ._mutations import MutationFailed, Mutations, Outcome, Payload
from ._reads import Pipeline, StatementCache

__all__ = [
    "answer_error",
    "MutationFailed",
    "Outcome",
    "Payload",
    "Mutations",
    "Pipeline",
    "StatementCache",
    "application_error",
]
