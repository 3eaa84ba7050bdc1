"""Table-per-type subtypes over GraphQL (issue 23; README "Table-per-type subtypes"): the parent's type keeps being
an object type and gains `typename: String!`, the row's concrete type; the subtypes' columns are reached through
the parent's to-one relation to each subtype (`dog`), which filters and orders its rows (`dog: {barkVolume: ...}`,
`DOG_BARK_VOLUME_ASC`); a subtype's row is created with its parent's row by the nested create of its relation to
the parent, all or nothing. Fixture tests/fixtures/subtypes.sql."""

from pathlib import Path

import pytest
from graphql import GraphQLInputObjectType, GraphQLObjectType

from tests.support.golden import assert_golden
from tests.support.model import read_schema
from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["subtypes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}
SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as running:
        yield running


async def query(service, text, variables=None):
    response = await service.client.post("/graphql", json={"query": text, "variables": variables or {}})
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_sdl_equals_its_reviewed_copy(database_url, tmp_path):
    schema = await read_schema(database_url, tmp_path, SETTINGS)
    assert_golden(SNAPSHOTS / "subtypes.graphql", schema.sdl)
    create_dog = schema.schema.get_type("CreateDogInput")
    animal = schema.schema.get_type("Animal")
    cat = schema.schema.get_type("Cat")
    assert isinstance(create_dog, GraphQLInputObjectType)
    assert isinstance(animal, GraphQLObjectType) and isinstance(cat, GraphQLObjectType)
    assert [name for name in create_dog.fields if name in ("name", "animalName", "born")] == [
        "name",
        "animalName",
        "born",
    ]
    assert str(animal.fields["typename"].type) == "String!"
    assert "typename" not in cat.fields


async def test_rows_name_their_concrete_type(service):
    result = await query(
        service, "{ animals { __typename name typename dog { barkVolume puppy { trained } } cat { lives } } }"
    )
    assert result == {
        "data": {
            "animals": [
                {"__typename": "Animal", "name": "Rex", "typename": "Dog", "dog": {"barkVolume": 8, "puppy": None},
                 "cat": None},
                {"__typename": "Animal", "name": "Tom", "typename": "Cat", "dog": None, "cat": {"lives": 7}},
                {"__typename": "Animal", "name": "Nemo", "typename": "Animal", "dog": None, "cat": None},
                {"__typename": "Animal", "name": "Fido", "typename": "Dog", "dog": {"barkVolume": 3,
                 "puppy": {"trained": True}}, "cat": None},
            ]
        }
    }  # fmt: skip
    result = await query(service, "{ dogs { rowId typename } animal(rowId: 2) { typename } }")
    assert result == {
        "data": {
            "dogs": [{"rowId": 1, "typename": "Dog"}, {"rowId": 4, "typename": "Puppy"}],
            "animal": {"typename": "Cat"},
        }
    }


async def test_subtype_columns_filter_and_order_the_parents_rows(service):
    result = await query(
        service,
        "{ animalsConnection(filter: {dog: {barkVolume: {greaterThan: 1}}}, orderBy: [DOG_BARK_VOLUME_DESC]) {"
        " nodes { name typename } } }",
    )
    assert result == {"data": {"animalsConnection": {"nodes": [
        {"name": "Rex", "typename": "Dog"}, {"name": "Fido", "typename": "Dog"},
    ]}}}  # fmt: skip


async def test_a_subtype_row_is_created_with_its_parent_row_all_or_nothing(service, database_url):
    create = """mutation($input: CreateDogInput!) {
      createDog(input: $input) { dog { barkVolume animalById { name typename } } }
    }"""
    result = await query(service, create, {"input": {"barkVolume": 2, "animalById": {"create": {"name": "Bo"}}}})
    assert result == {
        "data": {"createDog": {"dog": {"barkVolume": 2, "animalById": {"name": "Bo", "typename": "Dog"}}}}
    }
    before = fetch(database_url, "select count(*) from app.animals")[0][0]
    result = await query(service, create, {"input": {"barkVolume": 9, "animalById": {"create": {"name": "Loud"}}}})
    assert result["data"] == {"createDog": None}
    assert result["errors"][0]["path"] == ["createDog"]
    assert result["errors"][0]["extensions"]["code"] == "DOGS_LOUD_ONES_NAMED"
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before


async def test_a_subtype_create_takes_its_parents_columns(service, database_url):
    result = await query(
        service,
        'mutation { createCat(input: {name: "Kit", born: "2025-03-03", lives: 3}) {'
        " cat { lives animalById { name born typename } } } }",
    )
    assert result == {
        "data": {
            "createCat": {"cat": {"lives": 3, "animalById": {"name": "Kit", "born": "2025-03-03", "typename": "Cat"}}}
        }
    }
    before = fetch(database_url, "select count(*) from app.animals")[0][0]
    result = await query(
        service, 'mutation { createDog(input: {barkVolume: 9, animalName: "Loud"}) { dog { rowId } } }'
    )
    assert result["errors"][0]["extensions"]["code"] == "DOGS_LOUD_ONES_NAMED"
    assert fetch(database_url, "select count(*) from app.animals")[0][0] == before
