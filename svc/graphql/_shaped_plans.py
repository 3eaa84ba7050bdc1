"""Query plans kept per (document, operation, variable shape) (ARCHITECTURE "Shape-keyed SQL").

A request's variables have a shape: their structure (which members are given, null or not, list lengths), the
types of their scalar values, and the values of Booleans, enums and JSON. Its scalar values (strings and numbers)
are its leaves. A query is planned once per shape with the leaves watched (`svc.plan._watched`); the leaves the
plan only binds (key lookups, condition members, filter operands, function arguments, search text) are the plan's
parameters, and every other leaf (a page size, a cursor, a global ID the planner decodes) joins the key by value.
A later request of the same shape and the same values of those leaves gets the kept plan with its own values
converted by the plan's binders: the planner does not run again.
"""

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar, cast

import attrs
from graphql import (
    GraphQLBoolean,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    OperationDefinitionNode,
)
from graphql.execution.values import VariableValues
from graphql.language import FragmentDefinitionNode
from graphql.utilities import type_from_ast

from svc.errors import SvcError
from svc.plan import Binder, Params, ReadPlan, Watch, plain, watched_sources

from ._query_planner import PlannedQuery, QueryPlanner

K = TypeVar("K")
V = TypeVar("V")

#: Scalars whose values are data of their own (any JSON): always part of the key.
_OPAQUE_SCALARS = frozenset({"JSON"})

#: (document text, operation name, variables' shape).
_ShapeKey = tuple[str, str | None, Hashable]


@attrs.frozen
class _Kept:
    """A plan of one shape and key values, and how the bound leaves' values become its parameters."""

    planned: PlannedQuery
    binders: tuple[Binder, ...]

    def bound(self, leaves: list[Any]) -> PlannedQuery:
        values = list(self.planned.params.values)
        for index, source, convert in self.binders:
            values[index] = convert(leaves[source] if isinstance(source, int) else [leaves[i] for i in source])
        return attrs.evolve(self.planned, params=Params(values))


class ShapedPlans:
    """The query plans of one snapshot's endpoint by shape, the least recently used out past `size`."""

    def __init__(self, schema: GraphQLSchema, planner: QueryPlanner, size: int) -> None:
        self.schema = schema
        self.planner = planner
        self.size = size
        #: Which leaves key a shape's plans (their numbers); None: the shape's plans are not kept.
        self._shapes: OrderedDict[_ShapeKey, tuple[int, ...] | None] = OrderedDict()
        self._plans: OrderedDict[tuple[_ShapeKey, tuple[Any, ...]], _Kept] = OrderedDict()

    def planned(
        self,
        text: str,
        operation: OperationDefinitionNode,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues,
    ) -> PlannedQuery:
        """The plan of `operation` for these (coerced) variables, kept or planned."""
        types = self._types(operation)
        leaves: list[Any] = []
        shape: _ShapeKey = (
            text,
            operation.name.value if operation.name else None,
            tuple(_skeleton(variables.coerced.get(name), type_, leaves) for name, type_ in types),
        )
        keyed = touch(self._shapes, shape)
        if shape in self._shapes and keyed is None:
            return self.planner.plan(operation, fragments, variables)
        if keyed is not None:
            kept = touch(self._plans, (shape, tuple(leaves[i] for i in keyed)))
            if kept is not None:
                try:
                    return kept.bound(leaves)
                except SvcError:
                    pass  # planned below, which raises the error where the planner names its field
        watch = Watch()
        given = variables.coerced
        stand_ins = {name: _stand_in(given[name], type_, watch) for name, type_ in types if name in given}
        planned = self.planner.plan(operation, fragments, variables._replace(coerced={**given, **stand_ins}))
        if _holds_stand_ins(planned.plan, watch):  # its values are its own: planned for each request
            keep(self._shapes, shape, None, self.size)
            return self.planner.plan(operation, fragments, variables)
        found_keyed, binders = _parameters(planned.params, watch)
        if keyed is None:
            keyed = found_keyed
            keep(self._shapes, shape, keyed if binders else None, self.size)
        if binders and found_keyed == keyed:
            keep(self._plans, (shape, tuple(leaves[i] for i in keyed)), _Kept(planned, binders), self.size)
        return planned

    def _types(self, operation: OperationDefinitionNode) -> list[tuple[str, GraphQLInputType]]:
        """The operation's variables and their input types (the document is valid: every type exists)."""
        return [
            (definition.variable.name.value, cast(GraphQLInputType, type_from_ast(self.schema, definition.type)))
            for definition in operation.variable_definitions or ()
        ]


