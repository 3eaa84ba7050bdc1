"""Errors of REST writes (SPEC "Errors" -> REST, constraint violations, custom SQL errors, masking; "Other fixed
shapes" -> problem document): typed constraint codes with their REST statuses (409 for unique keys, exclusions and
foreign keys, 422 for NOT NULL, CHECK, too long and out of range), problem documents whose `type` is `about:blank`
(the enum a code belongs to is `codeType`), input paths in REST names, custom `PTxxx` errors and `errors.map`, and
database errors masked in prod."""

import pytest

from tests.support.postgres import fetch
from tests.support.rest import REQUEST_ID, assert_problem, problem, rest_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


def conflict(code: str, detail: str, instance: str, code_type: str, fields: list[str]) -> dict:
    return problem(409, code, detail, instance, title="Conflict", codeType=code_type, fields=fields)


def invalid(code: str, detail: str, instance: str, code_type: str, **members) -> dict:
    return problem(422, code, detail, instance, title="Unprocessable Content", codeType=code_type, **members)


# --- 409: unique keys, exclusions, foreign keys ------------------------------------------------------------------


async def test_a_unique_constraint_is_409_naming_the_input_path(rest, database_url):
    response = await rest.post("/rest/customers", json={"email": "ann@example.com", "name": "Other"})
    assert_problem(
        response,
        conflict(
            "EMAIL_TAKEN",
            'duplicate key value violates unique constraint "customers_email_key"',
            "/rest/customers",
            "CustomerErrorCode",
            ["input.email"],
        ),
    )
    assert fetch(database_url, "select count(*) from app.customers where name = 'Other'") == [(0,)]


async def test_a_primary_key_is_named_by_its_rest_name(rest):
    assert_problem(
        await rest.post("/rest/tags", json={"id": 1, "label": "pk-taken"}),
        conflict(
            "ID_TAKEN",
            'duplicate key value violates unique constraint "tags_pkey"',
            "/rest/tags",
            "TagErrorCode",
            ["input.id"],
        ),
    )


async def test_a_composite_unique_key_and_a_partial_expression_index(rest):
    assert_problem(
        await rest.post("/rest/orders", json={"customerId": 1, "number": "A-1"}),
        conflict(
            "CUSTOMER_ID_NUMBER_TAKEN",
            'duplicate key value violates unique constraint "orders_customer_id_number_key"',
            "/rest/orders",
            "OrderErrorCode",
            ["input.customerId", "input.number"],
        ),
    )
    assert_problem(
        await rest.post("/rest/customers", json={"email": "other-ann@example.com", "name": "ANN"}),
        conflict(
            "NAME_TAKEN",
            'duplicate key value violates unique constraint "customers_lower_name"',
            "/rest/customers",
            "CustomerErrorCode",
            ["input.name"],
        ),
    )


async def test_the_failing_row_of_an_array(rest, database_url):
    response = await rest.post("/rest/tags", json=[{"label": "multi-new"}, {"label": "rush"}, {"label": "multi-other"}])
    assert_problem(
        response,
        conflict(
            "LABEL_TAKEN",
            'duplicate key value violates unique constraint "tags_label_key"',
            "/rest/tags",
            "TagErrorCode",
            ["inputs[1].label"],
        ),
    )
    assert fetch(database_url, "select count(*) from app.tags where label like 'multi-%'") == [(0,)]


async def test_an_exclusion_constraint_is_409(rest):
    during = {
        "start": {"value": "2024-01-01T11:00:00", "inclusive": True},
        "end": {"value": "2024-01-01T13:00:00", "inclusive": False},
    }
    assert_problem(
        await rest.post("/rest/bookings", json={"roomId": 2, "during": during}),
        conflict(
            "DURING_CONFLICT",
            'conflicting key value violates exclusion constraint "bookings_during_excl"',
            "/rest/bookings",
            "BookingErrorCode",
            ["input.during"],
        ),
    )


