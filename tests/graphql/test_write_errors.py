"""Typed write errors (SPEC "Errors" -> constraint violations, custom SQL errors, masking): every constraint kind with
its code, enum (`extensions.type`) and input paths (`extensions.fields`, nested and bulk rows included), checks made
before SQL (length, precision), `PTxxx` errors and `errors.map`, and masking of everything else."""

import pytest

from tests.support.graphql import graphql_service
from tests.support.postgres import fetch

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def failure(gql, query: str, variables=None) -> dict:
    """The one error of a mutation that fails while running: every root field null, HTTP 200."""
    status, body = await gql.errors(query, variables)
    assert status == 200, body
    assert set(body["data"].values()) == {None}
    (error,) = body["errors"]
    return error


def typed(error: dict) -> tuple:
    extensions = error["extensions"]
    return extensions["code"], extensions.get("type"), extensions.get("fields", extensions.get("field"))


# --- unique keys -------------------------------------------------------------------------------------------------


async def test_unique_constraint(gql):
    error = await failure(
        gql, 'mutation { createCustomer(input: {email: "ann@example.com", name: "Other"}) { customer { rowId } } }'
    )
    assert typed(error) == ("EMAIL_TAKEN", "CustomerErrorCode", ["input.email"])
    assert error["path"] == ["createCustomer"]


async def test_primary_key(gql):
    error = await failure(gql, 'mutation { createTag(input: {rowId: 1, label: "pk-taken"}) { tag { rowId } } }')
    assert typed(error) == ("ID_TAKEN", "TagErrorCode", ["input.rowId"])


async def test_composite_unique_key(gql):
    error = await failure(gql, 'mutation { createOrder(input: {customerId: 1, number: "A-1"}) { order { rowId } } }')
    assert typed(error) == ("CUSTOMER_ID_NUMBER_TAKEN", "OrderErrorCode", ["input.customerId", "input.number"])


async def test_partial_expression_unique_index(gql):
    error = await failure(
        gql, 'mutation { createCustomer(input: {email: "other-ann@example.com", name: "ANN"}) { customer { rowId } } }'
    )
    assert typed(error) == ("NAME_TAKEN", "CustomerErrorCode", ["input.name"])
    # The index is partial: a deleted customer's name is free.
    data = await gql.data(
        'mutation { createCustomer(input: {email: "ghost@example.com", name: "ann", deleted: true}) { customer { name } } }'
    )
    assert data == {"createCustomer": {"customer": {"name": "ann"}}}


async def test_the_failing_row_of_a_multi_row_insert(gql, database_url):
    error = await failure(
        gql,
        'mutation { createTags(inputs: [{label: "multi-new"}, {label: "rush"}, {label: "multi-other"}]) { tags { rowId } } }',
    )
    assert typed(error) == ("LABEL_TAKEN", "TagErrorCode", ["inputs[1].label"])
    assert fetch(database_url, "select count(*) from app.tags where label like 'multi-%'") == [(0,)]


async def test_rows_of_a_multi_row_insert_that_collide_with_each_other_name_the_later_one(gql, database_url):
    """The earlier row was written first: it is the later one that finds the value taken."""
    error = await failure(
        gql,
        """mutation { createTags(inputs: [{label: "twice"}, {label: "once"}, {label: "twice"}]) {
             tags { rowId } } }""",
    )
    assert typed(error) == ("LABEL_TAKEN", "TagErrorCode", ["inputs[2].label"])
    assert fetch(database_url, "select count(*) from app.tags where label in ('twice', 'once')") == [(0,)]


async def test_a_bulk_update_names_the_set_fields(gql):
    await gql.data('mutation { createTags(inputs: [{label: "same-1"}, {label: "same-2"}]) { tags { rowId } } }')
    error = await failure(
        gql, 'mutation { updateTags(where: {label: {startsWith: "same-"}}, set: {label: "same"}) { affectedCount } }'
    )
    assert typed(error) == ("LABEL_TAKEN", "TagErrorCode", ["set.label"])


