"""The model pruned to one role's grants (SPEC "What the service does", rule 3: "With `rbac.enabled: true` the APIs
are pruned to what the connecting role may access"), over tests/fixtures/rbac.sql: a table the clerk may not touch, one
it may only read, column grants (a hidden column, INSERT on some columns, UPDATE on others, no DELETE), a key it may
not read, a junction it may not read, relations to a hidden table, and functions it may or may not execute."""

import attrs
import pytest

from svc.errors import SvcError
from svc.model import EntityRef, ModelError, Operation, prune_model
from svc.plan import WriteInputs
from tests.support.model import read_catalog_and_model

DATABASE_FIXTURES = ["rbac.sql"]
ROLES = ["svc_rbac_clerk", "svc_rbac_reader", "svc_rbac_owner"]
READS = {Operation.READ, Operation.LIST, Operation.CONNECTION}


@pytest.fixture(scope="module")
def read(database_url, tmp_path_factory):
    """(catalog, unpruned model), privileges read for every role of the fixture."""
    return read_catalog_and_model(
        database_url, tmp_path_factory.mktemp("rbac"), {"database": {"schemas": ["app"]}}, roles=ROLES
    )


@pytest.fixture(scope="module")
def model(read):
    return read[1]


@pytest.fixture(scope="module")
def clerk(read):
    catalog, model = read
    return prune_model(model, catalog, "svc_rbac_clerk")


@pytest.fixture(scope="module")
def reader(read):
    catalog, model = read
    return prune_model(model, catalog, "svc_rbac_reader")


def entity(model, table):
    return model.entity(EntityRef("app", table))


def types(model):
    return [e.type_name for e in model.entities]


def test_the_fixture_reads_every_table_and_function_unpruned(model):
    assert types(model) == ["Announcement", "Assignment", "Department", "Employee", "Preference", "Project", "Secret"]
    assert [f.name for f in model.functions] == ["allSecrets", "departmentNames", "payrollTotal", "renameDepartment"]


def test_tables_the_role_may_not_read_are_gone(clerk, reader):
    # secrets: no grant; assignments: no grant; preferences: only a json column (its Condition would be empty).
    assert types(clerk) == ["Announcement", "Department", "Employee", "Project"]
    assert types(reader) == ["Department", "Project"]


def test_a_table_the_role_may_only_read_keeps_its_reads(model, clerk):
    departments = entity(clerk, "departments")
    assert departments.operations == READS
    assert departments.fields == tuple(
        attrs.evolve(f, insertable=False, updatable=False) for f in entity(model, "departments").fields
    )
    assert [lookup.name for lookup in departments.lookups] == ["department", "departmentByName"]
    assert departments.node
    assert departments.mutation_fields() == ()


def test_column_grants_narrow_fields_inputs_and_operations(clerk):
    employees = entity(clerk, "employees")
    assert [f.name for f in employees.fields] == [
        "rowId",
        "departmentId",
        "managerId",
        "secretId",
        "name",
        "email",
        "mood",
    ]  # fmt: skip  (salary and clearance hidden)
    assert [f.name for f in employees.fields if f.insertable] == ["departmentId", "managerId", "name", "email"]
    assert [f.name for f in employees.fields if f.updatable] == ["email", "mood"]
    assert employees.operations == READS | {Operation.CREATE, Operation.UPDATE}  # no DELETE granted
    assert employees.node and employees.primary_key == ("id",)
    assert [lookup.name for lookup in employees.lookups] == ["employee", "employeeByEmail"]
    assert "deleteEmployee" not in employees.mutation_fields()


def test_a_primary_key_the_role_may_not_read_is_no_key(model, clerk):
    """UPDATE and DELETE are granted on announcements, but the row is found by a key the clerk may not read."""
    announcements = entity(clerk, "announcements")
    assert announcements.primary_key is None and not announcements.node and announcements.lookups == ()
    assert announcements.operations == READS | {Operation.CREATE}
    # INSERT is granted on id too, but a column the role may not read is in no input: the write answers the row.
    assert [(f.name, f.insertable, f.updatable) for f in announcements.fields] == [
        ("body", True, True),
        ("postedAt", False, False),
    ]
    assert entity(model, "announcements").node


def test_relations_need_their_target_and_the_columns_they_join(model, clerk):
    """secret (a hidden table) and projects/assignments (a hidden junction) go; the rest stays."""
    assert [r.name for r in entity(model, "employees").relations] == [
        "department", "manager", "secret", "assignments", "employeesByManagerId", "projects",
    ]  # fmt: skip
    assert [r.name for r in entity(clerk, "employees").relations] == ["department", "manager", "employeesByManagerId"]
    assert [r.name for r in entity(clerk, "departments").relations] == ["employees"]
    assert entity(clerk, "projects").relations == ()
    assert [h.ancestors for h in entity(clerk, "employees").hierarchies] == ["ancestors"]


