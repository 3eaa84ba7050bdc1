"""A GraphQL request answered (SPEC "GraphQL behaviour", "Errors" -> GraphQL): parsed and validated once per
document text, planned, read with ONE statement, and the response assembled from the database's JSON texts without
decoding them.

Status: 200 when the response has `data` (whatever failed in it); with `data: null`, the status of the first error.
Partial results: when the one statement fails because of data it read and the query has several root fields, each
root field is read alone in one repeatable-read, read-only transaction; a failing nullable field is null with its
error, a failing non-null one makes `data` null. `onError`: PROPAGATE (default), NULL (failed fields are null, the
rest kept), HALT (no data); the older NO_PROPAGATE and ABORT mean NULL and HALT.

Queries are planned once per (document, operation, variables as given): a request repeating one runs the plan made
for the first (its values included), so only checking its limits, binding and executing are left. Plans are kept per
snapshot (a reload starts afresh), least recently used out.

Telemetry: the stages `graphql.parse` (parsed and validated, or found in the document cache) and `graphql.plan`
are timed here (the pipeline times `graphql.compile` and `graphql.execute`); the request's record learns the
operation's type and name and the code of the first error.
"""

import enum
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    experimental_execute_incrementally,
)
from graphql.execution.values import VariableValues, get_variable_values

from svc.errors import Code, SvcError
from svc.pipeline import Context, MutationFailed, Pipeline, Session, Statements
from svc.plan import (
    LimitExceeded,
    MutationPlan,
    Page,
    PageMember,
    PageOutput,
    Params,
    ReadKind,
    ReadPlan,
    check_read,
)
from svc.telemetry import set_error, set_operation, stage

from ._document_parser import DocumentParser
from ._incremental import incremental_payloads, uses_incremental_delivery, without_incremental_directives
from ._mutation_planner import MutationPlanner
from ._persisted import PersistedQueries
from ._query_planner import FieldError, PlannedQuery, QueryPlanner
from ._shaped_plans import ShapedPlans, keep, touch

log = logging.getLogger("svc.graphql")

#: Planned queries kept per endpoint (least recently used out).
PLAN_CACHE_SIZE = 1000
#: A kept plan's key: document text, operation name, variables' JSON.
_PlanKey = tuple[str, str | None, str]
T = TypeVar("T")

#: Failures of the whole request, never retried field by field (SPEC "Partial results").
_WHOLE_REQUEST = frozenset({Code.STATEMENT_TIMEOUT, Code.DATABASE_UNAVAILABLE, Code.SCHEMA_CHANGED})


class OnError(enum.Enum):
    """What a failed field does to the response (SPEC "Partial results": the request's `onError`)."""

    PROPAGATE = "PROPAGATE"  # a failed non-null field makes `data` null; a nullable one is null
    NULL = "NULL"  # failed fields are null, the rest kept
    HALT = "HALT"  # no data

    @classmethod
    def of(cls, given: object) -> "OnError":
        """The mode a request names (case aside; the older NO_PROPAGATE and ABORT are NULL and HALT), else
        PROPAGATE."""
        return _ON_ERROR.get(str(given).upper(), cls.PROPAGATE) if given else cls.PROPAGATE


_ON_ERROR = {**{mode.value: mode for mode in OnError}, "NO_PROPAGATE": OnError.NULL, "ABORT": OnError.HALT}


@attrs.frozen
class GraphqlRequest:
    query: str | None
    operation_name: str | None = None
    variables: Mapping[str, Any] | None = None
    extensions: Mapping[str, Any] | None = None
    on_error: str | None = None
    #: A persisted document's id (SPEC "Persisted queries"; `query` is then absent).
    document_id: str | None = None
    #: The client reads incremental delivery (multipart/mixed): `@defer`/`@stream` split the answer.
    incremental: bool = False
    method: str = "POST"
    #: The database role and session settings of the request (SPEC "Authentication"); None: the connecting role.
    session: Session | None = None


@attrs.frozen
class GraphqlResponse:
    status: int
    body: bytes
    #: The response's errors (also in `body`), for transports that send them on their own (graphql-transport-ws).
    errors: tuple[Mapping[str, Any], ...] = ()
    #: False for a request error (refused before execution: parse, validation, variables, persisted queries): GraphQL
    #: over HTTP's `application/graphql-response+json` then has no `data` member at all.
    executed: bool = True
    #: Incremental delivery: the payloads after `body` (the initial one), in order.
    subsequent: tuple[bytes, ...] = ()