async def test_a_foreign_key_to_a_missing_row_is_409(rest):
    assert_problem(
        await rest.post("/rest/orders", json={"customerId": 999, "number": "FK-1"}),
        conflict(
            "CUSTOMER_NOT_FOUND",
            'insert or update on table "orders" violates foreign key constraint "orders_customer_id_fkey"',
            "/rest/orders",
            "OrderErrorCode",
            ["input.customerId"],
        ),
    )


async def test_deleting_a_referenced_row_is_409(rest, database_url):
    assert_problem(
        await rest.delete("/rest/customers/2"),
        conflict(
            "REFERENCED_BY_ADDRESSES_BY_CUSTOMER_ID",
            'update or delete on table "customers" violates foreign key constraint "addresses_customer_id_fkey" on table "addresses"',
            "/rest/customers/2",
            "CustomerErrorCode",
            [],
        ),
    )
    assert fetch(database_url, "select count(*) from app.customers where id = 2") == [(1,)]


# --- 422: NOT NULL, CHECK, lengths and precision -----------------------------------------------------------------


async def test_not_null_is_422(rest):
    assert_problem(
        await rest.patch("/rest/customers/2", json={"name": None}),
        invalid(
            "NAME_REQUIRED",
            'null value in column "name" of relation "customers" violates not-null constraint',
            "/rest/customers/2",
            "CustomerErrorCode",
            fields=["input.name"],
        ),
    )


async def test_named_and_unnamed_checks_and_a_domains_check_are_422(rest):
    assert_problem(
        await rest.patch("/rest/customers/2", json={"credit": "5000.01"}),
        invalid(
            "CREDIT_LIMIT",
            'new row for relation "customers" violates check constraint "credit_limit"',
            "/rest/customers/2",
            "CustomerErrorCode",
            fields=["input.credit"],
        ),
    )
    assert_problem(
        await rest.post("/rest/addresses", json={"city": ""}),
        invalid(
            "CITY_INVALID",
            'new row for relation "addresses" violates check constraint "addresses_city_check"',
            "/rest/addresses",
            "AddressErrorCode",
            fields=["input.city"],
        ),
    )
    assert_problem(
        await rest.post("/rest/orders", json={"customerId": 2, "number": "DOM-1", "quantity": 0}),
        invalid(
            "QUANTITY_INVALID",
            'value for domain positive_int violates check constraint "positive_int_check"',
            "/rest/orders",
            "OrderErrorCode",
            fields=["input.quantity"],
        ),
    )


async def test_too_long_and_out_of_range_are_422_before_sql(rest, database_url):
    assert_problem(
        await rest.post(
            "/rest/customers", json={"email": "a-very-long-address-indeed@example.com.invalid", "name": "Long"}
        ),
        invalid(
            "EMAIL_TOO_LONG",
            "input.email is too long: at most 40 characters",
            "/rest/customers",
            "CustomerErrorCode",
            field="input.email",
        ),
    )
    assert_problem(
        await rest.patch("/rest/customers/2", json={"credit": "9999.995"}),
        invalid(
            "CREDIT_OUT_OF_RANGE",
            "input.credit is out of range: 6 digits, 2 after the point",
            "/rest/customers/2",
            "CustomerErrorCode",
            field="input.credit",
        ),
    )
    # Far out of range: more digits than rounding can hold (it raised, a 500).
    for value in ("1e30", "-1e400", 10**40):
        assert_problem(
            await rest.post("/rest/customers", json={"email": "big@example.com", "name": "Big", "credit": value}),
            invalid(
                "CREDIT_OUT_OF_RANGE",
                "input.credit is out of range: 6 digits, 2 after the point",
                "/rest/customers",
                "CustomerErrorCode",
                field="input.credit",
            ),
        )
    assert fetch(database_url, "select count(*) from app.customers where name in ('Long', 'Big')") == [(0,)]
    assert fetch(database_url, "select credit from app.customers where id = 2") == [(None,)]


