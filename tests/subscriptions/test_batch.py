"""Live queries of one shape are read together (SPEC "Subscriptions"): ONE statement for many sets of values, each
set's answer exactly what the same operation read alone answers, whatever the values' types (enums, arrays, JSON,
ranges, dates, numbers, uuids, `in` lists, cursors, page sizes)."""

import json

import pytest

from svc.db import Executor, open_pool
from svc.graphql import GraphqlRequest, LiveQuery
from svc.pipeline import Pipeline
from svc.server import connection_settings
from svc.snapshot import build_snapshot
from tests.support.service import configure

DATABASE_FIXTURES = ["reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "subscriptions": {"enabled": True}}

BOOKS = """subscription($f: BookFilter, $first: Int, $order: [BookOrderBy!]) {
  booksConnection(filter: $f, first: $first, orderBy: $order) {
    totalCount edges { cursor node { title genre tags details available { start { value } end { value } } author { name } } } } }"""

VARIABLE_SETS = [
    {"f": {"genre": {"equalTo": "POETRY"}}, "first": 2},
    {"f": {"genre": {"in": ["FICTION", "POETRY"]}}, "first": 5},
    {"f": {"tags": {"contains": ["classic"]}}, "first": 3},
    {"f": {"details": {"contains": {"awards": 1}}}, "first": 10},
    {"f": {"details": {"hasAnyKeys": ["awards", "series"]}}, "first": 10},
    {"f": {"available": {"overlaps": {"start": {"value": "2001-01-01", "inclusive": True}}}}, "first": 10},
    {"f": {"available": {"containsElement": "2010-06-01"}}, "first": 10},
    {"f": {"price": {"greaterThan": "10.5"}}, "first": 10},
    {"f": {"published": {"lessThan": "2000-01-01"}}, "first": 10},
    {"f": {"title": {"includesInsensitive": "the"}}, "first": 10},
    {"f": {"isbn": {"isNull": False}}, "first": 1},
    {"f": {"genre": {"equalTo": "POETRY"}}, "first": 2},  # the same values again: read once, answered twice
    {"f": {"pages": {"in": []}}, "first": 10},
]


@pytest.fixture
async def live(tmp_path, database_url):
    config = configure(tmp_path, SETTINGS, database_url=database_url).config
    async with open_pool(database_url, connection_settings(config), size=2) as pool:
        executor = Executor(pool)
        snapshot = await build_snapshot(executor, config)
        endpoint = snapshot.api(None).endpoint

        def plan(query: str, variables: dict) -> LiveQuery:
            planned = endpoint.live(GraphqlRequest(query, variables=variables), "test")
            assert isinstance(planned, LiveQuery), planned and planned.body
            return planned

        yield plan, Pipeline(executor), executor


async def test_one_statement_answers_every_set_as_reading_it_alone(live):
    plan, pipeline, executor = live
    queries = [plan(BOOKS, variables) for variables in VARIABLE_SETS]
    # Grouped by shape as the poller groups them; each group is one statement.
    groups: dict = {}
    for query in queries:
        groups.setdefault(query.plan, []).append(query)
    for members in groups.values():
        before = executor.counter.sent
        batch = await pipeline.read_batch(
            members[0].statements,
            members[0].plan,
            [pipeline.batch_texts(m.params.values) for m in members],
            members[0].context,
        )
        assert executor.counter.sent - before == 1
        for member, texts in zip(members, batch, strict=True):
            alone = await pipeline.read(member.statements, member.plan, member.params, member.context)
            assert member.body(texts) == member.body(alone)


async def test_a_shape_without_values(live):
    plan, pipeline, _ = live
    query = plan("subscription { shelves { label } }", {})
    (texts,) = await pipeline.read_batch(
        query.statements, query.plan, [pipeline.batch_texts(query.params.values)], query.context
    )
    alone = await pipeline.read(query.statements, query.plan, query.params, query.context)
    assert query.body(texts) == query.body(alone)


async def test_cursors_and_every_value_reach_their_set(live):
    """Different sets really read different rows (the sets are not mixed up or all answered alike)."""
    plan, pipeline, _ = live
    order = ["TITLE_ASC"]
    query = BOOKS.replace("$first: Int,", "$first: Int, $after: Cursor,").replace(
        "first: $first,", "first: $first, after: $after,"
    )
    every = plan(query, {"first": 10, "order": order})
    titles = _titles(
        every,
        (
            await pipeline.read_batch(
                every.statements, every.plan, [pipeline.batch_texts(every.params.values)], every.context
            )
        )[0],
    )
    cursors = _cursors(every, await pipeline.read(every.statements, every.plan, every.params, every.context))
    sets = [plan(query, {"first": size, "order": order, "after": cursors[at]}) for size, at in ((1, 0), (2, 2), (3, 1))]
    assert len({s.plan for s in sets}) == 1  # a cursor is a value: one shape
    answers = await pipeline.read_batch(
        sets[0].statements, sets[0].plan, [pipeline.batch_texts(s.params.values) for s in sets], sets[0].context
    )
    assert [_titles(s, t) for s, t in zip(sets, answers, strict=True)] == [titles[1:2], titles[3:5], titles[2:5]]


def _titles(query: LiveQuery, texts) -> list[str]:
    return [edge["node"]["title"] for edge in json.loads(query.body(texts))["data"]["booksConnection"]["edges"]]


def _cursors(query: LiveQuery, texts) -> list[str]:
    return [edge["cursor"] for edge in json.loads(query.body(texts))["data"]["booksConnection"]["edges"]]
