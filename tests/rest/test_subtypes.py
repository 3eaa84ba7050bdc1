"""Table-per-type subtypes over REST (SPEC "List query parameters": "Subtype columns of a table-per-type parent can
be filtered and ordered; parent rows include `__typename` and the subtype columns"; issue 23). Fixture
tests/fixtures/subtypes.sql: animals, their subtypes dogs and cats, and puppies, a subtype of dogs."""

import pytest
from openapi_spec_validator import validate

from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["subtypes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
REX = {
    "id": 1, "name": "Rex", "born": "2019-04-01", "__typename": "Dog", "lives": None, "barkVolume": 8,
    "dog.name": "Rexie",
}  # fmt: skip
TOM = {
    "id": 2,
    "name": "Tom",
    "born": "2020-06-15",
    "__typename": "Cat",
    "lives": 7,
    "barkVolume": None,
    "dog.name": None,
}
NEMO = {
    "id": 3,
    "name": "Nemo",
    "born": None,
    "__typename": "Animal",
    "lives": None,
    "barkVolume": None,
    "dog.name": None,
}
FIDO = {
    "id": 4,
    "name": "Fido",
    "born": "2021-01-01",
    "__typename": "Dog",
    "lives": None,
    "barkVolume": 3,
    "dog.name": None,
}


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS, mode="dev") as running:
        yield running


def without_versions(rows):
    return [{k: v for k, v in row.items() if k != "rowVersion"} for row in rows]


async def test_parent_rows_carry_their_concrete_type_and_the_subtype_columns(service):
    response = await service.client.get("/rest/animals")
    assert response.status_code == 200, response.text
    assert without_versions(response.json()) == [REX, TOM, NEMO, FIDO]
    response = await service.client.get("/rest/animals/2")
    assert without_versions([response.json()]) == [TOM]
    # a subtype of a subtype is its parent's type among animals; dogs name it
    response = await service.client.get("/rest/dogs?fields=id,__typename,trained")
    assert response.json() == [
        {"id": 1, "__typename": "Dog", "trained": None},
        {"id": 4, "__typename": "Puppy", "trained": True},
    ]


async def test_fields_pick_the_type_and_subtype_columns(service):
    response = await service.client.get("/rest/animals?fields=name,__typename,lives,dog.name")
    assert response.json() == [
        {"name": "Rex", "__typename": "Dog", "lives": None, "dog.name": "Rexie"},
        {"name": "Tom", "__typename": "Cat", "lives": 7, "dog.name": None},
        {"name": "Nemo", "__typename": "Animal", "lives": None, "dog.name": None},
        {"name": "Fido", "__typename": "Dog", "lives": None, "dog.name": None},
    ]
    response = await service.client.get("/rest/cats?fields=__typename")
    assert response.status_code == 400, response.text
    assert response.json()["detail"] == "Cat has no field '__typename'"


async def test_subtype_columns_filter_the_parents_rows(service):
    response = await service.client.get("/rest/animals?filter[barkVolume][gt]=1&fields=name")
    assert response.json() == [{"name": "Rex"}, {"name": "Fido"}]
    response = await service.client.get("/rest/animals?filter[dog.name][eq]=Rexie&fields=name")
    assert response.json() == [{"name": "Rex"}]
    # a condition on a subtype's column holds only for rows of that subtype; conditions on one subtype all hold
    response = await service.client.get("/rest/animals?filter[or][0][lives][gte]=1&filter[or][1][barkVolume][lt]=5")
    assert [row["name"] for row in response.json()] == ["Tom", "Fido"]
    response = await service.client.get("/rest/animals?filter[barkVolume][gt]=1&filter[dog][barkVolume][lt]=5")
    assert [row["name"] for row in response.json()] == ["Fido"]
    response = await service.client.get("/rest/animals?filter[barkVolume][gt]=loud")
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "filter[barkVolume][gt]"


async def test_subtype_columns_order_the_parents_rows(service):
    response = await service.client.get("/rest/animals?order=barkVolume,name&fields=name,barkVolume")
    assert response.json() == [
        {"name": "Fido", "barkVolume": 3},
        {"name": "Rex", "barkVolume": 8},
        {"name": "Nemo", "barkVolume": None},
        {"name": "Tom", "barkVolume": None},
    ]
    response = await service.client.get("/rest/animals?order=-lives:nullslast,dog.name:nullslast,id&fields=id")
    assert response.json() == [{"id": 2}, {"id": 1}, {"id": 3}, {"id": 4}]


