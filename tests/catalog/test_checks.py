"""CHECK constraint texts read into allowed values and bounds, and PostgreSQL's generated constraint names.

Every text and name below is what PostgreSQL 15 wrote (pg_get_constraintdef, pg_constraint.conname) for the
constraint shown beside it, taken from a database.
"""

import pytest

from svc.catalog import Bounds
from svc.catalog._checks import (
    Column,
    Comparison,
    IsNull,
    Number,
    Or,
    Unreadable,
    allowed_values,
    bounds,
    parse_check,
)
from svc.catalog._names import is_generated_check_name, is_generated_exclusion_name, make_object_name

# --- allowed values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "column", "values"),
    [
        # carrier text check (carrier in ('post', 'courier', 'pickup'))
        ("CHECK ((carrier = ANY (ARRAY['post'::text, 'courier'::text, 'pickup'::text])))", "carrier",
         ("post", "courier", "pickup")),
        # preferred_contact varchar(8) check (preferred_contact in ('email', 'phone', 'none'))
        ("CHECK (((preferred_contact)::text = ANY ((ARRAY['email'::character varying, 'phone'::character varying, "
         "'none'::character varying])::text[])))", "preferred_contact", ("email", "phone", "none")),
        # grade char(1) check (grade in ('A', 'B', 'C'))
        ("CHECK ((grade = ANY (ARRAY['A'::bpchar, 'B'::bpchar, 'C'::bpchar])))", "grade", ("A", "B", "C")),
        # mixed text check (mixed in ('it''s', 'plain'))
        ("CHECK ((mixed = ANY (ARRAY['it''s'::text, 'plain'::text])))", "mixed", ("it's", "plain")),
        # "Status" text check ("Status" in ('On', 'Off'))
        ("""CHECK (("Status" = ANY (ARRAY['On'::text, 'Off'::text])))""", "Status", ("On", "Off")),
    ],
)  # fmt: skip
def test_an_in_list_gives_its_values_in_the_order_written(definition: str, column: str, values: tuple[str, ...]):
    assert allowed_values(definition, column) == values


@pytest.mark.parametrize(
    ("definition", "column"),
    [
        # opt text check (opt is null or opt in ('x', 'y')): not the whole check
        ("CHECK (((opt IS NULL) OR (opt = ANY (ARRAY['x'::text, 'y'::text]))))", "opt"),
        # another column's list
        ("CHECK ((carrier = ANY (ARRAY['post'::text, 'courier'::text])))", "status"),
        # title text check (title <> '')
        ("CHECK ((title <> ''::text))", "title"),
        # n integer check (n in (1, 2)): numbers are not text values
        ("CHECK ((n = ANY (ARRAY[1, 2])))", "n"),
    ],
)
def test_other_checks_give_no_values(definition: str, column: str):
    assert allowed_values(definition, column) is None