def test_nested_writes_need_the_columns_they_set(clerk):
    """department_id may be inserted, not updated; manager_id, the reports' key, may be inserted (nested create)."""
    relations = {r.name: r for r in entity(clerk, "employees").relations}
    assert (relations["department"].insertable, relations["department"].updatable) == (True, False)
    assert (relations["manager"].insertable, relations["manager"].updatable) == (True, False)
    assert (relations["employeesByManagerId"].insertable, relations["employeesByManagerId"].updatable) == (True, True)


def test_functions_need_execute_and_their_result_type(model, clerk, reader):
    # payrollTotal: no EXECUTE; allSecrets: executable, but returns rows of a hidden table.
    assert [f.name for f in clerk.functions] == ["departmentNames", "renameDepartment"]
    assert [f.name for f in reader.functions] == ["departmentNames"]
    assert [c.name for c in entity(model, "departments").computed] == ["budget", "headcount"]
    assert [c.name for c in entity(clerk, "departments").computed] == ["headcount"]  # budget: no EXECUTE
    # label is executable, but its row argument is the whole row, and salary and clearance are hidden.
    assert [c.name for c in entity(model, "employees").computed] == ["label"]
    assert entity(clerk, "employees").computed == ()


def test_types_only_pruned_columns_used_go(model, clerk, reader):
    assert [e.name for e in model.enums] == ["Mood", "Clearance"]
    assert [e.name for e in clerk.enums] == ["Mood"]  # clearance: a hidden column's type
    assert reader.enums == ()


def test_names_and_error_codes_do_not_change(model, clerk):
    for pruned in clerk.entities:
        whole = model.entity(pruned.ref)
        assert (pruned.type_name, pruned.roots, pruned.error_codes) == (whole.type_name, whole.roots, whole.error_codes)
    assert "SALARY_OUT_OF_RANGE" in [c.code for c in entity(clerk, "employees").error_codes]


def test_a_reader_writes_nothing(reader):
    assert all(e.operations == READS and e.mutation_fields() == () for e in reader.entities)
    assert not any(f.mutation for f in reader.functions)


@pytest.mark.parametrize("role", ["svc_rbac_owner", "the connecting role"])
def test_a_role_with_every_privilege_sees_the_whole_model(read, role):
    catalog, model = read
    pruned = prune_model(model, catalog, catalog.current_user if role == "the connecting role" else role)
    assert pruned == model


def test_a_role_whose_privileges_were_not_read_is_refused(read):
    catalog, model = read
    with pytest.raises(ModelError) as raised:
        prune_model(model, catalog, "svc_rbac_nobody")
    (problem,) = raised.value.problems
    assert problem.startswith("rbac: the privileges of role 'svc_rbac_nobody' were not read (read for: ")


# --- what a write input may set (the planner reads the pruned flags; a REST body is checked only there) ----------


def refusal(call) -> str:
    with pytest.raises(SvcError) as raised:
        call()
    return str(raised.value)


def test_write_inputs_refuse_what_the_role_may_not_write(clerk):
    inputs, employees = WriteInputs(clerk), entity(clerk, "employees")
    row = {"departmentId": 1, "name": "Ada"}
    assert "mood is read-only" in refusal(lambda: inputs.create(employees, {**row, "mood": "CALM"}, ("input",)))
    assert "name is read-only" in refusal(lambda: inputs.update(employees, None, {"name": "Bo"}, ("set",)))
    moved = {"department": {"connect": {"rowId": 2}}}
    assert "department is read-only" in refusal(lambda: inputs.update(employees, None, moved, ("set",)))
    assert inputs.update(employees, None, {"email": "a@b.c", "mood": "BUSY"}, ("set",)).values.columns() == (
        "email",
        "mood",
    )


def test_an_upsert_updates_only_what_the_role_may_update(clerk):
    """By default an upsert updates the columns the input sets (but the key's): here name may be inserted only."""
    inputs, employees = WriteInputs(clerk), entity(clerk, "employees")
    row = {"departmentId": 1, "name": "Ada", "email": "ada@example.com"}
    write = inputs.create(employees, row, ("input",), on_conflict={"columns": ["email"]})
    assert write.on_conflict.columns == ("email",) and write.on_conflict.update == ()
    asked = {"columns": ["email"], "update": ["name"]}
    assert "'name' is not a writable field" in refusal(
        lambda: inputs.create(employees, row, ("input",), on_conflict=asked)
    )
