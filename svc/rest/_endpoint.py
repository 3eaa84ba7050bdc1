"""A REST request answered (SPEC "REST API"), in stages as PostgREST does it: the request is parsed into an
`ApiRequest` (`_parse.py`), planned (`_plan.py`), run through the one pipeline, and the response is written around
the database's JSON texts (`_respond.py`). No stage calls back into another: this module hands each its input.

A JSON Patch or merge patch needs the database between its stages: it is two staged round trips, the row read as
the API shows it, then the update of the members the patch changed (or, when it changes nothing, the row read
again as the client selects it). HEAD answers like GET (the HTTP layer drops the body).

Telemetry: `rest.parse` and `rest.plan` are timed here (the pipeline times `rest.compile` and `rest.execute`); the
parse stage names the route's template on the request's record.
"""

import time
from collections.abc import Mapping

from graphql import GraphQLSchema

from svc.config import Config
from svc.model import Model
from svc.pipeline import MutationFailed, Pipeline, Statements
from svc.plan import EntityIndex
from svc.telemetry import stage

from ._api_request import ApiRequest, Patch
from ._messages import RestRequest, RestResponse
from ._parse import RequestParser
from ._parse_inputs import InputTypes
from ._plan import RestPlanner
from ._planned import AFFECTED, KEYS, ROW, Planned, PlannedRead, read_version
from ._resources import RestIndex
from ._respond import Responder


class RestEndpoint:
    """Answers REST requests on one snapshot (its model, GraphQL input types and compiled statements)."""

    def __init__(self, schema: GraphQLSchema, model: Model, config: Config, statements: Statements) -> None:
        self.index = RestIndex(model, config.database.schemas)
        fields = EntityIndex(model)
        self.parser = RequestParser(model, self.index, InputTypes(schema, model), fields, config.limits)
        self.planner = RestPlanner(model, fields, config.limits, config.search)
        self.responder = Responder(self.index, config)
        self.statements = statements

    async def handle(self, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        started = time.perf_counter()
        api = self.parser.parse(request)
        started = stage("rest.parse", started)
        if isinstance(api.body, Patch):
            return await self._patch(api, request, pipeline)
        planned = self.planner.plan(api)
        stage("rest.plan", started)
        return self.responder.respond(api, planned, await self.run(api, planned, request, pipeline))

    async def _patch(self, api: ApiRequest, request: RestRequest, pipeline: Pipeline) -> RestResponse:
        """SPEC "Writes" 8: the row as the API shows it, patched; the members that changed written, expecting the
        version read (two statements; a change in between is 412); a patch that changes nothing writes nothing."""
        shown = await self.run(api, self.planner.row_as_shown(api), request, pipeline)
        update = self.parser.patched(api, shown.get(ROW), read_version(shown))
        if update is None:
            row = self.planner.row(api, api.listing.selection)
            return self.responder.unchanged(api, await self.run(api, row, request, pipeline))
        planned = self.planner.plan(update)
        return self.responder.respond(update, planned, await self.run(update, planned, request, pipeline))

    async def run(
        self, api: ApiRequest, planned: Planned | None, request: RestRequest, pipeline: Pipeline
    ) -> Mapping[str, bytes | None]:
        """The pipeline's answer to a plan: its JSON texts by key (none for what needs no database)."""
        if planned is None:
            return {}
        target = api.target
        resource = target.entity.table if target.entity else target.function.function if target.function else ""
        context = request.context(resource)
        if isinstance(planned, PlannedRead):
            texts = await pipeline.read(self.statements, planned.plan, planned.params, context)
            return dict(zip(planned.keys, texts, strict=True))
        try:
            (payload,) = await pipeline.write(self.statements, planned.plan, context)
        except MutationFailed as failed:
            raise failed.error from failed
        texts = dict(payload.texts)
        if planned.location:
            texts[KEYS] = payload.keys
        if planned.affected:
            texts[AFFECTED] = str(payload.affected).encode()
        return texts
