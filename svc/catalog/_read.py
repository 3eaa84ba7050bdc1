"""The introspection query and the conversion of its result into `Catalog` facts.

ARCHITECTURE.md: the catalog never imports the database layer; it gives the query and takes its result (a JSON
document), so it can be tested from recorded JSON.
"""

from collections.abc import Mapping
from importlib import resources
from typing import Any

from ._facts import Catalog, Column, Relation, RelationKind

#: Run with `{"schemas": [...]}`; returns one row with one JSON value.
INTROSPECTION_QUERY = resources.files(__package__).joinpath("introspect.sql").read_text(encoding="utf-8")


def read_catalog(document: Mapping[str, Any]) -> Catalog:
    """Facts from the introspection query's JSON document."""
    return Catalog(
        server_version_num=document["server_version_num"],
        schemas=tuple(document["schemas"]),
        relations=tuple(_relation(item) for item in document["relations"]),
    )


def _relation(item: Mapping[str, Any]) -> Relation:
    return Relation(
        oid=item["oid"],
        schema=item["schema"],
        name=item["name"],
        kind=RelationKind(item["kind"]),
        comment=item["comment"],
        columns=tuple(Column(**column) for column in item["columns"]),
    )