@attrs.frozen(eq=False)
class LiveQuery:
    """A subscription operation planned on one snapshot API (SPEC "Subscriptions"): its read plan and values, which
    live queries of the same shape and session share a statement by, and how a result is written."""

    plan: ReadPlan
    params: Params
    statements: Statements
    context: Context
    keys: tuple[str, ...]

    def body(self, texts: Sequence[bytes | None]) -> bytes:
        """The execution result of one read's texts (the root fields' JSON, never decoded)."""
        by_key = dict(zip((root.key for root in self.plan.roots), texts, strict=True))
        return b'{"data":' + _data(self.keys, by_key, {}) + b"}"

    def failure(self, error: SvcError) -> GraphqlResponse:
        """The execution result of a read that failed: `data` null and the error."""
        answer = _Answer(self.context.request_id)
        answer.add(error, [self.keys[0]] if len(self.keys) == 1 else None)
        return answer.response(None)


@attrs.frozen(eq=False)
class ExportQuery:
    """A query `/export` streams (SPEC "Endpoints"): its one root connection as a list of every row the connection's
    condition, filter and order select (no page), each row its node."""

    plan: ReadPlan
    params: Params
    statements: Statements
    context: Context


#: Connection arguments an export does not take: it reads every row.
_PAGING = frozenset({"first", "last", "after", "before", "offset"})


@attrs.frozen
class Settings:
    """What a snapshot's configuration says about answering GraphQL."""

    introspection: bool


