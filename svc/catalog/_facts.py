"""Frozen facts about the database, as read from its catalog. No API names here: those are the model's.

This first slice holds the exposed schemas, their relations (tables, partitioned parents, views, materialized
views, foreign tables; partitions are left out) and columns. Keys, constraints, functions, policies and grants
join it with the catalog issue.
"""

import enum

import attrs


class RelationKind(enum.Enum):
    TABLE = "r"
    PARTITIONED_TABLE = "p"
    VIEW = "v"
    MATERIALIZED_VIEW = "m"
    FOREIGN_TABLE = "f"


@attrs.frozen
class Column:
    name: str
    position: int
    type: str
    type_oid: int
    not_null: bool
    has_default: bool
    identity: str | None  # 'a' (always), 'd' (by default) or None
    generated: bool
    comment: str | None


@attrs.frozen
class Relation:
    oid: int
    schema: str
    name: str
    kind: RelationKind
    comment: str | None
    columns: tuple[Column, ...]


@attrs.frozen
class Catalog:
    server_version_num: int
    schemas: tuple[str, ...]
    relations: tuple[Relation, ...]

    def relation(self, schema: str, name: str) -> Relation | None:
        return next((r for r in self.relations if r.schema == schema and r.name == name), None)
