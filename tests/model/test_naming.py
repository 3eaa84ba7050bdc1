"""SPEC "Naming": type names are the English singular of the table name, many-row names the plural, own-plural
nouns take the table name or `List`; fields are camelCase; enum values are valid GraphQL names."""

import pytest

from svc.model import camel, enum_value, pascal, plural_type_name, type_name, upper_snake
from svc.model._naming import is_graphql_name, singular


@pytest.mark.parametrize(
    ("table", "type_", "many"),
    [
        ("order_items", "OrderItem", "OrderItems"),  # the spec's examples
        ("people", "Person", "People"),
        ("episodes_of_care", "EpisodeOfCare", "EpisodesOfCare"),
        ("users", "User", "Users"),
        ("user", "User", "Users"),
        ("categories", "Category", "Categories"),
        ("addresses", "Address", "Addresses"),
        ("statuses", "Status", "Statuses"),
        ("status", "Status", "Statuses"),
        ("buses", "Bus", "Buses"),
        ("children", "Child", "Children"),
        ("film_actor", "FilmActor", "FilmActors"),
        ("rental_by_category", "RentalByCategory", "RentalsByCategory"),
        ("sales_by_film_category", "SaleByFilmCategory", "SalesByFilmCategory"),
        ("userAccounts", "UserAccount", "UserAccounts"),
        ("audit_log", "AuditLog", "AuditLogs"),
        ("bonus", "Bonus", "Bonuses"),
        ("canvas", "Canvas", "Canvases"),
        ("indices", "Index", "Indices"),
    ],
)
def test_singular_and_plural_type_names(table, type_, many):
    assert (type_name(table), plural_type_name(table)) == (type_, many)


@pytest.mark.parametrize(
    ("table", "type_", "many"),
    [
        ("sheep", "Sheep", "SheepList"),  # own plural, same as the table: List
        ("series", "Series", "SeriesList"),
        ("news", "News", "NewsList"),
        ("equipments", "Equipment", "Equipments"),  # own plural, the table's name differs: the table's name
        ("fish", "Fish", "FishList"),
    ],
)
def test_nouns_that_are_their_own_plural(table, type_, many):
    assert (type_name(table), plural_type_name(table)) == (type_, many)


def test_numbers_are_not_the_head_noun():
    assert type_name("payments_2024") == "Payment2024"
    assert plural_type_name("payments_2024") == "Payments2024"


def test_singular_words_ending_in_s_are_kept():
    for word in ("status", "bonus", "campus", "virus", "analysis", "access", "gas", "atlas"):
        assert singular(word) == word


@pytest.mark.parametrize(
    ("column", "field"),
    [
        ("created_at", "createdAt"),
        ("film_id", "filmId"),
        ("URL", "url"),
        ("HTTPStatus", "httpStatus"),
        ("userID", "userID"),
        ("already_camelCase", "alreadyCamelCase"),
        ("2fa_secret", "_2faSecret"),
        ("bıgınt", "bigint"),
        ("straße", "strasse"),
        ("crème_brûlée", "cremeBrulee"),
    ],
)
def test_camel_case_fields(column, field):
    assert camel(column) == field
    assert is_graphql_name(field)


def test_pascal_and_upper_snake():
    assert pascal("app_public") == "AppPublic"
    assert pascal("auth") == "Auth"
    assert upper_snake("createdAt") == "CREATED_AT"
    assert upper_snake("created_at") == "CREATED_AT"


@pytest.mark.parametrize(
    ("label", "value"),
    [("PG-13", "PG_13"), ("NC-17", "NC_17"), ("G", "G"), ("in progress", "IN_PROGRESS"), ("draft", "DRAFT"),
     ("2x", "_2X"), ("über", "UBER")],
)  # fmt: skip
def test_enum_values_are_graphql_names(label, value):
    assert enum_value(label) == value
    assert is_graphql_name(value)