class GraphqlEndpoint:
    """Answers GraphQL requests on one snapshot (its schema, planner and caches)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        planner: QueryPlanner,
        settings: Settings,
        statements: Statements,
        persisted: PersistedQueries | None = None,
    ) -> None:
        self.schema = schema
        self.planner = planner
        self.mutation_planner = MutationPlanner(planner) if schema.mutation_type is not None else None
        self.settings = settings
        self.documents = DocumentParser(schema)
        #: Which text a request runs (persisted queries, the allow-list), shared by the snapshot's endpoints.
        self.persisted = persisted if persisted is not None else PersistedQueries()
        #: Compiled statements, shared with the REST endpoint of the same snapshot.
        self.statements = statements
        #: Planned queries (with their coerced variables) and mutations by (document text, operation name, variables'
        #: JSON).
        self._queries: OrderedDict[_PlanKey, tuple[PlannedQuery, VariableValues]] = OrderedDict()
        self._mutations: OrderedDict[_PlanKey, MutationPlan] = OrderedDict()
        #: Query plans by (document text, operation name, variables' shape), behind the ones by values.
        self._shaped = ShapedPlans(schema, planner, PLAN_CACHE_SIZE)

    async def execute(self, request: GraphqlRequest, pipeline: Pipeline, request_id: str) -> GraphqlResponse:
        answer = _Answer(request_id)
        try:
            started = time.perf_counter()
            text, operation, document = self._operation(request)
            started = stage("graphql.parse", started)
            if operation.operation is OperationType.MUTATION and request.method != "GET":
                mutation = self._planned_mutation(text, operation, document, request)
                stage("graphql.plan", started)
                return await self._mutate(mutation, operation, request, pipeline, answer)  # it answers its failures
            if operation.operation is not OperationType.QUERY:
                return answer.refused(_not_a_query(operation, request))
            planned, variables = self._planned(text, operation, document, request)
            stage("graphql.plan", started)
            if planned.introspection and not self.settings.introspection:
                return answer.refused(SvcError(Code.INTROSPECTION_DISABLED, "introspection is disabled"))
        except FieldError as error:
            return answer.refused(error, error.path)
        except SvcError as error:
            return answer.refused(error)
        context = _context(operation, request, request_id)
        on_error = OnError.of(request.on_error or (request.extensions or {}).get("onError"))
        texts = await self._read(planned, pipeline, context, answer, on_error=on_error)
        if texts is None:
            return answer.response(None)
        introspected = self._introspection(document, operation, request, planned, answer)
        response = answer.response(_data(planned.keys, texts, {**planned.answered, **introspected}))
        if request.incremental and document.loc and uses_incremental_delivery(document.loc.source.body):
            payloads = incremental_payloads(
                self.schema, operation, _fragments(document), variables, json.loads(response.body)
            )
            if payloads is not None:
                return attrs.evolve(response, body=payloads[0], subsequent=tuple(payloads[1:]))
        return response

    def live(self, request: GraphqlRequest, request_id: str) -> LiveQuery | GraphqlResponse | None:
        """A subscription planned like a query (same planner, limits checked before any SQL), not yet read; the
        refusal when it cannot run; None when the operation is a query or a mutation (`execute` answers those)."""
        answer = _Answer(request_id)
        try:
            _, operation, document = self._operation(request)
            if operation.operation is not OperationType.SUBSCRIPTION:
                return None
            planned = self.planner.plan(operation, _fragments(document), self._variables(operation, request))
            check_read(planned.plan, planned.params.values, self.statements.limits)
        except FieldError as error:
            return answer.refused(error, error.path)
        except LimitExceeded as error:
            return answer.refused(error, [error.root] if error.root else None)
        except SvcError as error:
            return answer.refused(error)
        return LiveQuery(
            planned.plan,
            planned.params,
            self.statements,
            _context(operation, request, request_id),
            planned.keys,
        )

    def export(self, request: GraphqlRequest, request_id: str) -> ExportQuery:
        """The query an export streams: one root connection field, written in the operation itself, selecting its
        `nodes` (or `edges { node }`) and nothing else, without paging arguments. BAD_USER_INPUT (or the GraphQL
        error) otherwise; the allow-list applies as to any operation."""
        text, operation, document = self._operation(request)
        if operation.operation is not OperationType.QUERY:
            raise SvcError(Code.BAD_USER_INPUT, "an export runs a query")
        planned, _ = self._planned(text, operation, document, request)
        roots = planned.plan.roots
        if planned.introspection or planned.answered or len(roots) != 1:
            raise SvcError(Code.BAD_USER_INPUT, "an export runs a query of one root field, a connection")
        (root,) = roots
        read = root.read
        if read is None or read.kind is not ReadKind.PAGE:
            raise SvcError(Code.BAD_USER_INPUT, f"an export streams a connection: {root.key} is not one")
        field = next(
            (f for f in operation.selection_set.selections if isinstance(f, FieldNode) and _key(f) == root.key), None
        )
        if field is None:
            raise SvcError(Code.BAD_USER_INPUT, f"write the connection field {root.key} in the operation itself")
        paging = sorted({argument.name.value for argument in field.arguments or ()} & _PAGING)
        if paging:
            raise SvcError(Code.BAD_USER_INPUT, f"an export reads every row: it takes no {', '.join(paging)}")
        if not all(_node_rows(output) for output in read.page_outputs):
            raise SvcError(
                Code.BAD_USER_INPUT, "an export streams the connection's nodes: select nodes (or edges { node }) only"
            )
        rows = attrs.evolve(read, kind=ReadKind.MANY, page=Page(), page_outputs=(), cursor_signature="")
        return ExportQuery(
            ReadPlan((attrs.evolve(root, read=rows),)),
            planned.params,
            self.statements,
            _context(operation, request, request_id),
        )

    async def _mutate(
        self,
        plan: MutationPlan,
        operation: OperationDefinitionNode,
        request: GraphqlRequest,
        pipeline: Pipeline,
        answer: "_Answer",
    ) -> GraphqlResponse:
        """SPEC "Mutations": all or nothing. A failed field rolls the operation back; every root field is then null
        and the error names the field (HTTP 200, as for any field error); failures of the whole request (the
        database unavailable, a timeout) leave `data` null with their status."""
        try:
            payloads = await pipeline.write(self.statements, plan, _context(operation, request, answer.request_id))
        except LimitExceeded as error:
            return answer.failed(error, [error.root] if error.root else None)
        except MutationFailed as failed:
            answer.add(failed.error, [failed.key])
            nulls = b",".join(json.dumps(step.key).encode() + b":null" for step in plan.steps)
            return answer.response(b"{" + nulls + b"}")
        except SvcError as error:
            return answer.failed(error)
        members = (json.dumps(payload.step.key).encode() + b":" + payload.json() for payload in payloads)
        return answer.response(b"{" + b",".join(members) + b"}")

    def _planned(
        self, text: str, operation: OperationDefinitionNode, document: DocumentNode, request: GraphqlRequest
    ) -> tuple[PlannedQuery, VariableValues]:
        """The query's plan and coerced variables: planned when this document, operation and variables come first,
        else the kept ones (a plan is a value: the pipeline only reads it)."""

        def plan() -> tuple[PlannedQuery, VariableValues]:
            variables = self._variables(operation, request)
            return self._shaped.planned(text, operation, _fragments(document), variables), variables

        return self._kept(self._queries, text, request, plan)

    def _planned_mutation(
        self, text: str, operation: OperationDefinitionNode, document: DocumentNode, request: GraphqlRequest
    ) -> MutationPlan:
        """The mutation's plan, kept as a query's is (the same document and variables write the same values)."""
        assert self.mutation_planner is not None
        planner = self.mutation_planner

        def plan() -> MutationPlan:
            return planner.plan(operation, _fragments(document), self._variables(operation, request))

        return self._kept(self._mutations, text, request, plan)

    @staticmethod
    def _kept(plans: OrderedDict[_PlanKey, T], text: str, request: GraphqlRequest, plan: Callable[[], T]) -> T:
        """The plan kept for this document text, operation and variables (the least recently used goes past
        `PLAN_CACHE_SIZE`), else `plan()`, kept."""
        given = request.variables  # decoded JSON (a body or a URL parameter): it dumps again
        key = (text, request.operation_name, json.dumps(given, sort_keys=True) if given else "")
        if (kept := touch(plans, key)) is not None:
            return kept
        planned = plan()
        keep(plans, key, planned, PLAN_CACHE_SIZE)
        return planned

    def _operation(self, request: GraphqlRequest) -> tuple[str, OperationDefinitionNode, DocumentNode]:
        """The text the request runs, the operation it names and its document."""
        text = self.persisted.text(request.query, request.document_id, request.extensions)
        document = self.documents.parse(text)
        operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        name = request.operation_name
        if name:
            chosen = [o for o in operations if o.name and o.name.value == name]
            if not chosen:
                raise SvcError(Code.BAD_USER_INPUT, f"the document has no operation named {name!r}")
        elif len(operations) > 1:
            raise SvcError(Code.BAD_USER_INPUT, "the document has several operations: name one with operationName")
        else:
            chosen = operations
        operation = chosen[0]
        set_operation(operation.operation.value, operation.name.value if operation.name else "")
        return text, operation, document

    def _variables(self, operation: OperationDefinitionNode, request: GraphqlRequest) -> VariableValues:
        """The operation's variables, coerced (declared defaults for omitted ones; SPEC "Variables")."""
        given = request.variables if request.variables is not None else {}
        if not isinstance(given, Mapping):
            raise SvcError(Code.BAD_USER_INPUT, "variables must be an object")
        coerced = get_variable_values(self.schema, operation.variable_definitions or (), dict(given), max_errors=20)
        if isinstance(coerced, list):
            message = "; ".join(error.message for error in coerced)
            raise SvcError(Code.BAD_USER_INPUT, message)
        return coerced

    async def _read(
        self,
        planned: PlannedQuery,
        pipeline: Pipeline,
        context: Context,
        answer: "_Answer",
        *,
        on_error: OnError,
    ) -> dict[str, bytes | None] | None:
        """Every SQL root field's JSON text by key; None when the request failed as a whole (errors recorded)."""
        roots = planned.plan.roots
        if not roots:
            return {}
        try:
            texts = await pipeline.read(self.statements, planned.plan, planned.params, context)
            return dict(zip((r.key for r in roots), texts, strict=True))
        except LimitExceeded as error:
            answer.add(error, [error.root] if error.root else None)
            return None
        except SvcError as error:
            whole = error.code in _WHOLE_REQUEST
            if whole or on_error is OnError.HALT or len(roots) == 1:
                answer.add(error, [roots[0].key] if len(roots) == 1 else None)
                if len(roots) == 1 and roots[0].nullable and not whole and on_error is not OnError.HALT:
                    return {roots[0].key: None}
                return None
        return await self._read_each(planned, pipeline, context, answer, on_error=on_error)

    async def _read_each(
        self, planned: PlannedQuery, pipeline: Pipeline, context: Context, answer: "_Answer", *, on_error: OnError
    ) -> dict[str, bytes | None] | None:
        """SPEC "Partial results": each root field alone, all in one repeatable-read, read-only transaction."""
        try:
            results = await pipeline.read_each(self.statements, planned.plan, planned.params, context)
        except SvcError as error:
            answer.add(error)
            return None
        texts: dict[str, bytes | None] = {}
        for root, result in zip(planned.plan.roots, results, strict=True):
            if isinstance(result, SvcError):
                answer.add(result, [root.key])
                if not root.nullable and on_error is OnError.PROPAGATE:
                    return None
                texts[root.key] = None
            else:
                texts[root.key] = result
        return texts

    def _introspection(
        self,
        document: DocumentNode,
        operation: OperationDefinitionNode,
        request: GraphqlRequest,
        planned: PlannedQuery,
        answer: "_Answer",
    ) -> dict[str, bytes]:
        """Introspection root fields, answered by graphql-core (they read the schema, not the database)."""
        if not planned.introspection:
            return {}
        variables = dict(request.variables or {})
        # The schema declares @defer and @stream, so graphql-core runs it with its incremental executor; without
        # those directives in the document it answers whole (the split, if any, is made as for SQL fields).
        result = experimental_execute_incrementally(
            self.schema,
            without_incremental_directives(document),
            variable_values=variables,
            operation_name=_name(operation),
        )
        assert isinstance(result, ExecutionResult)
        for error in result.errors or ():
            answer.add(SvcError(Code.BAD_USER_INPUT, error.message), error.path)
        data = result.data or {}
        return {key: json.dumps(data.get(key), separators=(",", ":")).encode() for key in planned.introspection}


