"""A GraphQL mutation operation into a mutation plan (SPEC "Mutations", "Nested writes"): each root field becomes a
step, its write built from the inputs (`svc/plan`'s `WriteInputs`, shared with REST) and its payload a read by the
written rows' keys, planned like any query selection. Which write a field is, and what each payload member is, are
read from their definitions (the meanings `_field_meanings` attached).

An empty `where` of a bulk update or delete is refused under `limits.require_filter` (unless `unfiltered: true`);
the rows a create writes and the depth and cost of payload reads are the pipeline's limits stage (SPEC "Limits").
"""

from collections.abc import Mapping
from typing import Any

import attrs
from graphql import FieldNode, FragmentDefinitionNode, GraphQLField, GraphQLObjectType, OperationDefinitionNode
from graphql.execution.values import VariableValues, get_argument_values

from svc.errors import Code, SvcError
from svc.model import Entity
from svc.plan import (
    And,
    Arguments,
    BulkWrite,
    DeleteWrite,
    Filter,
    JsonRows,
    KeyIn,
    KeyPosition,
    MutationPlan,
    MutationStep,
    Order,
    OrderItem,
    Param,
    Params,
    PayloadKind,
    PayloadMember,
    Read,
    ReadKind,
    ReadPlan,
    RootField,
    RowWrite,
    Slots,
    Write,
    WriteInputs,
    table,
    without_versions,
)

from ._field_meanings import MutationKind, MutationMeaning, PayloadField, meaning_of
from ._query_planner import FieldError, Place, PlanRun, QueryPlanner, object_type_of


class MutationPlanner:
    """Plans mutation operations against one snapshot's schema and model."""

    def __init__(self, queries: QueryPlanner) -> None:
        mutation_type = queries.schema.mutation_type
        assert mutation_type is not None
        self.mutation_type = mutation_type
        self.queries = queries
        self.model = queries.model
        self.limits = queries.limits
        self.inputs = WriteInputs(queries.model)

    def plan(
        self,
        operation: OperationDefinitionNode,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues,
    ) -> MutationPlan:
        type_name = self.mutation_type.name
        collected = self.queries.run(fragments, variables).collector.fields(type_name, [operation.selection_set])
        steps = []
        for key, nodes in collected.items():
            name = nodes[0].name.value
            if name == "__typename":
                steps.append(MutationStep(key, members=(PayloadMember(key, PayloadKind.CONSTANT, type_name),)))
                continue
            run = self.queries.run(fragments, variables)
            try:
                steps.append(self._step(run, key, nodes, self.mutation_type.fields[name]))
            except FieldError:
                raise
            except SvcError as error:
                raise FieldError(error, [key]) from error
        return MutationPlan(tuple(steps))

    def _step(self, run: PlanRun, key: str, nodes: list[FieldNode], definition: GraphQLField) -> MutationStep:
        """A Mutation root field, as its definition's meaning says: an entity's write and payload, or a call."""
        meaning = meaning_of(definition, MutationMeaning)
        arguments = get_argument_values(definition, nodes[0], run.variables)
        if meaning.function is not None:
            root = run.root_function(key, nodes, meaning.function, arguments, Place((key,)))
            return MutationStep(key, call=ReadPlan((root,)), call_values=tuple(run.params.values))
        entity = meaning.entity
        assert entity is not None
        payload = _Payload(run, key, nodes, object_type_of(definition), entity=entity, kind=meaning.kind)
        write = self._write(entity, meaning.kind, arguments, previous=payload.wants_previous)
        return payload.step(write)

    def _write(
        self, entity: Entity, kind: MutationKind, arguments: Mapping[str, Any], *, previous: bool
    ) -> "Write | tuple[RowWrite, ...]":
        inputs = self.inputs
        if kind is MutationKind.CREATE:
            return inputs.create(entity, arguments["input"], ("input",), on_conflict=arguments.get("onConflict"),
                                 previous=previous)  # fmt: skip
        if kind is MutationKind.CREATE_MANY:
            return tuple(
                inputs.create(entity, value, ("inputs", i), on_conflict=arguments.get("onConflict"))
                for i, value in enumerate(arguments["inputs"])
            )
        if kind in (MutationKind.UPDATE, MutationKind.UPDATE_BY_NODE_ID):
            where = (
                inputs.node_key(entity, arguments["nodeId"], ("nodeId",))
                if kind is MutationKind.UPDATE_BY_NODE_ID
                else inputs.key_arguments(entity, arguments, ())
            )
            return inputs.update(entity, where, arguments["set"], ("set",),
                                 expected_version=arguments.get("expectedVersion"), previous=previous)  # fmt: skip
        if kind in (MutationKind.DELETE, MutationKind.DELETE_BY_NODE_ID):
            assert entity.primary_key is not None
            where = (
                inputs.node_key(entity, arguments["nodeId"], ("nodeId",))
                if kind is MutationKind.DELETE_BY_NODE_ID
                else inputs.key_arguments(entity, arguments, ())
            )
            return DeleteWrite(table(entity), entity.primary_key, where, arguments.get("expectedVersion"),
                               entity.version_column)  # fmt: skip
        # The filter's values are the write statement's first parameters, apart from the payload's.
        filter_params = Params()
        where = Arguments(self.model, self.queries.index, self.limits, filter_params)
        filter_ = where.filter(entity, arguments.get("where"), ["where"])
        if (filter_ is None or filter_ == And(())) and self.limits.require_filter and not arguments.get("unfiltered"):
            raise SvcError(
                Code.FILTER_REQUIRED,
                "a write by filter needs a where (or unfiltered: true to touch every row)",
                extensions={"field": "where"},
            )
        values = inputs.bulk_values(entity, arguments["set"], ("set",)) if kind is MutationKind.UPDATE_MANY else None
        return BulkWrite(
            table(entity), entity.primary_key, filter_, values, self.limits.bulk_rows, previous=previous,
            filter_values=tuple(filter_params.values),
        )  # fmt: skip


