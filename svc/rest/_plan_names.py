"""How REST names what its clients write, for the shared planners' errors (`svc/plan`'s `Naming`; SPEC "REST API"
-> strictness: an error names the URL parameter or the body member). Fields by their REST names (`id` where GraphQL
calls the key `rowId`), filter operators by theirs (`like`, `ilike`, `lt`).

- `ParameterNames`: a URL parameter. A path's first part is the parameter as written, the others bracketed, and it
  ends at the parameter's value: at a filter operator (`filter[author][name][eq]`, never a list item or a range bound
  below it), or after `members` parts (`args[manager.doubleId][factor]`, `after`).
- `BODY`: a member of a JSON body, list items bracketed (`input.tags.connect[1].id`, `args.numbers[1]`).
"""

from collections.abc import Sequence

from svc.model import Entity
from svc.plan import Naming, render_path

from ._parse_inputs import OPERATORS

#: GraphQL filter operators to the REST names clients write (the first REST name of each; SPEC "List query
#: parameters").
_OPERATORS = {"containsElement": "contains"} | {
    graphql: rest for rest, graphql in reversed(OPERATORS.items()) if graphql not in OPERATORS
}


def _field(entity: Entity, name: str) -> str:
    field = entity.field(name)
    return field.rest_name if field is not None else name


class _Operator(str):
    """A filter operator in a path: a URL parameter's value lies below it, which its paths do not name."""

    __slots__ = ()


class ParameterNames:
    """A URL parameter's paths: its first part, then `members` parts (None: up to an operator) bracketed."""

    def __init__(self, members: int | None = None) -> None:
        self._members = members

    def field(self, entity: Entity, name: str) -> str:
        return _field(entity, name)

    def operator(self, name: str) -> str:
        return _Operator(_OPERATORS.get(name, name))

    def render(self, path: Sequence[str | int]) -> str:
        head, *rest = path
        text = str(head)
        for count, part in enumerate(rest):
            if count == self._members:
                break
            text += f"[{part}]"
            if isinstance(part, _Operator):
                break
        return text


class _BodyNames:
    """A JSON body's paths (`input.title`, `inputs[1].tags.connect[0].id`)."""

    def field(self, entity: Entity, name: str) -> str:
        return _field(entity, name)

    def operator(self, name: str) -> str:
        return name

    def render(self, path: Sequence[str | int]) -> str:
        return render_path(path)


#: Filters: `filter[title][like]`, `filter[books][title][like]`.
FILTERS: Naming = ParameterNames()
#: A computed field's arguments: `args[manager.doubleId][factor]`.
COMPUTED_ARGUMENTS: Naming = ParameterNames(members=1)
#: A parameter that is its own value: a page's (`after`), a function's argument given in the query string (`a`).
PARAMETERS: Naming = ParameterNames(members=0)
BODY: Naming = _BodyNames()
