"""Incremental delivery of `@defer` and `@stream` (SPEC "Endpoints": `/graphql` incremental delivery as
multipart/mixed): a whole query result split into an initial payload and the payloads that complete it.

The operation is still read with ONE statement, deferred fields and every list item included (so the parts are one
consistent snapshot and no deferred part costs a statement); the split happens while writing the answer:

- the initial payload holds every field selected outside a deferred fragment, and the first `initialCount` items of
  each streamed list, with `pending` naming what follows (`{id, path, label}`) and `hasNext: true`;
- then one payload per deferred fragment at each place it applies (`incremental: [{id, path, data}]`) and one per
  batch of a streamed list's remaining items (`incremental: [{id, path, items}]`, `path` ending with the first
  item's index), each naming what it `completed`, the last with `hasNext: false`.

The entries carry both the current format's `id` (graphql-js 17 / GraphQL incremental delivery RFC: `pending`,
`completed`) and the earlier format's `path` (Apollo Client 3, `deferSpec=20220824`), so either reader merges them.
As the RFC allows, a fragment deferred inside deferred or streamed data, a field both deferred and not, and a
fragment deferred on an abstract type whose runtime type is not selected (`__typename`) are delivered with their
parent instead.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from graphql import (
    DirectiveNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLDeferDirective,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLStreamDirective,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionNode,
    SelectionSetNode,
    get_named_type,
)
from graphql.execution.values import VariableValues, get_directive_values
from graphql.language.visitor import REMOVE, Visitor, VisitorAction, visit

from ._field_collector import included

#: Streamed items per payload after the initial ones.
STREAM_BATCH = 10

Path = tuple[str | int, ...]


def uses_incremental_delivery(document_text: str) -> bool:
    """Whether a document may defer or stream (a cheap test before any walking)."""
    return "@defer" in document_text or "@stream" in document_text


class _Undeferred(Visitor):
    def enter_directive(self, node: DirectiveNode, *_: object) -> VisitorAction:
        return REMOVE if node.name.value in ("defer", "stream") else None


def without_incremental_directives(document: DocumentNode) -> DocumentNode:
    """The document with `@defer` and `@stream` removed: graphql-core answers it whole (introspection), and the
    split is made here like any other result's."""
    return visit(document, _Undeferred())


def incremental_payloads(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    variables: VariableValues,
    result: Mapping[str, Any],
) -> list[bytes] | None:
    """The payloads of a query's result (`{data, errors?}`), initial first; None when nothing is deferred or
    streamed (or `data` is null), so the result goes out whole."""
    data = result.get("data")
    root = schema.query_type
    if not isinstance(data, dict) or root is None:
        return None
    splitter = _Splitter(schema, fragments, variables)
    initial = splitter.object(root, [operation.selection_set], data, ())
    if not splitter.pending:
        return None
    first: dict[str, Any] = {}
    if result.get("errors"):
        first["errors"] = result["errors"]
    first.update(data=initial, pending=splitter.pending, hasNext=True)
    payloads = [first]
    for number, (entry, completed) in enumerate(splitter.subsequent, start=1):
        payload: dict[str, Any] = {"incremental": [entry]} if entry is not None else {}
        if completed is not None:
            payload["completed"] = [{"id": completed}]
        payload["hasNext"] = number < len(splitter.subsequent)
        payloads.append(payload)
    return [json.dumps(p, separators=(",", ":"), ensure_ascii=False).encode() for p in payloads]


@attrs.define
class _Fields:
    """An object's selected fields by response key; the keys selected only in a deferred fragment, by the fragment's
    number; and the fragments' labels by number."""

    nodes: dict[str, list[FieldNode]] = attrs.field(factory=dict)
    deferred: dict[str, int] = attrs.field(factory=dict)
    labels: list[str | None] = attrs.field(factory=list)


