"""The generated GraphQL SDL (SPEC "Resources and their fields"): valid per graphql-core, every type accounted for,
answerable to an introspection query, and equal to its reviewed golden copy in tests/graphql/snapshots/."""

import random
from functools import partial
from pathlib import Path

import attrs
import pytest
import trio
from graphql import ExecutionResult, experimental_execute_incrementally, get_introspection_query, parse

from svc.graphql import build_graphql_schema
from svc.model import SERVICE_TYPE_NAMES, composite_type_names, enum_type_names, prune_model, range_type_names
from tests.support.catalog import read_database_catalog
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
    """(name, model, schema, catalog), built once per case (a Trio run of its own: Trio fixtures cannot outlive a
    test)."""
    fixtures, schemas = CASES[request.param]
    directory = tmp_path_factory.mktemp(request.param)
    with fresh_database(pg_server, f"sdl_{request.param}", fixtures) as url:
        _, model = trio.run(partial(read_model, url, directory, {"database": {"schemas": schemas}}))
        yield request.param, model, build_graphql_schema(model), read_database_catalog(url, schemas)


def test_the_sdl_equals_its_reviewed_copy(case):
    name, _, schema, _ = case
    assert_golden(SNAPSHOTS / f"{name}.graphql", schema.sdl)


def test_every_type_comes_from_the_model_or_the_service(case):
    _, model, schema, _ = case
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
    _, _, schema, _ = case
    # The schema declares @defer and @stream: graphql-core runs it with its incremental executor only.
    result = experimental_execute_incrementally(schema.schema, parse(get_introspection_query(descriptions=True)))
    assert isinstance(result, ExecutionResult) and result.errors is None
    assert result.data["__schema"]["queryType"]["name"] == "Query"


def test_pruning_for_the_connecting_role_changes_nothing(case):
    """SPEC "What the service does", rule 3: the connecting role (which loaded, so owns, every object here) may do
    everything, so `rbac` pruning for it gives the whole model."""
    _, model, _, catalog = case
    assert prune_model(model, catalog, catalog.current_user) == model


@pytest.mark.parametrize("seed", range(8))
def test_whatever_the_grants_the_pruned_schema_is_valid(case, seed):
    """Nothing dangles after pruning: random table, column and EXECUTE grants of a made-up role, pruned and built."""
    _, model, _, catalog = case
    pruned = prune_model(model, _granted(catalog, "svc_made_up", random.Random(seed)), "svc_made_up")
    build_graphql_schema(pruned)  # SchemaBuildError when graphql-core finds the schema invalid


def _granted(catalog, role, rng):
    """The catalog as if `role` held random privileges: on whole tables, on single columns, or both, some sparse,
    some dense; EXECUTE on about half the functions."""
    density = rng.choice([0.1, 0.3, 0.5, 0.8, 0.95])

    def some(privileges):
        return frozenset(p for p in privileges if rng.random() < density)

    relations = []
    for relation in catalog.relations:
        table = some(("SELECT", "INSERT", "UPDATE", "DELETE")) if rng.random() < 0.6 else frozenset()
        column_grants = rng.random() < 0.7
        columns = tuple(
            attrs.evolve(
                c,
                privileges={
                    role: (table - {"DELETE"})
                    | (some(("SELECT", "INSERT", "UPDATE")) if column_grants else frozenset())
                },
            )
            for c in relation.columns
        )
        relations.append(attrs.evolve(relation, columns=columns, privileges={role: table}))
    functions = tuple(attrs.evolve(f, executable={role: rng.random() < 0.5}) for f in catalog.functions)
    return attrs.evolve(catalog, relations=tuple(relations), functions=functions, roles=(role,))
