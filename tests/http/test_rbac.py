"""RBAC pruning served (SPEC rule 3 of "What the service does", issue 7 item 3): with `rbac.enabled` each request is
answered by the APIs of the role it runs as (the authenticated or the anonymous role), computed once per role in
the snapshot: its GraphQL schema, its REST resources, and the SDL as a request without a token sees it."""

import time

import jwt
import pytest

from svc.plan import encode_global_id
from tests.support.postgres import execute
from tests.support.service import running_service

DATABASE_FIXTURES = ["rbac.sql"]
SECRET = "a-shared-secret-of-at-least-32-bytes!"
SETTINGS = {
    "database": {"schemas": ["app"]},
    "graphql": {"sdl": True, "introspection": True},
    "rbac": {"enabled": True},
    "auth": {"roles": {"authenticated": "svc_rbac_clerk", "anonymous": "svc_rbac_reader"}},
}


@pytest.fixture
async def client(tmp_path, database_url):
    environ = {"AUTH_JWT_SECRET": SECRET}
    async with running_service(tmp_path, database_url, SETTINGS, environ=environ) as service:
        yield service.client


def clerk() -> dict[str, str]:
    now = int(time.time())
    token = jwt.encode({"sub": "clerk", "iat": now, "exp": now + 300}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


async def fields_of(client, type_name: str, headers: dict | None = None) -> set[str] | None:
    query = "query($n: String!) { __type(name: $n) { fields { name } inputFields { name } } }"
    response = await client.post("/graphql", json={"query": query, "variables": {"n": type_name}}, headers=headers)
    found = response.json()["data"]["__type"]
    return None if found is None else {f["name"] for f in (found["fields"] or found["inputFields"] or [])}


async def test_each_role_gets_its_own_graphql_schema(client):
    reader_mutations = await fields_of(client, "Mutation")
    clerk_mutations = await fields_of(client, "Mutation", clerk())
    assert reader_mutations is None  # the reader writes nothing: no Mutation type at all
    assert clerk_mutations is not None and "createEmployee" in clerk_mutations
    assert not {m for m in clerk_mutations if m.startswith("delete") and "Employee" in m}  # no DELETE grant
    create = await fields_of(client, "CreateEmployeeInput", clerk())
    update = await fields_of(client, "UpdateEmployeeInput", clerk())
    assert create is not None and update is not None
    columns = {"rowId", "departmentId", "managerId", "secretId", "name", "email", "mood", "salary", "clearance"}
    assert create & columns == {"departmentId", "managerId", "name", "email"}  # and nested writes of relations
    assert update & columns == {"email", "mood"}
    employee = await fields_of(client, "Employee", clerk())
    assert employee is not None and not {"salary", "clearance"} & employee
    assert await fields_of(client, "Secret", clerk()) is None
    assert await fields_of(client, "Employee") is None  # the reader may not read employees


async def test_a_pruned_field_is_refused_before_any_sql(client):
    response = await client.post("/graphql", json={"query": "{ employees { salary } }"}, headers=clerk())
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


async def test_the_sdl_is_the_schema_a_request_without_a_token_sees(client):
    sdl = (await client.get("/schema.graphql")).text
    assert "type Department " in sdl and "type Employee " not in sdl and "type Mutation" not in sdl


async def test_each_role_gets_its_own_rest_resources(client):
    reader = {r["name"] for r in (await client.get("/rest")).json()["resources"]}
    clerks = {r["name"] for r in (await client.get("/rest", headers=clerk())).json()["resources"]}
    assert reader == {"departments", "projects"}
    assert {"departments", "projects", "employees", "announcements"} <= clerks
    assert not {"secrets", "assignments"} & clerks
    assert (await client.get("/rest/secrets", headers=clerk())).status_code == 404
    assert (await client.get("/rest/employees")).status_code == 404  # not the reader's
    # Pruned columns are unknown columns of the REST API too.
    hidden = await client.get("/rest/employees?fields=name,salary", headers=clerk())
    assert hidden.status_code == 400 and hidden.json()["field"] == "fields"
    listed = await client.get("/rest/employees?order=id", headers=clerk())
    assert listed.status_code == 200
    assert all("salary" not in row and "clearance" not in row for row in listed.json())
    # No DELETE grant on employees, and departments are read-only for the clerk: operations not permitted (403).
    assert (await client.delete("/rest/employees/1", headers=clerk())).status_code == 403
    assert (await client.post("/rest/departments", json={"id": 9, "name": "x"}, headers=clerk())).status_code == 403


async def test_options_on_a_resource_the_role_cannot_see_is_404(client):
    """The global ID of a row the reader may not read names nothing the reader is served: OPTIONS is 404 too."""
    employee = f"/rest/node/{encode_global_id('Employee', 1)}"
    options, got = await client.options(employee), await client.get(employee)
    assert (options.status_code, got.status_code, "allow" in options.headers) == (404, 404, False)
    department = f"/rest/node/{encode_global_id('Department', 1)}"
    assert (await client.options(department)).headers["allow"] == "GET, HEAD, OPTIONS"


async def test_each_role_gets_its_own_openapi_document(tmp_path, database_url):
    settings = {**SETTINGS, "openapi": {"spec": True}}
    environ = {"AUTH_JWT_SECRET": SECRET}
    async with running_service(tmp_path, database_url, settings, environ=environ) as service:
        reader = (await service.client.get("/openapi.json")).json()
        clerks = (await service.client.get("/openapi.json", headers=clerk())).json()
    assert "/rest/employees" not in reader["paths"] and "/rest/departments" in reader["paths"]
    assert "post" not in reader["paths"]["/rest/departments"]  # the reader writes nothing
    employees = clerks["paths"]["/rest/employees"]
    assert {"get", "post", "patch"} <= set(employees) and "delete" not in employees
    assert "/rest/secrets" not in clerks["paths"]
    row = clerks["components"]["schemas"]["Employee"]["properties"]
    assert not {"salary", "clearance"} & set(row)
    assert set(clerks["components"]["schemas"]["EmployeeUpdate"]["properties"]) & {"email", "mood", "name"} == {
        "email",
        "mood",
    }
    # A bad token is refused, not answered as anonymous.
    async with running_service(tmp_path, database_url, settings, environ=environ) as service:
        refused = await service.client.get("/openapi.json", headers={"Authorization": "Bearer nope"})
    assert refused.status_code == 401


async def test_a_role_with_column_grants_writes_what_it_is_offered(client, database_url):
    """Writes answer only the columns the role may read (a statement naming another is refused whole)."""
    execute(database_url, "insert into app.departments (id, name) values (1, 'Sales') on conflict do nothing")
    created = await client.post(
        "/rest/employees", json={"departmentId": 1, "name": "Kim", "email": "kim@example.com"}, headers=clerk()
    )
    assert created.status_code == 201, created.text
    row = created.json()
    assert row["name"] == "Kim" and "salary" not in row and row["rowVersion"] is None
    changed = await client.patch(f"/rest/employees/{row['id']}", json={"mood": "BUSY"}, headers=clerk())
    assert changed.status_code == 200, changed.text
    assert changed.json()["mood"] == "BUSY"
    graphql = await client.post(
        "/graphql",
        json={"query": 'mutation { createEmployee(input: {departmentId: 1, name: "Lee"}) { employee { name } } }'},
        headers=clerk(),
    )
    assert graphql.json() == {"data": {"createEmployee": {"employee": {"name": "Lee"}}}}
    refused = await client.patch(f"/rest/employees/{row['id']}", json={"name": "x"}, headers=clerk())
    assert refused.status_code == 400  # not an updatable column for the clerk: unknown in its update body


async def test_a_role_that_may_delete_but_not_update_deletes_by_key(tmp_path, database_url):
    """A delete by key takes no lock of its own (FOR UPDATE would need the UPDATE privilege)."""
    execute(database_url, "insert into app.projects (id, title) values (41, 'gone soon') on conflict do nothing")
    settings = {**SETTINGS, "auth": {"roles": {"authenticated": "svc_rbac_shredder", "anonymous": "svc_rbac_reader"}}}
    async with running_service(tmp_path, database_url, settings, environ={"AUTH_JWT_SECRET": SECRET}) as service:
        deleted = await service.client.delete("/rest/projects/41", headers=clerk())
        assert deleted.status_code == 200, deleted.text
        assert deleted.json() == {"id": 41, "title": "gone soon", "rowVersion": None}
        # With If-Match the row must be locked to check its version: the database refuses that lock.
        execute(database_url, "insert into app.projects (id, title) values (42, 'kept') on conflict do nothing")
        checked = await service.client.delete("/rest/projects/42", headers={**clerk(), "If-Match": '"1"'})
        assert checked.status_code == 403 and checked.json()["code"] == "PERMISSION_DENIED"