async def test_nested_rows_name_their_path_and_their_own_enum(gql):
    error = await failure(
        gql,
        """mutation { createCustomer(input: {email: "nested-err@example.com", name: "Nested Err",
             orders: {create: [{number: "NE-1"}, {number: "NE-1"}]}}) { customer { rowId } } }""",
    )
    assert typed(error) == (
        "CUSTOMER_ID_NUMBER_TAKEN",
        "OrderErrorCode",
        ["input.orders.create", "input.orders.create[1].number"],
    )


# --- foreign keys ------------------------------------------------------------------------------------------------


async def test_foreign_key_to_a_missing_row(gql):
    error = await failure(gql, 'mutation { createOrder(input: {customerId: 999, number: "FK-1"}) { order { rowId } } }')
    assert typed(error) == ("CUSTOMER_NOT_FOUND", "OrderErrorCode", ["input.customerId"])


async def test_a_referenced_row_deleted_or_rekeyed(gql):
    owner = (
        await gql.data(
            """mutation { createCustomer(input: {email: "ref@example.com", name: "Ref", orders: {create: [{number: "R-1"}]}}) {
                 customer { rowId } } }"""
        )
    )["createCustomer"]["customer"]["rowId"]
    error = await failure(
        gql, "mutation($id: Int!) { deleteCustomer(rowId: $id) { customer { rowId } } }", {"id": owner}
    )
    assert typed(error) == ("REFERENCED_BY_ORDERS", "CustomerErrorCode", [])
    error = await failure(
        gql,
        "mutation($id: Int!) { updateCustomer(rowId: $id, set: {rowId: 5000}) { customer { rowId } } }",
        {"id": owner},
    )
    assert typed(error)[:2] == ("REFERENCED_BY_ORDERS", "CustomerErrorCode")


# --- checks, exclusions, not null, domains -----------------------------------------------------------------------


async def test_named_and_unnamed_checks(gql):
    error = await failure(gql, 'mutation { updateCustomer(rowId: 2, set: {credit: "5000.01"}) { customer { rowId } } }')
    assert typed(error) == ("CREDIT_LIMIT", "CustomerErrorCode", ["set.credit"])
    error = await failure(gql, 'mutation { createAddress(input: {city: ""}) { address { rowId } } }')
    assert typed(error) == ("CITY_INVALID", "AddressErrorCode", ["input.city"])


async def test_exclusion_constraint(gql):
    error = await failure(
        gql,
        """mutation { createBooking(input: {roomId: 2, during: {start: {value: "2024-01-01T11:00:00", inclusive: true},
             end: {value: "2024-01-01T13:00:00", inclusive: false}}}) { booking { rowId } } }""",
    )
    assert typed(error) == ("DURING_CONFLICT", "BookingErrorCode", ["input.during"])


async def test_not_null(gql):
    error = await failure(gql, "mutation { updateCustomer(rowId: 2, set: {name: null}) { customer { rowId } } }")
    assert typed(error) == ("NAME_REQUIRED", "CustomerErrorCode", ["set.name"])


async def test_a_domains_check(gql):
    error = await failure(
        gql, 'mutation { createOrder(input: {customerId: 2, number: "DOM-1", quantity: 0}) { order { rowId } } }'
    )
    assert typed(error) == ("QUANTITY_INVALID", "OrderErrorCode", ["input.quantity"])


# --- checked before SQL ------------------------------------------------------------------------------------------


async def test_too_long_and_out_of_range_before_sql(gql, database_url):
    status, body = await gql.errors(
        'mutation { createCustomer(input: {email: "a-very-long-address-indeed@example.com.invalid", name: "Long"}) { customer { rowId } } }'
    )
    assert status == 422 and body["data"] is None
    assert typed(body["errors"][0]) == ("EMAIL_TOO_LONG", "CustomerErrorCode", "input.email")
    # numeric(6, 2): 9999.995 rounds to 10000.00, past four digits before the point.
    status, body = await gql.errors(
        'mutation { updateCustomer(rowId: 2, set: {credit: "9999.995"}) { customer { rowId } } }'
    )
    assert typed(body["errors"][0]) == ("CREDIT_OUT_OF_RANGE", "CustomerErrorCode", "set.credit")
    status, body = await gql.errors(
        """mutation { createCustomer(input: {email: "nested-long@example.com", name: "NL",
             orders: {create: [{number: "NL-1", note: "far too long for ten"}]}}) { customer { rowId } } }"""
    )
    assert typed(body["errors"][0]) == ("NOTE_TOO_LONG", "OrderErrorCode", "input.orders.create[0].note")
    # Trailing spaces past the length are cut, as PostgreSQL does.
    data = await gql.data(
        'mutation { createOrder(input: {customerId: 2, number: "SP-1", note: "ten chars!     "}) { order { note } } }'
    )
    assert data == {"createOrder": {"order": {"note": "ten chars!"}}}
    assert fetch(database_url, "select count(*) from app.customers where name in ('Long', 'NL')") == [(0,)]


