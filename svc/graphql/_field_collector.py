"""Field collection (SPEC "GraphQL behaviour" -> Variables and fragments): named and inline fragments are flattened
into their parent's selection, `@skip`/`@include` are applied, and fields with the same response key are merged
(their sub-selections together). Validation has already refused cyclic fragments and conflicting merges.
"""

from collections.abc import Iterable, Mapping

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLIncludeDirective,
    GraphQLSkipDirective,
    InlineFragmentNode,
    SelectionNode,
    SelectionSetNode,
)
from graphql.execution.values import VariableValues, get_directive_values

#: Response key -> the field nodes under it (one or more, merged).
Collected = dict[str, list[FieldNode]]


class Collector:
    """Collects fields for one operation: its fragments, variables, and which types a type condition matches."""

    def __init__(
        self,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues,
        implements: Mapping[str, frozenset[str]],
    ) -> None:
        self._fragments = fragments
        self._variables = variables
        self._implements = implements

    def fields(self, type_name: str, selection_sets: Iterable[SelectionSetNode | None]) -> Collected:
        """The fields selected on an object of type `type_name` by these selection sets, by response key."""
        collected: Collected = {}
        for selection_set in selection_sets:
            if selection_set is not None:
                self._collect(type_name, selection_set, collected, set())
        return collected

    def subfields(self, type_name: str, nodes: list[FieldNode]) -> Collected:
        return self.fields(type_name, (node.selection_set for node in nodes))

    def _collect(self, type_name: str, selection_set: SelectionSetNode, into: Collected, seen: set[str]) -> None:
        for selection in selection_set.selections:
            if not self._included(selection):
                continue
            if isinstance(selection, FieldNode):
                key = selection.alias.value if selection.alias else selection.name.value
                into.setdefault(key, []).append(selection)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition.name.value if selection.type_condition else None
                if self._matches(type_name, condition):
                    self._collect(type_name, selection.selection_set, into, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self._fragments.get(name)
                if name in seen or fragment is None:
                    continue
                seen.add(name)
                if self._matches(type_name, fragment.type_condition.name.value):
                    self._collect(type_name, fragment.selection_set, into, seen)

    def _matches(self, type_name: str, condition: str | None) -> bool:
        return condition is None or condition == type_name or condition in self._implements.get(type_name, ())

    def _included(self, node: SelectionNode) -> bool:
        return included(node, self._variables)


def included(node: SelectionNode, variables: VariableValues) -> bool:
    """Whether `@skip`/`@include` keep the selection (under these variables)."""
    skip = get_directive_values(GraphQLSkipDirective, node, variables)
    if skip is not None and skip.get("if") is True:
        return False
    include = get_directive_values(GraphQLIncludeDirective, node, variables)
    return not (include is not None and include.get("if") is False)