# --- bounds --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "column", "expected"),
    [
        # price numeric(10, 2) check (price > 0)
        ("CHECK ((price > (0)::numeric))", "price", Bounds(exclusive_minimum=0)),
        # weight_grams integer check (weight_grams between 1 and 50000)
        ("CHECK (((weight_grams >= 1) AND (weight_grams <= 50000)))", "weight_grams", Bounds(minimum=1, maximum=50000)),
        # discount_percent numeric(4, 1) check (discount_percent > 0 and discount_percent < 90)
        ("CHECK (((discount_percent > (0)::numeric) AND (discount_percent < (90)::numeric)))", "discount_percent",
         Bounds(exclusive_minimum=0, exclusive_maximum=90)),
        # temperature double precision check (temperature between -273.15 and 1000.5)
        ("CHECK (((temperature >= ('-273.15'::numeric)::double precision) AND "
         "(temperature <= (1000.5)::double precision)))", "temperature", Bounds(minimum=-273.15, maximum=1000.5)),
        # "Weird Name" integer check ("Weird Name" >= -5)
        ("""CHECK (("Weird Name" >= '-5'::integer))""", "Weird Name", Bounds(minimum=-5)),
        # score integer check (0 <= score): the number written first
        ("CHECK ((0 <= score))", "score", Bounds(minimum=0)),
        # n integer check (n = 3)
        ("CHECK ((n = 3))", "n", Bounds(minimum=3, maximum=3)),
        # alter table ... add check (n > 0) not valid
        ("CHECK ((n > 0)) NOT VALID", "n", Bounds(exclusive_minimum=0)),
        # slug text check (length(slug) between 1 and 40)
        ("CHECK (((length(slug) >= 1) AND (length(slug) <= 40)))", "slug", Bounds(min_length=1, max_length=40)),
        # full_name text check (char_length(full_name) <= 200)
        ("CHECK ((char_length(full_name) <= 200))", "full_name", Bounds(max_length=200)),
        # code2 varchar(10) check (length(code2) > 0): a count is whole, so > 0 is at least 1
        ("CHECK ((length((code2)::text) > 0))", "code2", Bounds(min_length=1)),
        # code varchar(10) check (char_length(code) < 11 and code ~ '^\d+$')
        (r"CHECK (((char_length((code)::text) < 11) AND ((code)::text ~ '^\d+$'::text)))", "code",
         Bounds(max_length=10, pattern=r"^\d+$")),
        # sku text constraint sku_format check (sku ~ '^[A-Z]{3}-[0-9]{4}$')
        ("CHECK ((sku ~ '^[A-Z]{3}-[0-9]{4}$'::text))", "sku", Bounds(pattern="^[A-Z]{3}-[0-9]{4}$")),
        # image_urls text[] check (cardinality(image_urls) <= 8)
        ("CHECK ((cardinality(image_urls) <= 8))", "image_urls", Bounds(max_items=8)),
        # arr integer[] check (cardinality(arr) between 1 and 3)
        ("CHECK (((cardinality(arr) >= 1) AND (cardinality(arr) <= 3)))", "arr", Bounds(min_items=1, max_items=3)),
        # keywords text[] constraint few_keywords check (array_length(keywords, 1) <= 12)
        ("CHECK ((array_length(keywords, 1) <= 12))", "keywords", Bounds(max_items=12)),
    ],
)  # fmt: skip
def test_simple_forms_give_bounds(definition: str, column: str, expected: Bounds):
    assert bounds(definition, column) == expected


@pytest.mark.parametrize(
    ("definition", "column"),
    [
        # label text check (label = lower(label))
        ("CHECK ((label = lower(label)))", "label"),
        # d date check (d > '2020-01-01'): not a number
        ("CHECK ((d > '2020-01-01'::date))", "d"),
        # check (shipped_at is null or tracking_code is not null)
        ("CHECK (((shipped_at IS NULL) OR (tracking_code IS NOT NULL)))", "shipped_at"),
        # title text check (title <> '')
        ("CHECK ((title <> ''::text))", "title"),
        # a bound on another column
        ("CHECK ((price > (0)::numeric))", "cost"),
        # sku text check (sku ~* '^[a-z]+$'): a case-insensitive pattern
        ("CHECK ((sku ~* '^[a-z]+$'::text))", "sku"),
        # grid integer[] check (array_length(grid, 2) <= 3): the second dimension
        ("CHECK ((array_length(grid, 2) <= 3))", "grid"),
        # m integer check (m > 1 and m > 2): the same bound twice
        ("CHECK (((m > 1) AND (m > 2)))", "m"),
        # name text check (length(name) < 1.5): a count compared with a fraction
        ("CHECK (((length(name))::numeric < 1.5))", "name"),
        # k integer check (k + 1 > 2): arithmetic
        ("CHECK (((k + 1) > 2))", "k"),
    ],
)
def test_other_forms_give_no_bounds(definition: str, column: str):
    assert bounds(definition, column) is None


def test_doubled_backslashes_are_undone_when_standard_conforming_strings_was_off():
    # code varchar(10) check (char_length(code) < 11 and code ~ '^\d+$'), read with standard_conforming_strings off
    definition = r"CHECK (((char_length((code)::text) < 11) AND ((code)::text ~ '^\\d+$'::text)))"
    assert bounds(definition, "code", backslashes_doubled=True) == Bounds(max_length=10, pattern=r"^\d+$")
    assert bounds(definition, "code") == Bounds(max_length=10, pattern=r"^\\d+$")


def test_a_text_outside_the_grammar_is_unreadable():
    with pytest.raises(Unreadable):
        parse_check("CHECK (((z * 2) > 0))")  # z integer check (z * 2 > 0): arithmetic other than a sum
    with pytest.raises(Unreadable):
        parse_check("CHECK (((z > 1) OR (z < 0) AND (z <> 5)))")  # mixed AND and OR