# --- custom SQL errors and errors.map ----------------------------------------------------------------------------


async def test_a_pt_error_answers_its_status_with_the_authors_message(rest):
    response = await rest.post("/rest/rpc/refuse", json={"args": {"message": "not today", "status": "403"}})
    assert_problem(
        response, problem(403, "REFUSED", "not today", "/rest/rpc/refuse", title="Application Error", hint="REFUSED")
    )
    # A status outside 400-599 is 400.
    response = await rest.post("/rest/rpc/refuse", json={"args": {"message": "teapot", "status": "700"}})
    assert_problem(
        response, problem(400, "REFUSED", "teapot", "/rest/rpc/refuse", title="Application Error", hint="REFUSED")
    )


async def test_a_json_message_sets_the_members_and_the_detail_line_is_database_detail(rest):
    assert_problem(
        await rest.post("/rest/rpc/refuse_json", json={}),
        problem(
            409,
            "OUT_OF_STOCK",
            "no stock",
            "/rest/rpc/refuse_json",
            title="Application Error",
            sku="A-1",
            databaseDetail="shelf 4",
        ),
    )


ERRORS_MAP = {
    "customers_email_key": {"status": 409, "title": "Email in use", "code": "EMAIL_IN_USE"},
    "23514": {"status": 400, "title": "Check failed", "code": "CHECK_FAILED", "type": "https://example.com/check"},
}


async def test_errors_map_in_prod_shows_only_the_title(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "errors": {"map": ERRORS_MAP}}) as rest:
        assert_problem(
            await rest.post("/rest/customers", json={"email": "ann@example.com", "name": "Ann Again"}),
            problem(409, "EMAIL_IN_USE", "Email in use", "/rest/customers", title="Email in use"),
        )
        # A SQLSTATE entry; its `type` is the problem's type.
        assert_problem(
            await rest.post("/rest/addresses", json={"city": ""}),
            problem(400, "CHECK_FAILED", "Check failed", "/rest/addresses", title="Check failed")
            | {"type": "https://example.com/check"},
        )


async def test_errors_map_in_dev_keeps_the_database_message_and_detail(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "errors": {"map": ERRORS_MAP}}, mode="dev") as rest:
        assert_problem(
            await rest.post("/rest/customers", json={"email": "ann@example.com", "name": "Ann Again"}),
            problem(
                409,
                "EMAIL_IN_USE",
                'duplicate key value violates unique constraint "customers_email_key"',
                "/rest/customers",
                title="Email in use",
                databaseDetail="Key (email)=(ann@example.com) already exists.",
            ),
        )


# --- masking -----------------------------------------------------------------------------------------------------


async def test_other_database_errors_are_masked_in_prod(rest):
    masked = f"an internal error occurred; it was logged under request id {REQUEST_ID}"
    assert_problem(
        await rest.post("/rest/rpc/divide", json={"args": {"a": 1, "b": 0}}),
        problem(500, "INTERNAL_SERVER_ERROR", masked, "/rest/rpc/divide", title="Internal Server Error"),
    )
    during = {
        "start": {"value": "2024-03-02T00:00:00", "inclusive": True},
        "end": {"value": "2024-03-01T00:00:00", "inclusive": False},
    }
    assert_problem(
        await rest.post("/rest/bookings", json={"roomId": 2, "during": during}),
        problem(500, "INTERNAL_SERVER_ERROR", masked, "/rest/bookings", title="Internal Server Error"),
    )


async def test_full_detail_adds_the_database_message(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, {**SETTINGS, "errors": {"detail": "full"}}) as rest:
        assert_problem(
            await rest.post("/rest/rpc/divide", json={"args": {"a": 1, "b": 0}}),
            problem(
                500,
                "INTERNAL_SERVER_ERROR",
                "database error (22012): division by zero",
                "/rest/rpc/divide",
                title="Internal Server Error",
            ),
        )
