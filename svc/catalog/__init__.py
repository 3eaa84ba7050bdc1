"""The database catalog as frozen facts (layer 2): the query to run and the facts its result gives."""

from ._facts import Catalog, Column, Relation, RelationKind
from ._read import INTROSPECTION_QUERY, read_catalog

__all__ = ["INTROSPECTION_QUERY", "Catalog", "Column", "Relation", "RelationKind", "read_catalog"]
