"""A GraphQL mutation operation into a mutation plan (SPEC "Mutations", "Nested writes"): each root field becomes a
step, its write built from the inputs (`svc/plan`'s `WriteInputs`, shared with REST) and its payload a read by the
written rows' keys, planned like any query selection.

Limits are checked before any SQL (SPEC "Limits"): rows a create writes, nested creations included, against
`limits.bulk_rows`; an empty `where` of a bulk update or delete against `limits.require_filter` (unless
`unfiltered: true`); the depth and cost of payload reads as for queries.
"""

from collections.abc import Mapping
from typing import Any

import attrs
from graphql import FieldNode, OperationDefinitionNode
from graphql.execution.values import get_argument_values

from svc.errors import Code, SvcError
from svc.model import Entity, Model, RootFunction
from svc.plan import (
    And,
    Arguments,
    BulkWrite,
    Cardinality,
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
    ReadPlan,
    RootField,
    RowWrite,
    Slots,
    Write,
    WriteInputs,
    check_written_rows,
    count_rows,
    table,
    without_versions,
)

from ._planner import FieldError, Place, PlanRun, QueryPlanner


@attrs.frozen
class MutationMeaning:
    """What a Mutation root field is: an entity's write (`kind` names it as `RootNames` does) or a function."""

    kind: str
    entity: Entity | None = None
    function: RootFunction | None = None


def mutation_meanings(model: Model) -> dict[str, MutationMeaning]:
    meanings: dict[str, MutationMeaning] = {}
    for entity in model.entities:
        roots = entity.roots
        for kind in ("create", "create_many", "update", "update_by_node_id", "update_many", "delete",
                     "delete_by_node_id", "delete_many"):  # fmt: skip
            meanings[getattr(roots, kind)] = MutationMeaning(kind, entity)
    for function in model.functions:
        if function.mutation:
            meanings[function.name] = MutationMeaning("function", function=function)
    return meanings


