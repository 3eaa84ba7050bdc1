"""How a front end names what its clients write, in the paths of the errors the shared planners raise
(`extensions.field`, `extensions.fields`; SPEC "Errors": an error names the path of the input).

The planners walk values in their API (GraphQL) names and build each error's path from the names in the value as they
go (`filter`, `title`, `like`); a front end whose clients write other names says how it names a field and a filter
operator, and how it renders a path: GraphQL keeps the names and dots the path (`filter.title.like`,
`input.tags.connect.0.id`), REST names the URL parameter or body member the client wrote (`filter[title][like]`,
`input.tags.connect[0].id`, `id` where GraphQL calls the key `rowId`).
"""

from collections.abc import Sequence
from typing import Protocol

from svc.model import Entity


class Naming(Protocol):
    """How one front end names fields, filter operators and paths."""

    def field(self, entity: Entity, name: str) -> str:
        """A member of one of the entity's inputs (a column, a relation, a key member), given by its API name."""
        ...

    def operator(self, name: str) -> str:
        """A filter operator (`equalTo`, `likeInsensitive`), given by its API name."""
        ...

    def render(self, path: Sequence[str | int]) -> str:
        """A path of named parts, as `extensions.field` carries it."""
        ...


class GraphqlNaming:
    """GraphQL's: the API names, parts joined with dots (list items too: `inputs.1.email`)."""

    def field(self, entity: Entity, name: str) -> str:
        return name

    def operator(self, name: str) -> str:
        return name

    def render(self, path: Sequence[str | int]) -> str:
        return ".".join(str(part) for part in path)


GRAPHQL_NAMING = GraphqlNaming()


def rendered(naming: Naming, path: Sequence[str | int]) -> tuple[str, ...]:
    """A path as the value checks (`bad_input`, `coerce`) take it: rendered as the front end names it, in one part
    (none: the check names no field)."""
    return (naming.render(path),) if path else ()
