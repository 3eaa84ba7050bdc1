"""The generated GraphQL SDL (SPEC "Resources and their fields"): valid per graphql-core, every type accounted for,
answerable to an introspection query, and equal to its reviewed golden copy in tests/graphql/snapshots/."""

from functools import partial
from pathlib import Path

import pytest
import trio
from graphql import get_introspection_query, graphql_sync

from svc.graphql import build_graphql_schema
from svc.model import SERVICE_TYPE_NAMES, composite_type_names, enum_type_names, range_type_names
from tests.support.golden import assert_golden
from tests.support.model import read_model
from tests.support.postgres import PAGILA, fresh_database

SNAPSHOTS = Path(__file__).parent / "snapshots"
CASES = {
    "pagila": (PAGILA, ["public"]),
    "catalog_features": (["catalog_features.sql"], ["app_public", "app_private"]),
    "demo": (["../../svc/demo.sql"], ["app_public"]),
    "model_blog": (["model_blog.sql"], ["app_public"]),
}
BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, pg_server, tmp_path_factory):
    """Built once per case (a Trio run of its own: Trio fixtures cannot outlive a test)."""
    fixtures, schemas = CASES[request.param]
    directory = tmp_path_factory.mktemp(request.param)
    with fresh_database(pg_server, f"sdl_{request.param}", fixtures) as url:
        _, model = trio.run(partial(read_model, url, directory, {"database": {"schemas": schemas}}))
        yield request.param, model, build_graphql_schema(model)


def test_the_sdl_equals_its_reviewed_copy(case):
    name, _, schema = case
    assert_golden(SNAPSHOTS / f"{name}.graphql", schema.sdl)


def test_every_type_comes_from_the_model_or_the_service(case):
    _, model, schema = case
    known = set(SERVICE_TYPE_NAMES) | BUILT_IN
    for entity in model.entities:
        known |= set(entity.names.all())
    for enum in model.enums:
        known |= set(enum_type_names(enum.name))
    for composite in model.composites:
        known |= set(composite_type_names(composite.name))
    for range_type in model.ranges:
        known |= set(range_type_names(range_type.name))
    known |= {record.name for record in model.records}
    generated = {name for name in schema.schema.type_map if not name.startswith("__")}
    assert generated - known == set()


def test_introspection_answers(case):
    _, _, schema = case
    result = graphql_sync(schema.schema, get_introspection_query(descriptions=True))
    assert result.errors is None
    assert result.data["__schema"]["queryType"]["name"] == "Query"