class _Splitter:
    def __init__(
        self, schema: GraphQLSchema, fragments: Mapping[str, FragmentDefinitionNode], variables: VariableValues
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.pending: list[dict[str, Any]] = []
        #: (incremental entry or None, the pending id it completes or None), in delivery order.
        self.subsequent: list[tuple[dict[str, Any] | None, str | None]] = []

    def _pend(self, path: Path, label: str | None) -> str:
        id_ = str(len(self.pending))
        self.pending.append({"id": id_, "path": list(path), **({"label": label} if label else {})})
        return id_

    def object(
        self, type_: GraphQLObjectType, selection_sets: Sequence[SelectionSetNode], value: dict[str, Any], path: Path
    ) -> dict[str, Any]:
        """The object's initial members; its deferred members become payloads at `path`."""
        fields = _Fields()
        for selection_set in selection_sets:
            self._collect(type_.name, selection_set, fields, fragment=None, seen=frozenset())
        initial: dict[str, Any] = {}
        later: dict[int, dict[str, Any]] = {}
        for key, nodes in fields.nodes.items():
            if key not in value:
                continue
            if key in fields.deferred:
                later.setdefault(fields.deferred[key], {})[key] = value[key]
                continue
            name = nodes[0].name.value
            definition = type_.fields.get(name)
            if definition is None:  # __typename
                initial[key] = value[key]
            else:
                initial[key] = self.value(definition.type, nodes, value[key], (*path, key))
        for number, members in later.items():
            id_ = self._pend(path, fields.labels[number])
            self.subsequent.append(({"id": id_, "path": list(path), "data": members}, id_))
        return initial

    def value(self, type_: GraphQLOutputType, nodes: list[FieldNode], value: Any, path: Path) -> Any:
        if isinstance(type_, GraphQLNonNull):
            type_ = type_.of_type
        if value is None:
            return None
        if isinstance(type_, GraphQLList):
            return self._list(type_.of_type, nodes, value, path)
        named = get_named_type(type_)
        if not isinstance(value, dict):
            return value
        runtime = named if isinstance(named, GraphQLObjectType) else self._runtime(value)
        if runtime is None:  # an abstract type whose runtime type is not in the data: delivered whole
            return value
        return self.object(runtime, [n.selection_set for n in nodes if n.selection_set], value, path)

    def _list(self, item_type: GraphQLOutputType, nodes: list[FieldNode], items: Any, path: Path) -> Any:
        if not isinstance(items, list):
            return items
        stream = _active(GraphQLStreamDirective, nodes[0], self.variables)
        count = len(items)
        if stream is not None:
            count = max(0, int(stream.get("initialCount") or 0))
        initial = [self.value(item_type, nodes, item, (*path, i)) for i, item in enumerate(items[:count])]
        if stream is not None:
            id_ = self._pend(path, stream.get("label"))
            rest = items[count:]
            if not rest:  # nothing left to stream: only its completion follows
                self.subsequent.append((None, id_))
            for start in range(0, len(rest), STREAM_BATCH):
                batch = rest[start : start + STREAM_BATCH]
                done = id_ if start + STREAM_BATCH >= len(rest) else None
                self.subsequent.append(({"id": id_, "path": [*path, count + start], "items": batch}, done))
        return initial

    def _runtime(self, value: dict[str, Any]) -> GraphQLObjectType | None:
        name = value.get("__typename")
        found = self.schema.type_map.get(name) if isinstance(name, str) else None
        return found if isinstance(found, GraphQLObjectType) else None

    def _collect(
        self,
        type_name: str,
        selection_set: SelectionSetNode,
        into: "_Fields",
        *,
        fragment: int | None,
        seen: frozenset[str],
    ) -> None:
        """Fields by response key as the planner's collector merges them, noting the keys selected only inside a
        deferred fragment (the first such fragment's number)."""
        for selection in selection_set.selections:
            if not included(selection, self.variables):
                continue
            if isinstance(selection, FieldNode):
                key = selection.alias.value if selection.alias else selection.name.value
                if key not in into.nodes:
                    into.nodes[key] = []
                    if fragment is not None:
                        into.deferred[key] = fragment
                elif fragment is None:
                    into.deferred.pop(key, None)  # also selected outside a deferred fragment: delivered now
                into.nodes[key].append(selection)
                continue
            if isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition.name.value if selection.type_condition else None
                inner = selection.selection_set
            else:
                assert isinstance(selection, FragmentSpreadNode)
                name = selection.name.value
                definition = self.fragments.get(name)
                if name in seen or definition is None:
                    continue
                seen = seen | {name}
                condition, inner = definition.type_condition.name.value, definition.selection_set
            if not self._matches(type_name, condition):
                continue
            number = fragment
            defer = _active(GraphQLDeferDirective, selection, self.variables)
            if defer is not None and fragment is None:
                into.labels.append(defer.get("label"))
                number = len(into.labels) - 1
            self._collect(type_name, inner, into, fragment=number, seen=seen)

    def _matches(self, type_name: str, condition: str | None) -> bool:
        if condition is None or condition == type_name:
            return True
        abstract, found = self.schema.type_map.get(condition), self.schema.type_map.get(type_name)
        return (
            isinstance(abstract, GraphQLInterfaceType | GraphQLUnionType)
            and isinstance(found, GraphQLObjectType)
            and self.schema.is_sub_type(abstract, found)
        )


def _active(directive: Any, node: SelectionNode, variables: VariableValues) -> dict[str, Any] | None:
    """The directive's arguments when it is on the node and its `if` is not false."""
    values = get_directive_values(directive, node, variables)
    if values is None or values.get("if") is False:
        return None
    return values