def test_or_and_is_null_are_read_but_give_no_bounds():
    # z integer check (z is null or z > 1): read (JSON Schema checks take this form), but not a bound
    definition = "CHECK (((z IS NULL) OR (z > 1)))"
    assert parse_check(definition) == Or((IsNull(Column("z")), Comparison(">", Column("z"), Number(1.0))))
    assert bounds(definition, "z") is None


# --- generated names -------------------------------------------------------------------------------------------


LONG_TABLE = "a_table_name_that_is_quite_long_and_keeps_going_for_some_while"
LONG_COLUMN = "a_column_name_that_is_long_as_well"


@pytest.mark.parametrize(
    ("name1", "name2", "label", "name"),
    [
        ("products", "price", "check", "products_price_check"),
        ("shipments", None, "check", "shipments_check"),
        # The longer part is cut first, one byte at a time, until the name fits in 63 bytes.
        (LONG_TABLE, LONG_COLUMN, "check", "a_table_name_that_is_quite_l_a_column_name_that_is_long_a_check"),
        (LONG_TABLE, LONG_COLUMN, "check1", "a_table_name_that_is_quite_l_a_column_name_that_is_long__check1"),
        (LONG_TABLE, "b", "check", "a_table_name_that_is_quite_long_and_keeps_going_for_som_b_check"),
        (LONG_TABLE, None, "check", "a_table_name_that_is_quite_long_and_keeps_going_for_some__check"),
        (LONG_TABLE, None, "check1", "a_table_name_that_is_quite_long_and_keeps_going_for_some_check1"),
        # Cuts fall on character boundaries: these names are 63 bytes of two-byte characters and ASCII.
        ("ümlaut_täble_name_with_many_multibyte_characters_ääääää", "spälte_ööööööööööööööööööö", "check",
         "ümlaut_täble_name_with_man_spälte_öööööööööö_check"),
    ],
)  # fmt: skip
def test_make_object_name_builds_the_names_postgresql_builds(name1: str, name2: str | None, label: str, name: str):
    assert make_object_name(name1, name2, label) == name


@pytest.mark.parametrize(
    ("name", "table", "columns", "generated"),
    [
        ("products_price_check", "products", ("price",), True),
        ("t_n_check3", "t", ("n",), True),  # the fourth unnamed check on t.n
        ("t_Weird Name_check", "t", ("Weird Name",), True),
        ("shipments_check", "shipments", ("shipped_at", "tracking_code"), True),
        ("shipments_shipped_at_tracking_code_check", "shipments", ("shipped_at", "tracking_code"), True),
        ("a_table_name_that_is_quite_l_a_column_name_that_is_long__check1", LONG_TABLE, (LONG_COLUMN,), True),
        ("a_table_name_that_is_quite_long_and_keeps_going_for_some_check1", LONG_TABLE, ("b", "c"), True),
        ("sku_format", "products", ("sku",), False),
        ("body_length", "reviews", ("body",), False),
        ("products_price_check", "orders", ("price",), False),  # another table's name
        ("products_price_check0", "products", ("price",), False),  # PostgreSQL numbers from 1
        ("products_price_chk", "products", ("price",), False),
    ],
)
def test_generated_check_names_are_recognised(name: str, table: str, columns: tuple[str, ...], generated: bool):
    assert is_generated_check_name(name, table, columns) is generated


@pytest.mark.parametrize(
    ("name", "table", "index_columns", "generated"),
    [
        ("workshop_sessions_during_excl", "workshop_sessions", ("during",), True),
        ("ex_a_b_excl", "ex", ("a", "b"), True),
        ("ex_expr_excl", "ex", ("expr",), True),  # an expression's index column is named expr
        ("bookings_during_excl1", "bookings", ("during",), True),
        ("bookings_with_a_very_long_tab_during_period_of_the_booking_excl",
         "bookings_with_a_very_long_table_name_to_force_truncation_x", ("during_period_of_the_booking",), True),
        ("one_sale_at_a_time", "sales", ("period",), False),
    ],
)  # fmt: skip
def test_generated_exclusion_names_are_recognised(name: str, table: str, index_columns: tuple[str, ...],
                                                  generated: bool):  # fmt: skip
    assert is_generated_exclusion_name(name, table, index_columns) is generated
