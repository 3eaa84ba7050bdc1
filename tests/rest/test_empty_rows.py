"""A created row that gives no column (`{}`) takes every default (`INSERT ... SELECT` of no column): created when the
table has a default for each column, typed `<FIELD>_REQUIRED` (422) when the database needs a value the input type
could not require (a table-per-type subtype's key, which its parent's row may give), never a 500; one row or many,
POST or PUT."""

import pytest

from tests.support.postgres import execute, fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["subtypes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture(scope="module", autouse=True)
def tallies(database_url: str) -> None:
    execute(
        database_url,
        "create table app.tallies (id integer generated always as identity primary key, counted integer default 0)",
    )


@pytest.fixture
async def client(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service.client


@pytest.mark.parametrize("body", [{}, [{}, {}]])
async def test_rows_of_defaults_only_are_created(client, database_url, body):
    before = fetch(database_url, "select count(*) from app.tallies")[0][0]
    response = await client.post("/rest/tallies", json=body)
    assert response.status_code == 201, response.text
    created = response.json() if isinstance(body, list) else [response.json()]
    assert [row["counted"] for row in created] == [0] * len(created)
    assert fetch(database_url, "select count(*) from app.tallies")[0][0] == before + len(created)


@pytest.mark.parametrize(("method", "body"), [("POST", {}), ("POST", [{}]), ("PUT", [{}])])
async def test_a_subtype_row_of_nothing_is_its_keys_required_error(client, database_url, method, body):
    response = await client.request(method, "/rest/cats", json=body)
    assert response.status_code == 422, response.text
    assert (response.json()["code"], response.json()["codeType"]) == ("ROW_ID_REQUIRED", "CatErrorCode")
    assert fetch(database_url, "select count(*) from app.cats") == [(1,)]