async def test_a_value_its_column_cannot_read_is_bad_input_not_a_500(gql, database_url):
    """Python's ISO 8601 reader takes an offset of +16:00; PostgreSQL's timestamptz does not (at most 15:59)."""
    status, body = await gql.errors(
        """mutation { createOrder(input: {customerId: 2, number: "TZ-1", placedAt: "2026-01-01T10:00:00+16:00"})
             { order { rowId } } }"""
    )
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", body
    assert "time zone displacement out of range" in error["message"]
    assert fetch(database_url, "select count(*) from app.orders where number = 'TZ-1'") == [(0,)]


# --- custom errors and errors.map --------------------------------------------------------------------------------


async def test_pt_errors_keep_the_authors_message_and_answer_200(gql):
    error = await failure(gql, 'mutation { refuse(message: "not today", status: "403") }')
    assert error["message"] == "not today"
    assert error["extensions"]["code"] == "REFUSED"
    assert error["extensions"]["hint"] == "REFUSED"
    error = await failure(gql, "mutation { refuseJson }")
    assert error["message"] == "no stock"
    assert error["extensions"] | {"requestId": None} == {
        "code": "OUT_OF_STOCK", "requestId": None, "sku": "A-1", "databaseDetail": "shelf 4",
    }  # fmt: skip


async def test_pt_errors_in_queries(gql):
    status, body = await gql.errors('{ a: checkedPrice(amount: "-1") b: checkedPrice(amount: "2") }')
    assert status == 200
    assert body["data"] == {"a": None, "b": "2"}
    assert body["errors"][0]["extensions"]["code"] == "NEGATIVE_PRICE"
    assert body["errors"][0]["message"] == "a price cannot be negative"


async def test_errors_map_by_constraint_name_and_by_sqlstate(tmp_path, database_url):
    settings = {
        **SETTINGS,
        "errors": {
            "map": {
                "credit_limit": {"status": 422, "title": "Too much credit", "code": "CREDIT_TOO_HIGH"},
                "22012": {"status": 400, "title": "Cannot divide by zero", "code": "DIVISION_BY_ZERO"},
            }
        },
    }
    async with graphql_service(tmp_path, database_url, settings) as gql:
        error = await failure(
            gql, 'mutation { updateCustomer(rowId: 2, set: {credit: "5000.01"}) { customer { rowId } } }'
        )
        assert (error["message"], error["extensions"]["code"]) == ("Too much credit", "CREDIT_TOO_HIGH")
        error = await failure(gql, "mutation { divide(a: 1, b: 0) }")
        assert (error["message"], error["extensions"]["code"]) == ("Cannot divide by zero", "DIVISION_BY_ZERO")
        assert "databaseDetail" not in error["extensions"]


# --- masking -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("detail", ["masked", "full"])
async def test_typed_errors_in_every_mode_and_other_errors_masked(tmp_path, database_url, detail):
    async with graphql_service(tmp_path, database_url, {**SETTINGS, "errors": {"detail": detail}}) as gql:
        error = await failure(gql, 'mutation { createTag(input: {label: "gift"}) { tag { rowId } } }')
        assert typed(error) == ("LABEL_TAKEN", "TagErrorCode", ["input.label"])
        error = await failure(gql, "mutation { divide(a: 1, b: 0) }")
        assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
        assert error["path"] == ["divide"]
        assert ("division by zero" in error["message"]) is (detail == "full")
