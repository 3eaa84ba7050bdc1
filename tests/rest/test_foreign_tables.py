"""postgres_fdw foreign tables (SPEC "Extension integrations", issue 23): the keys of the table a foreign table stands
for are read from its server's catalog (in the foreign table's own column names, a `column_name` option followed),
so it gets lookups, updates and deletes like a table; reads and writes go through it to the other database; a remote
primary-key or unique violation is typed like a local one; keys in config win; `extensions.integrations
.postgres_fdw: off` reads no remote catalog; a server that cannot be reached or has no user mapping is a startup
warning. The remote is a second database on the same server (tests/fixtures/fdw_remote.sql)."""

import logging
from collections.abc import Iterator

import pytest
from openapi_spec_validator import validate

from tests.support.fdw import make_foreign_tables
from tests.support.postgres import fetch, fresh_database
from tests.support.service import running_service

DATABASE_FIXTURES = ["fdw_local.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture(scope="module")
def remote_url(pg_server: str) -> Iterator[str]:
    with fresh_database(pg_server, "fdw_remote", ["fdw_remote.sql"]) as url:
        yield url


@pytest.fixture(scope="module", autouse=True)
def foreign_tables(database_url: str, remote_url: str) -> None:
    make_foreign_tables(database_url, remote_url)


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS, mode="dev") as running:
        yield running


def stock(remote_url: str) -> list[tuple[str, str, int]]:
    return fetch(remote_url, "select sku, bin, quantity from warehouse.stock_levels order by sku")


async def test_the_remote_keys_give_lookups_in_the_foreign_tables_own_column_names(service):
    response = await service.client.get("/rest/stock/BT-1")
    assert response.status_code == 200, response.text
    # A foreign table has no system transaction id: like a view's, its rows' version is null.
    assert response.json() == {"sku": "BT-1", "location": "A1", "quantity": 5, "rowVersion": None}
    answer = await service.client.post(
        "/graphql",
        json={"query": '{ stock(sku: "BT-2") { location quantity } stockByLocation(location: "A1") { sku } }'},
    )
    assert answer.json() == {"data": {"stock": {"location": "A2", "quantity": 0}, "stockByLocation": {"sku": "BT-1"}}}
    document = (await service.client.get("/openapi.json")).json()
    validate(document)
    assert "/rest/stock/{sku}" in document["paths"]
    assert {"get", "patch", "delete"} <= set(document["paths"]["/rest/stock/{sku}"])


async def test_reads_and_writes_go_through_the_foreign_table_to_the_remote_database(service, remote_url):
    created = await service.client.post("/rest/stock", json={"sku": "BT-3", "location": "A3", "quantity": 1})
    assert created.status_code == 201, created.text
    assert created.json() == {"sku": "BT-3", "location": "A3", "quantity": 1, "rowVersion": None}
    updated = await service.client.patch("/rest/stock/BT-3", json={"quantity": 7})
    assert updated.status_code == 200, updated.text
    assert ("BT-3", "A3", 7) in stock(remote_url)
    answer = await service.client.post(
        "/graphql", json={"query": 'mutation { deleteStock(sku: "BT-3") { stock { sku } } }'}
    )
    assert answer.json() == {"data": {"deleteStock": {"stock": {"sku": "BT-3"}}}}, answer.text
    assert stock(remote_url) == [("BT-1", "A1", 5), ("BT-2", "A2", 0)]
    listed = await service.client.get("/rest/stock", params={"order": "-sku"})
    assert [row["sku"] for row in listed.json()] == ["BT-2", "BT-1"]


async def test_a_remote_key_violation_is_typed_like_a_local_one(service, remote_url):
    before = stock(remote_url)
    taken = await service.client.post("/rest/stock", json={"sku": "BT-1", "location": "Z9", "quantity": 1})
    assert taken.status_code == 409, taken.text
    problem = taken.json()
    assert (problem["code"], problem["codeType"], problem["fields"]) == ("SKU_TAKEN", "StockErrorCode", ["input.sku"])
    assert problem["detail"] == 'duplicate key value violates unique constraint "stock_levels_pkey"'
    answer = await service.client.post(
        "/graphql",
        json={"query": 'mutation { createStock(input: {sku: "BT-9", location: "A2", quantity: 1}) { stock { sku } } }'},
    )
    (error,) = answer.json()["errors"]
    assert (error["extensions"]["code"], error["extensions"]["type"]) == ("LOCATION_TAKEN", "StockErrorCode")
    assert stock(remote_url) == before