class _Payload:
    """The payload object of one entity mutation field: which members are selected, and the read of its rows."""

    def __init__(
        self,
        run: PlanRun,
        key: str,
        nodes: list[FieldNode],
        payload_type: GraphQLObjectType,
        *,
        entity: Entity,
        kind: MutationKind,
    ) -> None:
        self.run = run
        self.key = key
        self.entity = entity
        self.kind = kind
        self.type_name = payload_type.name
        #: Each selected member: its key, its nodes, and what it is (None: `__typename`).
        self.members: list[tuple[str, list[FieldNode], PayloadField | None]] = []
        for member_key, fields in run.collector.subfields(payload_type.name, nodes).items():
            name = fields[0].name.value
            member = None if name == "__typename" else meaning_of(payload_type.fields[name], PayloadField)
            self.members.append((member_key, fields, member))
        self.wants_previous = any(member is PayloadField.PREVIOUS_ROWS for _, _, member in self.members)

    def step(self, write: "Write | tuple[RowWrite, ...]") -> MutationStep:
        run, entity = self.run, self.entity
        params = run.params
        by_key = entity.primary_key is not None and not self.kind.deletes
        slots: dict[str, Param] = {}

        def slot(name: str) -> Param:
            """The parameter the write fills: `keys`, `rows` or `previous` (one each, shared by the members)."""
            if name not in slots:
                slots[name] = params.add(None, "json")
            return slots[name]

        members: list[PayloadMember] = []
        roots: list[RootField] = []
        for member_key, fields, member in self.members:
            if member is None:
                members.append(PayloadMember(member_key, PayloadKind.CONSTANT, self.type_name))
            elif member is PayloadField.AFFECTED_COUNT:
                members.append(PayloadMember(member_key, PayloadKind.AFFECTED_COUNT))
            elif member is PayloadField.DELETED_ID:
                members.append(PayloadMember(member_key, PayloadKind.DELETED_ID))
            else:
                previous = member is PayloadField.PREVIOUS_ROWS
                place = Place((self.key, member_key))
                cardinality = ReadKind.MANY if self.kind.many else ReadKind.ONE
                if previous or not by_key:
                    source = JsonRows(table(entity), slot("previous" if previous else "rows"))
                    read = run.read(entity, fields, cardinality, place, source=source)
                    read = attrs.evolve(read, shape=without_versions(read.shape))
                else:
                    read = self._by_key(fields, cardinality, place, slot("keys"))
                members.append(PayloadMember(member_key, PayloadKind.READ))
                roots.append(RootField(member_key, read))
        return MutationStep(
            self.key,
            write=write,
            payload=ReadPlan(tuple(roots)) if roots else None,
            payload_values=tuple(params.values),
            slots=Slots(*(slots[name].index if name in slots else None for name in ("keys", "rows", "previous"))),
            members=tuple(members),
            key_columns=entity.primary_key or (),
            type_name=entity.type_name if entity.node else "",
        )

    def _by_key(self, fields: list[FieldNode], kind: ReadKind, place: Place, keys: Any) -> Read:
        """The written rows, read again by key: their relations reflect the write."""
        entity = self.entity
        assert entity.primary_key is not None
        filter_: Filter = KeyIn(table(entity), entity.primary_key, keys)
        order = None
        if kind is ReadKind.MANY:
            position = KeyPosition(table(entity), entity.primary_key, keys)
            order = Order((OrderItem(position, nullable=False),), (), "")
        return self.run.read(entity, fields, kind, place, filter_=filter_, order=order)
