"""Search root fields into search plans (SPEC "Search fields"): `<plural><Method>Search` and `globalSearch`. The
arguments are planned by `svc.plan.SearchPlanner`, as REST's search bodies are; the selections of the results, the
hits and their nodes become the plan's outputs, the nodes read like any other rows (relations included), all in the
one statement.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphql import FieldNode
from graphql.execution.values import get_argument_values

from svc.model import Entity
from svc.plan import (
    BOUND_NAMES,
    Filter,
    HighlightOptions,
    HitMember,
    HitOutput,
    Page,
    Param,
    Ranked,
    Read,
    ReadKind,
    ResultsMember,
    ResultsOutput,
    RootField,
    Search,
    SearchPlanner,
    SearchRequest,
    SearchSource,
    global_sources,
    search_key,
    table,
)

from ._field_collector import Collected
from ._field_meanings import (
    GLOBAL_SEARCH_HIT,
    GLOBAL_SEARCH_RESULTS,
    RootMeaning,
    meaning_of,
)

if TYPE_CHECKING:
    from ._query_planner import Place, PlanRun


def plan_search(
    run: "PlanRun",
    key: str,
    place: "Place",
    nodes: list[FieldNode],
    meaning: RootMeaning,
    *,
    arguments: Mapping[str, Any],
) -> RootField:
    """One entity's best matches by one method."""
    entity, method = meaning.entity, meaning.method
    assert entity is not None and method is not None
    planner = SearchPlanner(run.params, run.planner.search)
    path = place.path
    first, size = planner.first(arguments.get("first"), [*path, "first"])
    request = SearchRequest(
        method,
        query=arguments.get("query"),
        vector=arguments.get("vector"),
        near=arguments.get("near"),
        field=arguments.get("field"),
        bound=arguments.get(BOUND_NAMES.get(method, "")),
        lexical_weight=arguments.get("lexicalWeight"),
        vector_weight=arguments.get("vectorWeight"),
        rrf_k=arguments.get("rrfK"),
    )
    ranked = planner.rank(entity, request, size, path)
    filter_ = run.conditions(entity, arguments, path)
    names = entity.names
    outputs, hits = _results(run, names.search_results, nodes)
    source = _source(
        run, entity, hits, ranked, first=first, place=place, planner=planner, filter_=filter_, hit_type=names.search_hit
    )
    return RootField(key, search=Search((source,), first, outputs), nullable=False)


def plan_global_search(
    run: "PlanRun", key: str, place: "Place", nodes: list[FieldNode], arguments: Mapping[str, Any]
) -> RootField:
    """The best matches of a text query among every searchable entity (each by its full-text document, else its
    fuzzy one), merged by score."""
    planner = SearchPlanner(run.params, run.planner.search)
    path = place.path
    first, size = planner.first(arguments.get("first"), [*path, "first"])
    outputs, hits = _results(run, GLOBAL_SEARCH_RESULTS, nodes)
    sources = []
    for entity in global_sources(run.model):
        ranked = planner.rank_text(entity, arguments.get("query"), size, path)
        sources.append(
            _source(run, entity, hits, ranked, first=first, place=place, planner=planner, hit_type=GLOBAL_SEARCH_HIT)
        )
    return RootField(key, search=Search(tuple(sources), first, outputs), nullable=False)


def _results(
    run: "PlanRun", type_name: str, nodes: list[FieldNode]
) -> tuple[tuple[ResultsOutput, ...], list[FieldNode]]:
    """The results object's members, and every `hits` selection (their members are merged into one hit shape, as
    a connection's node selections are)."""
    results = run.planner.object_type(type_name)
    outputs: list[ResultsOutput] = []
    hits: list[FieldNode] = []
    for key, fields in run.collector.subfields(type_name, nodes).items():
        name = fields[0].name.value
        if name == "__typename":
            outputs.append(ResultsOutput(key, constant=type_name))
            continue
        member = meaning_of(results.fields[name], ResultsMember)
        outputs.append(ResultsOutput(key, member))
        if member is ResultsMember.HITS:
            hits += fields
    return tuple(outputs), hits


def _source(
    run: "PlanRun",
    entity: Entity,
    hits: list[FieldNode],
    ranked: Ranked,
    *,
    first: Param,
    place: "Place",
    planner: SearchPlanner,
    hit_type: str,
    filter_: Filter | None = None,
) -> SearchSource:
    """One entity's part of a search: its rows' node shape and its hits' members."""
    definition = run.planner.object_type(hit_type)
    outputs: list[HitOutput] = []
    node_selections: list[FieldNode] = []
    for key, fields in run.collector.subfields(hit_type, hits).items():
        name = fields[0].name.value
        if name == "__typename":
            outputs.append(HitOutput(key, constant=hit_type))
            continue
        field = definition.fields[name]
        member = meaning_of(field, HitMember)
        if member is HitMember.NODE:
            node_selections += fields
        highlight = None
        document = ranked.highlighted
        if member is HitMember.HIGHLIGHT and document is not None:  # else null: not a full-text search
            options = HighlightOptions.given(get_argument_values(field, fields[0], run.variables))
            at = [*place.path, "hits", key]
            highlight = planner.highlight(document, ranked.rankings[0].query, options, at)
        outputs.append(HitOutput(key, member, highlight=highlight))
    selected: Collected = run.collector.subfields(entity.type_name, node_selections)
    read = Read(
        source=table(entity),
        shape=run.shape(entity, selected, place.at("hits", "node")),
        kind=ReadKind.MANY,
        filter=filter_,
        page=Page(limit=first),
    )
    return SearchSource(read, ranked.rankings, search_key(entity), tuple(outputs), ranked.fusion, type=entity.table)