async def test_a_remote_check_violation_is_typed_like_a_local_one(service, remote_url):
    before = stock(remote_url)
    refused = await service.client.patch("/rest/stock/BT-1", json={"quantity": -1})
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert (problem["code"], problem["codeType"], problem["fields"]) == (
        "QUANTITY_INVALID", "StockErrorCode", ["input.quantity"],
    )  # fmt: skip
    assert stock(remote_url) == before
    document = (await service.client.get("/openapi.json")).json()
    # no upserts through a foreign table: PUT is neither served nor documented
    assert "put" not in document["paths"]["/rest/stock/{sku}"] and "put" not in document["paths"]["/rest/stock"]
    assert (
        await service.client.put("/rest/stock/BT-1", json={"sku": "BT-1", "location": "A1", "quantity": 1})
    ).status_code == 405


async def test_a_table_without_a_remote_key_and_unreadable_servers_get_no_key(service, caplog):
    listed = await service.client.get("/rest/ledger")
    assert (listed.status_code, listed.json()) == (200, [{"note": "opened"}])
    document = (await service.client.get("/openapi.json")).json()
    keyed = [
        path
        for path in document["paths"]
        if path.startswith(("/rest/ledger/{", "/rest/elsewhere/{", "/rest/unmapped/{"))
    ]
    assert keyed == []
    # reading them: the database cannot reach the server, or the role has no user mapping (masked, not a schema
    # change that would reload the snapshot)
    unreachable = await service.client.get("/rest/elsewhere")
    assert (unreachable.status_code, unreachable.json()["code"]) == (503, "SOURCE_UNAVAILABLE"), unreachable.text
    unmapped = await service.client.get("/rest/unmapped")
    assert (unmapped.status_code, unmapped.json()["code"]) == (500, "INTERNAL_SERVER_ERROR"), unmapped.text
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert not [w for w in warnings if "schema reload" in w]
    assert any(w.startswith("postgres_fdw server closed: its catalog could not be read (") for w in warnings), warnings
    assert any(w.startswith("postgres_fdw server unmapped: no user mapping for ") for w in warnings), warnings


def integrations_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("extension integrations active")]


async def test_a_key_in_config_wins_and_the_integration_can_be_turned_off(tmp_path, database_url, caplog):
    caplog.set_level("INFO", logger="svc")
    configured = {**SETTINGS, "entities": {"stock": {"primary_key": ["location"]}}}
    async with running_service(tmp_path / "configured", database_url, configured) as service:
        response = await service.client.get("/rest/stock/A2")
        assert response.json() == {"sku": "BT-2", "location": "A2", "quantity": 0, "rowVersion": None}
    assert integrations_logged(caplog) == [
        "extension integrations active: postgres_fdw (remote keys of 1 foreign table)"
    ]
    caplog.clear()
    off = {**SETTINGS, "extensions": {"integrations": {"postgres_fdw": "off"}}}
    async with running_service(tmp_path / "off", database_url, off, mode="dev") as service:
        document = (await service.client.get("/openapi.json")).json()
        assert not any(path.startswith("/rest/stock/{") for path in document["paths"])
    assert not any("postgres_fdw server" in r.getMessage() for r in caplog.records)
    assert integrations_logged(caplog) == ["extension integrations active: none"]


async def test_foreign_tables_served_to_authenticated_requests_are_advised_at_startup(tmp_path, database_url, caplog):
    secret = {"AUTH_JWT_SECRET": "a-secret-of-at-least-thirty-two-bytes!"}
    async with running_service(tmp_path / "authenticated", database_url, SETTINGS, environ=secret):
        pass
    advised = sorted(r.getMessage().split(" (")[0] for r in caplog.records if r.getMessage().startswith("advice: "))
    assert advised == ["advice: app.elsewhere", "advice: app.ledger", "advice: app.stock", "advice: app.unmapped"]
    caplog.clear()
    async with running_service(tmp_path / "anonymous", database_url, SETTINGS):
        pass
    assert not [r for r in caplog.records if r.getMessage().startswith("advice: ")]
