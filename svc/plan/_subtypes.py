"""The outputs of a table-per-type parent's rows (issue 23): the name of each row's concrete type and its subtypes'
columns, read through one left join per subtype table in the row's own statement."""

from svc.model import Entity, Subtype

from ._ir import Link, SubtypeJoin, Table, TypeNameOutput


def subtype_join(subtype: Subtype) -> SubtypeJoin:
    return SubtypeJoin(Table(subtype.target.schema, subtype.target.table), Link(subtype.pairs), subtype.type_name)


def type_name_output(entity: Entity, key: str) -> TypeNameOutput:
    """`__typename` (REST) or the `typename` field (GraphQL) of the entity's rows."""
    return TypeNameOutput(key, entity.type_name, tuple(subtype_join(s) for s in entity.subtypes))