async def test_a_subtype_row_is_created_with_its_parent_row_in_one_transaction(service, database_url):
    body = {"barkVolume": 5, "animalById": {"create": {"name": "Bo", "born": "2024-02-02"}}}
    response = await service.client.post("/rest/dogs", json=body)
    assert response.status_code == 201, response.text
    created = response.json()["id"]
    response = await service.client.get(f"/rest/animals/{created}?fields=name,__typename,barkVolume")
    assert response.json() == {"name": "Bo", "__typename": "Dog", "barkVolume": 5}


async def test_a_subtype_create_given_its_parents_columns_creates_the_parent_row_too(service, database_url):
    # `animalName`: the dog's own `name` keeps its name; the parent's other columns keep theirs
    body = {"barkVolume": 4, "animalName": "Bo", "born": "2024-02-02", "name": "Bobo"}
    response = await service.client.post("/rest/dogs", json=body)
    assert response.status_code == 201, response.text
    created = response.json()["id"]
    assert fetch(database_url, f"select name, born::text from app.animals where id = {int(created)}") == [
        ("Bo", "2024-02-02")
    ]
    # a key given is the parent's too
    response = await service.client.post("/rest/dogs", json=[{"id": 70, "barkVolume": 1, "animalName": "Seventy"}])
    assert response.status_code == 201, response.text
    assert fetch(
        database_url, "select a.name, d.bark_volume from app.animals a join app.dogs d using (id) where id = 70"
    ) == [("Seventy", 1)]
    response = await service.client.get("/rest/animals/70?fields=__typename,barkVolume")
    assert response.json() == {"__typename": "Dog", "barkVolume": 1}


async def test_parent_columns_and_the_parent_relation_together_are_refused(service, database_url):
    before = fetch(database_url, "select count(*) from app.animals")[0][0]
    body = {"barkVolume": 4, "born": "2024-02-02", "animalById": {"create": {"name": "Bo"}}}
    response = await service.client.post("/rest/dogs", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["detail"] == "born and animalById both write the Animal row"
    assert response.json()["field"] == "input.born"
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before


async def test_a_failing_subtype_row_leaves_no_parent_row(service, database_url):
    before = fetch(database_url, "select count(*) from app.animals")[0][0]
    body = {"barkVolume": 9, "animalById": {"create": {"name": "Loud"}}}
    response = await service.client.post("/rest/dogs", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "DOGS_LOUD_ONES_NAMED"
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before
    response = await service.client.post("/rest/dogs", json={"barkVolume": 9, "animalName": "Loud"})
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "DOGS_LOUD_ONES_NAMED"
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before
    # the parent's row fails: typed by the parent's constraint
    response = await service.client.post("/rest/dogs", json={"barkVolume": 2, "born": "2024-02-02"})
    assert response.status_code == 422, response.text
    assert (response.json()["code"], response.json()["codeType"]) == ("NAME_REQUIRED", "AnimalErrorCode")
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before


async def test_openapi_documents_the_type_and_subtype_columns(service):
    document = (await service.client.get("/openapi.json")).json()
    validate(document)
    properties = document["components"]["schemas"]["Animal"]["properties"]
    assert list(properties) == ["id", "name", "born", "__typename", "lives", "barkVolume", "dog.name", "rowVersion"]
    assert properties["__typename"]["enum"] == ["Animal", "Cat", "Dog"]
    assert properties["barkVolume"] == {
        "type": ["integer", "null"],
        "format": "int32",
        "description": "`Dog` rows only (null in others).",
    }
    assert "__typename" not in document["components"]["schemas"]["Cat"]["properties"]
    create = document["components"]["schemas"]["DogCreate"]["properties"]
    assert list(create) == ["id", "barkVolume", "name", "animalName", "born", "animalById"]
    assert create["animalName"] == {"type": "string", "description": "`Animal.name`: creates the `Animal` row too."}
