"""The plan stage of REST (SPEC "REST API"): an `ApiRequest` into the plan the pipeline runs (`_planned.py`), with
what the response needs of it. Reads are planned by `_plan_reads.py`, writes by `_plan_writes.py`, both through the
shared planners of `svc/plan`; nothing here reads the request again or runs anything.
"""

from svc.config import LimitsConfig, SearchConfig
from svc.model import Entity, Model, ReturnKind
from svc.plan import EntityIndex, FunctionCall, MutationPlan, MutationStep, ReadPlan, RowsFormat

from ._api_request import Action, ApiRequest, Selection
from ._plan_reads import ReadRun
from ._plan_writes import WritePlanner
from ._planned import VALUE, Planned, PlannedRead, PlannedWrite

#: Answered without the database: the index, a global ID's URL, the methods of a route.
_STATIC = frozenset({Action.INDEX, Action.NODE, Action.DESCRIBE})


class RestPlanner:
    """Plans REST requests against one model."""

    def __init__(self, model: Model, index: EntityIndex, limits: LimitsConfig, search: SearchConfig) -> None:
        self.model = model
        self.index = index
        self.limits = limits
        self.search = search
        self.writes = WritePlanner(model, index, limits)

    def plan(self, api: ApiRequest) -> Planned | None:
        """The request's plan; None for what is answered without the database."""
        action = api.action
        if action in _STATIC:
            return None
        if action is Action.CALL:
            return self._call(api)
        if action is Action.READ_LIST:
            return self._list(api, api.entity, ReadRun(self.model, self.index, self.limits))
        if action is Action.READ_ROW:
            return self.row(api, api.listing.selection)
        if action is Action.READ_COLUMN:
            assert api.column is not None
            return self.row(api, Selection(fields=(api.column.name,)))
        if action in (Action.SEARCH, Action.GLOBAL_SEARCH):
            assert api.search is not None
            run = ReadRun(self.model, self.index, self.limits)
            if action is Action.SEARCH:
                root = run.search(api.entity, api.search, api.listing, self.search)
            else:
                root = run.global_search(api.search, self.search)
            return PlannedRead(ReadPlan((root,)), run.params, (root.key,))
        if action is Action.AGGREGATE:
            assert api.aggregate is not None
            run = ReadRun(self.model, self.index, self.limits)
            root = run.aggregate(api.entity, api.aggregate)
            assert root.read is not None
            keys = tuple(o.key for o in root.read.page_outputs) if root.split else (root.key,)
            return PlannedRead(ReadPlan((root,)), run.params, keys)
        return self.writes.plan(api)

    def row(self, api: ApiRequest, selection: Selection) -> PlannedRead:
        """The row a row path names, with `selection`'s members, and its version."""
        assert api.key is not None
        run = ReadRun(self.model, self.index, self.limits)
        as_of = api.listing.as_of if api.action is Action.READ_ROW else None
        roots = run.row(api.entity, api.key.lookup, selection, as_of=as_of, versions=api.key.versions)
        return PlannedRead(ReadPlan(roots), run.params, tuple(root.key for root in roots))

    def row_as_shown(self, api: ApiRequest) -> PlannedRead:
        """The row a JSON Patch or merge patch applies to: its columns and its version, as the API shows it (a
        `test` of `/rowVersion` checks it)."""
        entity = api.entity
        columns = (*(f.name for f in entity.fields), *(("rowVersion",) if entity.primary_key else ()))
        return self.row(api, Selection(fields=columns))

    def _list(self, api: ApiRequest, entity: Entity, run: ReadRun, source: FunctionCall | None = None) -> PlannedRead:
        count = api.preferences.count
        root, size = run.rows(entity, api.listing, format=api.list_format, count=count, source=source)
        assert root.read is not None
        header = tuple(o.key for o in root.read.shape.outputs) if api.list_format is RowsFormat.CSV else ()
        keys = tuple(o.key for o in root.read.page_outputs)
        return PlannedRead(ReadPlan((root,)), run.params, keys, page_size=size, csv_header=header)

    def _call(self, api: ApiRequest) -> Planned:
        """A function call (SPEC "Functions"): a list of rows (STABLE and IMMUTABLE functions returning a table's
        rows), or its value, row or records, read, or for a VOLATILE function run in a write transaction."""
        assert api.call is not None
        function = api.call.function
        entity = self.model.entity(function.returns.entity) if function.returns.entity is not None else None
        run = ReadRun(self.model, self.index, self.limits)
        call = run.function_call(function, api.call.arguments, in_body=api.call.in_body)
        if function.returns.kind is ReturnKind.ROWS and not function.mutation:
            assert entity is not None
            return self._list(api, entity, run, source=call)
        root = run.call(function, call, entity, api.listing)
        if function.mutation:
            step = MutationStep(VALUE, call=ReadPlan((root,)), call_values=tuple(run.params.values))
            return PlannedWrite(MutationPlan((step,)))
        return PlannedRead(ReadPlan((root,)), run.params, (VALUE,))