class MutationPlanner:
    """Plans mutation operations against one snapshot's schema and model."""

    def __init__(self, queries: QueryPlanner) -> None:
        self.queries = queries
        self.model = queries.model
        self.limits = queries.limits
        self.inputs = WriteInputs(queries.model)
        self.meanings = mutation_meanings(queries.model)

    def plan(
        self, operation: OperationDefinitionNode, fragments: Mapping[str, Any], variables: Mapping[str, Any]
    ) -> MutationPlan:
        mutation_type = self.queries.schema.mutation_type
        assert mutation_type is not None
        collected = self.queries.run(fragments, variables).collector.fields("Mutation", [operation.selection_set])
        steps = []
        for key, nodes in collected.items():
            name = nodes[0].name.value
            if name == "__typename":
                steps.append(MutationStep(key, members=(PayloadMember(key, PayloadKind.CONSTANT, "Mutation"),)))
                continue
            run = self.queries.run(fragments, variables)
            arguments = get_argument_values(mutation_type.fields[name], nodes[0], variables)
            try:
                steps.append(self._step(run, key, nodes, self.meanings[name], arguments))
                run.budget.check()
            except FieldError:
                raise
            except SvcError as error:
                raise FieldError(error, [key]) from error
        return MutationPlan(tuple(steps))

    def _step(
        self, run: PlanRun, key: str, nodes: list[FieldNode], meaning: MutationMeaning, arguments: Mapping[str, Any]
    ) -> MutationStep:
        if meaning.function is not None:
            root = run.root_function(key, nodes, meaning.function, arguments, Place((key,)))
            return MutationStep(key, call=ReadPlan((root,)), call_values=tuple(run.params.values))
        entity = meaning.entity
        assert entity is not None
        payload = _Payload(self, run, key, nodes, entity=entity, kind=meaning.kind)
        write = self._write(run, entity, meaning.kind, arguments, previous=payload.wants_previous)
        return payload.step(write)

    def _write(
        self, run: PlanRun, entity: Entity, kind: str, arguments: Mapping[str, Any], *, previous: bool
    ) -> "Write | tuple[RowWrite, ...]":
        inputs = self.inputs
        if kind == "create":
            write = inputs.create(entity, arguments["input"], ("input",), on_conflict=arguments.get("onConflict"),
                                  previous=previous)  # fmt: skip
            check_written_rows(self.limits, count_rows(write))
            return write
        if kind == "create_many":
            writes = tuple(
                inputs.create(entity, value, ("inputs", i), on_conflict=arguments.get("onConflict"))
                for i, value in enumerate(arguments["inputs"])
            )
            check_written_rows(self.limits, sum(count_rows(write) for write in writes))
            return writes
        if kind in ("update", "update_by_node_id"):
            where = (
                inputs.node_key(entity, arguments["nodeId"], ("nodeId",))
                if kind == "update_by_node_id"
                else inputs.key_arguments(entity, arguments, ())
            )
            return inputs.update(entity, where, arguments["set"], ("set",),
                                 expected_version=arguments.get("expectedVersion"), previous=previous)  # fmt: skip
        if kind in ("delete", "delete_by_node_id"):
            assert entity.primary_key is not None
            where = (
                inputs.node_key(entity, arguments["nodeId"], ("nodeId",))
                if kind == "delete_by_node_id"
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
        values = inputs.bulk_values(entity, arguments["set"], ("set",)) if kind == "update_many" else None
        return BulkWrite(
            table(entity), entity.primary_key, filter_, values, self.limits.bulk_rows, previous=previous,
            filter_values=tuple(filter_params.values),
        )  # fmt: skip


class _Payload:
    """The payload object of one entity mutation field: which members are selected, and the read of its rows."""

    def __init__(
        self, planner: MutationPlanner, run: PlanRun, key: str, nodes: list[FieldNode], *, entity: Entity, kind: str
    ) -> None:
        self.planner = planner
        self.run = run
        self.key = key
        self.entity = entity
        self.kind = kind
        names = entity.names
        self.type_name = {
            "create": names.create_payload,
            "create_many": names.create_many_payload,
            "update": names.update_payload,
            "update_by_node_id": names.update_payload,
            "update_many": names.update_many_payload,
            "delete": names.delete_payload,
            "delete_by_node_id": names.delete_payload,
            "delete_many": names.delete_many_payload,
        }[kind]
        self.collected = run.collector.subfields(self.type_name, nodes)
        self.previous_names = {f"previous{names.type}", f"previous{names.plural}"}
        #: Rows the payload may read (the cost of reads nested in them).
        self.rows = (planner.limits.bulk_rows or 1000) if kind.endswith("_many") else 1
        self.wants_previous = any(fields[0].name.value in self.previous_names for fields in self.collected.values())

    def step(self, write: "Write | tuple[RowWrite, ...]") -> MutationStep:
        run, entity = self.run, self.entity
        params = run.params
        many = self.kind.endswith("_many")
        deleting = self.kind.startswith("delete")
        by_key = entity.primary_key is not None and not deleting
        slots: dict[str, Param] = {}

        def slot(name: str) -> Param:
            """The parameter the write fills: `keys`, `rows` or `previous` (one each, shared by the members)."""
            if name not in slots:
                slots[name] = params.add(None, "json")
            return slots[name]

        members: list[PayloadMember] = []
        roots: list[RootField] = []
        for member_key, fields in self.collected.items():
            name = fields[0].name.value
            if name == "__typename":
                members.append(PayloadMember(member_key, PayloadKind.CONSTANT, self.type_name))
            elif name == "affectedCount":
                members.append(PayloadMember(member_key, PayloadKind.AFFECTED_COUNT))
            elif name == "deletedId":
                members.append(PayloadMember(member_key, PayloadKind.DELETED_ID))
            else:
                previous = name in self.previous_names
                place = Place((self.key, member_key))
                cardinality = Cardinality.MANY if many else Cardinality.ONE
                if previous or not by_key:
                    source = JsonRows(table(entity), slot("previous" if previous else "rows"))
                    read = run.read(entity, fields, cardinality, place, rows=self.rows, source=source)
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

    def _by_key(self, fields: list[FieldNode], cardinality: Cardinality, place: Place, keys: Any) -> Read:
        """The written rows, read again by key: their relations reflect the write."""
        entity = self.entity
        assert entity.primary_key is not None
        filter_: Filter = KeyIn(table(entity), entity.primary_key, keys)
        order = None
        if cardinality is Cardinality.MANY:
            position = KeyPosition(table(entity), entity.primary_key, keys)
            order = Order((OrderItem(position, nullable=False),), (), "")
        return self.run.read(entity, fields, cardinality, place, rows=self.rows, filter_=filter_, order=order)