class _Answer:
    """The errors of one response and how it is written."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.errors: list[dict[str, Any]] = []
        self.first_status: int | None = None

    def add(self, error: SvcError, path: Sequence[str | int] | None = None) -> None:
        entry: dict[str, Any] = {"message": error.message}
        if path:
            entry["path"] = list(path)
        entry["extensions"] = {"code": error.code_name, "requestId": self.request_id, **error.extensions}
        self.errors.append(entry)
        if self.first_status is None:
            self.first_status = error.status
            set_error(error.code_name)

    def failed(self, error: SvcError, path: Sequence[str | int] | None = None) -> GraphqlResponse:
        self.add(error, path)
        return self.response(None)

    def refused(self, error: SvcError, path: Sequence[str | int] | None = None) -> GraphqlResponse:
        """A request error: refused before execution began."""
        self.add(error, path)
        return self.response(None, executed=False)

    def response(self, data: bytes | None, *, executed: bool = True) -> GraphqlResponse:
        parts = []
        if self.errors:
            parts.append(b'"errors":' + json.dumps(self.errors, separators=(",", ":"), ensure_ascii=False).encode())
        parts.append(b'"data":' + (data if data is not None else b"null"))
        status = 200 if data is not None else (self.first_status or 200)
        return GraphqlResponse(status, b"{" + b",".join(parts) + b"}", tuple(self.errors), executed)


def _data(keys: Sequence[str], texts: Mapping[str, bytes | None], answered: Mapping[str, bytes]) -> bytes:
    """`{"key": <JSON text>, ...}` in the operation's order, written around the texts (and the root fields
    answered without SQL), never decoding them."""
    members = []
    for key in keys:
        value = answered.get(key) if key in answered else texts.get(key)
        members.append(json.dumps(key).encode() + b":" + (value if value is not None else b"null"))
    return b"{" + b",".join(members) + b"}"


def _context(operation: OperationDefinitionNode, request: GraphqlRequest, request_id: str) -> Context:
    """Statements are tagged with the operation's name (SPEC "Telemetry": structured comments)."""
    name = operation.name.value if operation.name else "anonymous"
    return Context(request_id, request.session, {"api": "graphql", "operation": name})


def _key(field: FieldNode) -> str:
    return (field.alias or field.name).value


def _node_rows(output: PageOutput) -> bool:
    """A connection member an export's rows are: `nodes`, or `edges` with nothing but the node."""
    if output.member is PageMember.NODES:
        return True
    edge = output.edge
    return (
        output.member is PageMember.EDGES
        and edge is not None
        and not (edge.cursor_keys or edge.constants or edge.windows)
    )


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def _name(operation: OperationDefinitionNode) -> str | None:
    return operation.name.value if operation.name else None


def _not_a_query(operation: OperationDefinitionNode, request: GraphqlRequest) -> SvcError:
    kind = operation.operation.value
    if request.method == "GET":
        return SvcError(Code.METHOD_NOT_ALLOWED, f"a {kind} cannot be sent with GET; use POST")
    return SvcError(
        Code.BAD_USER_INPUT,
        "a subscription is served over WebSocket (graphql-transport-ws), server-sent events (/graphql/stream) or "
        "multipart HTTP (Accept: multipart/mixed;subscriptionSpec=1.0), not as a plain POST",
    )
