"""The one run path both APIs call (layer 6): plans are compiled (once per shape) and executed; reads come back as
the database's JSON texts, never decoded; writes run as a sequence of statements in one transaction, their database
errors typed by the catalog (ARCHITECTURE.md, "The one idea")."""

from ._errors import application_error
from ._mutations import MutationFailed, Mutations
from ._reads import Pipeline, StatementCache

__all__ = ["MutationFailed", "Mutations", "Pipeline", "StatementCache", "application_error"]
