"""Errors, limits and partial results (SPEC "Errors" -> GraphQL, "Limits", "Partial results"): limits fail before any
SQL with `limit` and `actual`; a statement over the timeout is STATEMENT_TIMEOUT (503) without the database's
message; other database errors are masked behind the request id unless `errors.detail: full`; when the one
statement fails because of data and there are several root fields, each is read alone and keeps what it can, per
`onError`."""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]
SCHEMAS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SCHEMAS) as gql:
        yield gql


def only(body) -> dict:
    (error,) = body["errors"]
    return error


async def test_error_shape_and_status_of_a_request_without_data(gql):
    status, body = await gql.errors("{ books(first: -1) { rowId } }")
    assert status == 400 and body["data"] is None
    error = only(body)
    assert set(error) == {"message", "path", "extensions"}
    assert error["path"] == ["books"]
    assert set(error["extensions"]) == {"code", "requestId", "field"}


async def test_depth_limit(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {**SCHEMAS, "limits": {"depth": 3}}) as gql:
        assert await gql.data("{ books(first: 1) { author { mentor { name } } } }")
        status, body = await gql.errors("{ books(first: 1) { author { mentor { mentor { name } } } } }")
    error = only(body)
    assert status == 400
    assert (error["extensions"]["code"], error["extensions"]["limit"], error["extensions"]["actual"]) == (
        "DEPTH_LIMIT_EXCEEDED",
        3,
        4,
    )


async def test_cost_limit_counts_rows_times_the_rows_they_hang_from(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {**SCHEMAS, "limits": {"cost": 1000}}) as gql:
        # 10 authors, 10 books each, 1 author each: 10 + 100 + 100 = 210
        assert await gql.data("{ authors(first: 10) { books(first: 10) { author { name } } } }")
        status, body = await gql.errors("{ authors(first: 10) { books(first: 100) { rowId } } }")
    extensions = only(body)["extensions"]
    assert status == 400
    assert (extensions["code"], extensions["limit"], extensions["actual"]) == ("COST_LIMIT_EXCEEDED", 1000, 1010)


async def test_statement_timeout(tmp_path, database_url):
    # Shorter than reading the catalog takes: that read is exempt, so the service starts all the same.
    settings = {**SCHEMAS, "limits": {"statement_timeout": "1ms"}}
    async with graphql_service(tmp_path, database_url, settings) as gql:
        status, body = await gql.errors("{ slow(seconds: 2) }")
    error = only(body)
    assert status == 503 and body["data"] is None
    assert error["extensions"]["code"] == "STATEMENT_TIMEOUT"
    assert "canceling statement" not in error["message"]


async def test_database_errors_are_masked_in_prod(gql, caplog):
    status, body = await gql.errors('{ fail(message: "secret") }')
    error = only(body)
    assert status == 200 and body["data"] == {"fail": None}  # a nullable root field fails alone
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert error["path"] == ["fail"]
    assert "secret" not in str(body) and error["extensions"]["requestId"] in error["message"]
    assert any("refused: secret" in r.getMessage() for r in caplog.records if r.name == "svc.pipeline")


async def test_database_errors_show_with_full_detail(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {**SCHEMAS, "errors": {"detail": "full"}}) as gql:
        _, body = await gql.errors('{ fail(message: "visible") }')
    assert only(body)["message"] == "database error (P0001): refused: visible"


async def test_partial_results_keep_the_fields_that_succeed(gql):
    status, body = await gql.errors('{ a: add(a: 1, b: 2) b: fail(message: "x") c: books(first: 1) { rowId } }')
    assert status == 200
    assert body["data"] == {"a": 3, "b": None, "c": [{"rowId": 1}]}
    assert only(body)["path"] == ["b"]


async def test_a_failing_non_null_field_makes_data_null(gql):
    status, body = await gql.errors("{ a: add(a: 1, b: 2) b: failingBooks { totalCount } }")
    assert body["data"] is None and only(body)["path"] == ["b"]
    assert status == 500


@pytest.mark.parametrize("name", ["NULL", "NO_PROPAGATE"])
async def test_on_error_null_keeps_the_rest(gql, name):
    status, body = await gql.errors("{ a: add(a: 1, b: 2) b: failingBooks { totalCount } }", onError=name)
    assert status == 200 and body["data"] == {"a": 3, "b": None}
    assert only(body)["path"] == ["b"]


@pytest.mark.parametrize("name", ["HALT", "ABORT"])
async def test_on_error_halt_gives_no_data(gql, name):
    status, body = await gql.errors('{ a: add(a: 1, b: 2) b: fail(message: "x") }', onError=name)
    assert body["data"] is None and len(body["errors"]) == 1
    assert status == 500


async def test_a_deeper_failure_fails_its_root_field(gql):
    query = (
        '{ a: books(first: 1) { rowId } b: author(rowId: 1) { books(filter: {titleUpper: {regex: "("}}) { rowId } } }'
    )
    status, body = await gql.errors(query)
    assert status == 200 and body["data"] == {"a": [{"rowId": 1}], "b": None}
    error = only(body)
    assert (error["path"], error["extensions"]["code"]) == (["b"], "BAD_USER_INPUT")
