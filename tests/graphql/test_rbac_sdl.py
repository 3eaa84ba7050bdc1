"""The GraphQL SDL of a model pruned to one role's grants (SPEC "What the service does", rule 3), over
tests/fixtures/rbac.sql: valid per graphql-core, equal to its reviewed copy, and without what the role may not do."""

from pathlib import Path

import pytest
from graphql import GraphQLInputObjectType, GraphQLObjectType, validate_schema

from svc.graphql import build_graphql_schema
from svc.model import SERVICE_TYPE_NAMES, composite_type_names, enum_type_names, prune_model, range_type_names
from tests.support.golden import assert_golden
from tests.support.model import read_catalog_and_model

DATABASE_FIXTURES = ["rbac.sql"]
SNAPSHOTS = Path(__file__).parent / "snapshots"
ROLES = ["svc_rbac_clerk", "svc_rbac_reader", "svc_rbac_owner"]
BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


@pytest.fixture(scope="module")
def read(database_url, tmp_path_factory):
    return read_catalog_and_model(
        database_url, tmp_path_factory.mktemp("rbac_sdl"), {"database": {"schemas": ["app"]}}, roles=ROLES
    )


@pytest.fixture(scope="module", params=ROLES)
def pruned(request, read):
    """(role, pruned model, its GraphQL schema)."""
    catalog, model = read
    pruned = prune_model(model, catalog, request.param)
    return request.param, pruned, build_graphql_schema(pruned)


@pytest.fixture(scope="module")
def clerk_sdl(read):
    catalog, model = read
    return build_graphql_schema(prune_model(model, catalog, "svc_rbac_clerk"))


@pytest.fixture(scope="module")
def clerk(clerk_sdl):
    return clerk_sdl.schema


def fields(schema, name):
    type_ = schema.get_type(name)
    assert isinstance(type_, GraphQLObjectType | GraphQLInputObjectType), name
    return set(type_.fields)


def test_the_pruned_schema_is_valid(pruned):
    _, _, schema = pruned
    assert validate_schema(schema.schema) == []


def test_the_clerk_sdl_equals_its_reviewed_copy(clerk_sdl):
    assert_golden(SNAPSHOTS / "rbac_clerk.graphql", clerk_sdl.sdl)


def test_every_type_comes_from_the_pruned_model_or_the_service(pruned):
    _, model, schema = pruned
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


def test_a_hidden_table_has_no_types_or_root_fields(clerk):
    names = set(clerk.type_map)
    assert not {name for name in names if name.startswith(("Secret", "Assignment"))}
    assert not {name for name in names if "Secrets" in name or "Assignments" in name}
    assert not {"secret", "secrets", "secretsConnection", "assignments"} & fields(clerk, "Query")
    assert "Clearance" not in names  # only the hidden clearance column used it
    assert {"secret", "secretId"} & fields(clerk, "Employee") == {"secretId"}  # the column stays, not the relation


def test_a_hidden_column_is_in_no_type(clerk):
    for name in ("Employee", "EmployeeCondition", "EmployeeFilter", "CreateEmployeeInput", "UpdateEmployeeInput"):
        assert "salary" not in fields(clerk, name), name
    order_by = clerk.get_type("EmployeeOrderBy")
    assert not [value for value in order_by.values if "SALARY" in value]
    assert "EMAIL_ASC" in order_by.values


def test_aggregates_are_only_of_columns_the_role_may_read(clerk, read):
    """SPEC RBAC: salary (numeric, hidden from the clerk) is in no aggregate, group key or group condition; the
    owner, who reads it, has it everywhere."""
    members = ("Sum", "Avg", "Min", "Max", "DistinctCount", "Median", "Percentile", "VarianceSample")
    for member in members:
        assert "salary" not in fields(clerk, f"Employee{member}Aggregates"), member
    assert "salary" not in fields(clerk, "EmployeeAggregateFilter")
    assert not [value for value in clerk.get_type("EmployeeGroupBy").values if "SALARY" in value]
    catalog, model = read
    owner = build_graphql_schema(prune_model(model, catalog, "svc_rbac_owner")).schema
    for member in members:
        assert "salary" in fields(owner, f"Employee{member}Aggregates"), member
    assert "SALARY_BINNED" in owner.get_type("EmployeeGroupBy").values


def test_inputs_hold_the_columns_the_role_may_insert_or_update(clerk):
    create, update = fields(clerk, "CreateEmployeeInput"), fields(clerk, "UpdateEmployeeInput")
    assert {"departmentId", "managerId", "name", "email"} <= create
    assert "mood" not in create and "rowId" not in create  # no INSERT on them
    assert {"email", "mood"} <= update
    assert not {"name", "departmentId", "managerId"} & update  # no UPDATE on them
    # A relation's nested writes set its key columns: department_id may be inserted, not updated.
    assert "department" in create and "department" not in update


def test_no_mutation_without_its_privilege(clerk):
    mutations = fields(clerk, "Mutation")
    assert {"createEmployee", "updateEmployee", "updateEmployeeByNodeId", "updateEmployees"} <= mutations
    assert not {"deleteEmployee", "deleteEmployeeByNodeId", "deleteEmployees"} & mutations  # no DELETE
    assert not [name for name in mutations if "Department" in name and name != "renameDepartment"]  # read only
    assert "createAnnouncement" in mutations
    assert not {"updateAnnouncement", "deleteAnnouncement"} & mutations  # its key is unreadable
    assert clerk.get_type("DeleteEmployeePayload") is None


def test_a_primary_key_the_role_may_not_read_gives_no_node_or_lookup(clerk):
    announcement = clerk.get_type("Announcement")
    assert not announcement.interfaces
    assert fields(clerk, "Announcement") == {"body", "postedAt"}
    assert "announcement" not in fields(clerk, "Query")
    assert {"announcements", "announcementsConnection"} <= fields(clerk, "Query")


def test_functions_the_role_may_not_execute_are_absent(clerk):
    query = fields(clerk, "Query")
    assert "departmentNames" in query
    assert "payrollTotal" not in query  # no EXECUTE
    assert "allSecrets" not in query  # rows of a hidden table
    assert "renameDepartment" in fields(clerk, "Mutation")
    assert fields(clerk, "Department") >= {"headcount"} and "budget" not in fields(clerk, "Department")
    assert "label" not in fields(clerk, "Employee")


def test_a_role_that_writes_nothing_has_no_mutation_type(read):
    catalog, model = read
    schema = build_graphql_schema(prune_model(model, catalog, "svc_rbac_reader")).schema
    assert schema.mutation_type is None
    assert set(fields(schema, "Query")) == {
        "node", "department", "departmentByName", "departments", "departmentsConnection", "project", "projects",
        "projectsConnection", "departmentNames",
    }  # fmt: skip
