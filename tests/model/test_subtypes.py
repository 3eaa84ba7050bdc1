"""Table-per-type subtypes read from a real catalog (issue 23, tests/fixtures/subtypes.sql): a table whose whole
primary key is a foreign key to another table's whole primary key is a subtype of it; a one-to-one table keyed by
another column is not; a subtype of a subtype is listed on its own parent only."""

import pytest

from svc.model import EntityRef, prune_model
from tests.support.model import read_catalog_and_model, read_model

DATABASE_FIXTURES = ["subtypes.sql"]


@pytest.fixture
async def model(database_url, tmp_path):
    _, model = await read_model(database_url, tmp_path, {"database": {"schemas": ["app"]}})
    return model


def entity(model, table):
    return model.entity(EntityRef("app", table))


async def test_a_table_keyed_by_a_reference_to_another_tables_key_is_its_subtype(model):
    animals = entity(model, "animals")
    assert [(s.target.table, s.type_name, s.relation, s.pairs) for s in animals.subtypes] == [
        ("cats", "Cat", "cat", (("id", "id"),)),
        ("dogs", "Dog", "dog", (("id", "id"),)),
    ]
    assert animals.typename_field == "typename"
    assert [(s.target.table, s.relation) for s in entity(model, "dogs").subtypes] == [("puppies", "puppy")]


async def test_other_tables_have_no_subtypes(model):
    for table in ("cats", "puppies", "animal_notes"):
        assert entity(model, table).subtypes == ()
        assert entity(model, table).typename_field is None


async def test_subtype_columns_keep_their_names_on_the_parent_unless_another_field_has_it(model):
    animals = entity(model, "animals")
    columns = {s.type_name: [(name, field.column) for name, field in s.columns] for s in animals.subtypes}
    # dogs.name meets animals.name: it is `dog.name` on animal rows; the shared key is not repeated
    assert columns == {"Cat": [("lives", "lives")], "Dog": [("barkVolume", "bark_volume"), ("dog.name", "name")]}
    assert animals.subtype_column("dog.name") == (animals.subtypes[1], animals.subtypes[1].columns[1][1])
    assert animals.subtype_column("name") is None


async def test_a_subtypes_create_takes_its_parents_columns_but_the_key(model):
    dogs = entity(model, "dogs")
    assert dogs.supertype is not None
    assert (dogs.supertype.target.table, dogs.supertype.type_name, dogs.supertype.relation) == (
        "animals",
        "Animal",
        "animalById",
    )
    # the dog's own `name` keeps its name: the animal's is `animalName`
    assert [(name, field.column) for name, field in dogs.supertype.columns] == [
        ("animalName", "name"),
        ("born", "born"),
    ]
    assert [name for name, _ in entity(model, "puppies").supertype.columns] == ["barkVolume", "name"]
    assert entity(model, "animals").supertype is None
    assert entity(model, "animal_notes").supertype is None


def test_a_role_sees_the_subtypes_and_columns_its_grants_allow(database_url, tmp_path):
    catalog, model = read_catalog_and_model(
        database_url, tmp_path, {"database": {"schemas": ["app"]}}, roles=["svc_subtypes_visitor"]
    )
    visitor = prune_model(model, catalog, "svc_subtypes_visitor")
    animals = entity(visitor, "animals")
    # cats are not readable; a dog's own name is not: its column is gone from animal rows
    assert [(s.type_name, [name for name, _ in s.columns]) for s in animals.subtypes] == [("Dog", ["barkVolume"])]
    assert animals.typename_field == "typename"
    supertype = entity(visitor, "dogs").supertype
    assert supertype is not None
    assert [(name, field.column) for name, field in supertype.columns] == [("animalName", "name")]


async def test_a_subtype_whose_reverse_relation_is_omitted_is_a_plain_table(database_url, tmp_path):
    settings = {
        "database": {"schemas": ["app"]},
        "entities": {"dogs": {"foreign_keys": {"dogs_id_fkey": {"omit_reverse": True}}}},
    }
    _, model = await read_model(database_url, tmp_path, settings)
    assert [s.type_name for s in entity(model, "animals").subtypes] == ["Cat"]
    assert entity(model, "dogs").supertype is None
    assert entity(model, "cats").supertype is not None