def _holds_stand_ins(plan: ReadPlan, watch: Watch) -> bool:
    """Whether `plan` holds a watched value itself (hashing a plan reads every value it holds)."""
    looked, watch.looked = watch.looked, set()
    hash(plan)
    held, watch.looked = watch.looked, looked
    return bool(held)


def _parameters(params: Params, watch: Watch) -> tuple[tuple[int, ...], tuple[Binder, ...]]:
    """After a watched planning run: the numbers of the leaves that key the plan, and the binders of the others.
    The run's parameters are made plain. A leaf is a parameter when the plan bound it and nothing looked at it, nor
    holds it in a parameter of its own."""
    bound_at = {index for index, _, _ in params.binders}
    held = set()
    for index, value in enumerate(params.values):
        if index not in bound_at:
            held.update(watched_sources(value))
        params.values[index] = plain(value)
    parameters = {i for _, source, _ in params.binders for i in _numbers(source)} - watch.looked - held
    binders = tuple(b for b in params.binders if all(i in parameters for i in _numbers(b[1])))
    params.binders.clear()
    return tuple(i for i in range(len(watch.plain)) if i not in parameters), binders


def _numbers(source: int | tuple[int, ...]) -> tuple[int, ...]:
    return (source,) if isinstance(source, int) else source


def _skeleton(value: Any, type_: GraphQLInputType, leaves: list[Any]) -> Hashable:
    """The shape of one variable's coerced value, its leaves appended to `leaves` in order."""

    def leaf(found: Any) -> type:
        leaves.append(found)
        return type(found)

    return _walked(value, type_, leaf, shape=True)


def _stand_in(value: Any, type_: GraphQLInputType, watch: Watch) -> Any:
    """`value` with its leaves replaced by watched stand-ins, numbered in `_skeleton`'s order."""
    return _walked(value, type_, watch.stand_in, shape=False)


def _walked(value: Any, type_: GraphQLInputType, leaf: Callable[[Any], Any], *, shape: bool) -> Any:
    """`value` walked by its input type, members in name order, each leaf replaced by `leaf(it)`: with `shape`,
    as hashable tuples where the other values are kept as `("=", value)`; else as lists and dicts."""
    if value is None:
        return None
    if isinstance(type_, GraphQLNonNull):
        return _walked(value, cast(GraphQLInputType, type_.of_type), leaf, shape=shape)
    if isinstance(type_, GraphQLList):
        item = cast(GraphQLInputType, type_.of_type)
        items = [_walked(v, item, leaf, shape=shape) for v in cast("list[Any]", value)]
        return tuple(items) if shape else items
    if isinstance(type_, GraphQLInputObjectType):
        fields = type_.fields
        given = cast("Mapping[str, Any]", value)
        members = [(name, _walked(given[name], fields[name].type, leaf, shape=shape)) for name in sorted(given)]
        return tuple(members) if shape else dict(members)
    if _is_leaf(value, type_):
        return leaf(value)
    if not shape:
        return value
    return ("=", value if isinstance(value, Hashable) else json.dumps(value, sort_keys=True, default=repr))


def _is_leaf(value: Any, type_: GraphQLInputType) -> bool:
    return (
        isinstance(type_, GraphQLScalarType)
        and type_ is not GraphQLBoolean
        and type_.name not in _OPAQUE_SCALARS
        and type(value) in (str, int, float)
    )


def touch(kept: "OrderedDict[K, V]", key: K) -> V | None:
    """The value kept under `key`, made the most recently used; None when there is none."""
    value = kept.get(key)
    if value is not None:
        kept.move_to_end(key)
    return value


def keep(kept: "OrderedDict[K, V]", key: K, value: V, size: int) -> None:
    """Keep `value` under `key` as the most recently used; past `size`, the least recently used goes."""
    kept[key] = value
    kept.move_to_end(key)
    if len(kept) > size:
        kept.popitem(last=False)
