"""Root mutation fields (SPEC "Mutations"): create, upsert, update by key, by global ID and by filter, delete, VOLATILE
functions; fields run in order in one transaction and a later one sees earlier writes; payloads read by key after
the write (nested relations reflect it), previous rows, row versions, bulk limits, `require_filter`, retries of
serialization failures, and a lost connection while committing."""

import pytest
from graphql import parse

from svc.db import Executor, open_pool
from svc.graphql import MutationPlanner, QueryPlanner, build_graphql_schema
from svc.pipeline import Context, MutationFailed, Pipeline, Statements
from svc.plan import encode_global_id
from svc.server import connection_settings
from tests.support.graphql import graphql_service
from tests.support.model import read_model, read_schema
from tests.support.postgres import execute, fetch

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def test_create_returns_the_row_read_by_key_with_its_defaults(gql, database_url):
    data = await gql.data(
        """mutation { createCustomer(input: {email: "cy@example.com", name: "Cy", credit: "12.5"}) {
             __typename customer { __typename rowId email tier credit deleted orders { number } } } }"""
    )
    payload = data["createCustomer"]
    assert payload["__typename"] == "CreateCustomerPayload"
    customer = payload["customer"]
    assert customer == {
        "__typename": "Customer",
        "rowId": customer["rowId"],
        "email": "cy@example.com",
        "tier": "basic",
        "credit": "12.50",
        "deleted": False,
        "orders": [],
    }
    assert fetch(database_url, "select name from app.customers where id = %s", [customer["rowId"]]) == [("Cy",)]


async def test_create_many_in_input_order_and_with_variables(gql):
    data = await gql.data(
        """mutation Make($rows: [CreateTagInput!]!) { createTags(inputs: $rows) { tags { label } } }""",
        {"rows": [{"label": "zz-last"}, {"label": "aa-first"}, {"label": "mm-middle"}]},
    )
    assert data == {"createTags": {"tags": [{"label": "zz-last"}, {"label": "aa-first"}, {"label": "mm-middle"}]}}


async def test_fields_run_in_order_and_a_later_field_sees_earlier_writes(gql):
    data = await gql.data(
        """mutation {
             a: createCustomer(input: {email: "order1@example.com", name: "Order One"}) { customer { rowId } }
             b: updateCustomers(where: {email: {equalTo: "order1@example.com"}}, set: {nickname: "seen"}) {
               affectedCount customers { nickname } }
             c: deleteCustomers(where: {nickname: {equalTo: "seen"}}) { affectedCount customers { email } }
           }"""
    )
    assert data["b"] == {"affectedCount": 1, "customers": [{"nickname": "seen"}]}
    assert data["c"] == {"affectedCount": 1, "customers": [{"email": "order1@example.com"}]}


async def test_a_failing_second_field_rolls_back_the_first(gql, database_url):
    status, body = await gql.errors(
        """mutation {
             first: createTag(input: {label: "rolled-back"}) { tag { rowId } }
             second: createTag(input: {label: "gift"}) { tag { rowId } }
           }"""
    )
    assert status == 200
    assert body["data"] == {"first": None, "second": None}
    (error,) = body["errors"]
    assert error["path"] == ["second"]
    assert error["extensions"]["code"] == "LABEL_TAKEN"
    assert fetch(database_url, "select count(*) from app.tags where label = 'rolled-back'") == [(0,)]


async def test_update_by_key_and_by_global_id_with_previous_rows(gql):
    data = await gql.data(
        """mutation {
             a: updateCustomer(rowId: 2, set: {nickname: "bobby"}) {
               customer { nickname rowVersion } previousCustomer { nickname rowVersion } }
           }"""
    )
    assert data["a"]["customer"]["nickname"] == "bobby"
    assert data["a"]["customer"]["rowVersion"] is not None
    assert data["a"]["previousCustomer"] == {"nickname": None, "rowVersion": None}
    node_id = encode_global_id("Customer", 2)
    data = await gql.data(
        "mutation($id: ID!) { updateCustomerByNodeId(nodeId: $id, set: {nickname: null}) {"
        " customer { id nickname } previousCustomer { nickname } } }",
        {"id": node_id},
    )
    assert data == {
        "updateCustomerByNodeId": {
            "customer": {"id": node_id, "nickname": None},
            "previousCustomer": {"nickname": "bobby"},
        }
    }


async def test_previous_rows_read_their_relations_as_they_are_now(gql):
    data = await gql.data(
        """mutation { updateOrder(rowId: 2, set: {note: "changed"}) {
             previousOrder { note customer { name } } order { note } } }"""
    )
    assert data == {
        "updateOrder": {"previousOrder": {"note": None, "customer": {"name": "Ann"}}, "order": {"note": "changed"}}
    }


async def test_update_of_a_missing_row_answers_null(gql):
    data = await gql.data(
        'mutation { updateTag(rowId: 999, set: {label: "x"}) { tag { label } previousTag { label } } }'
    )
    assert data == {"updateTag": {"tag": None, "previousTag": None}}


async def test_a_global_id_of_another_type_is_refused(gql):
    status, body = await gql.errors(
        'mutation($id: ID!) { updateCustomerByNodeId(nodeId: $id, set: {nickname: "x"}) { customer { rowId } } }',
        {"id": encode_global_id("Tag", 1)},
    )
    assert status == 400
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["data"] is None


async def test_delete_by_key_and_by_global_id(gql):
    created = await gql.data(
        'mutation { a: createTag(input: {label: "del-1"}) { tag { rowId } } b: createTag(input: {label: "del-2"}) { tag { rowId } } }'
    )
    first, second = created["a"]["tag"]["rowId"], created["b"]["tag"]["rowId"]
    data = await gql.data(
        "mutation($id: ID!, $key: Int!) { a: deleteTag(rowId: $key) { tag { label } deletedId }"
        " b: deleteTagByNodeId(nodeId: $id) { tag { rowId label } deletedId } c: deleteTag(rowId: $key) { tag { label } deletedId } }",
        {"key": first, "id": encode_global_id("Tag", second)},
    )
    assert data == {
        "a": {"tag": {"label": "del-1"}, "deletedId": encode_global_id("Tag", first)},
        "b": {"tag": {"rowId": second, "label": "del-2"}, "deletedId": encode_global_id("Tag", second)},
        "c": {"tag": None, "deletedId": None},
    }


async def test_delete_by_filter_returns_the_deleted_rows(gql, database_url):
    await gql.data('mutation { createTags(inputs: [{label: "bulk-a"}, {label: "bulk-b"}]) { tags { rowId } } }')
    data = await gql.data(
        'mutation { deleteTags(where: {label: {startsWith: "bulk-"}}) { affectedCount tags { label } } }'
    )
    assert data["deleteTags"]["affectedCount"] == 2
    assert sorted(t["label"] for t in data["deleteTags"]["tags"]) == ["bulk-a", "bulk-b"]
    assert fetch(database_url, "select count(*) from app.tags where label like 'bulk-%'") == [(0,)]


async def test_a_table_without_a_key_is_created_and_read_back_from_the_written_row(gql):
    data = await gql.data('mutation { createNote(input: {body: "hello"}) { note { body } } }')
    assert data == {"createNote": {"note": {"body": "hello"}}}


# --- upserts -----------------------------------------------------------------------------------------------------


async def test_upsert_inserts_updates_or_leaves_alone(gql, database_url):
    upsert = """mutation($input: CreateCustomerInput!, $action: OnConflictAction!) {
        createCustomer(input: $input, onConflict: {columns: ["email"], action: $action}) {
          customer { rowId email name } previousCustomer { name } } }"""
    inserted = await gql.data(upsert, {"input": {"email": "up@example.com", "name": "Up"}, "action": "UPDATE"})
    row_id = inserted["createCustomer"]["customer"]["rowId"]
    assert inserted["createCustomer"]["previousCustomer"] is None
    updated = await gql.data(upsert, {"input": {"email": "up@example.com", "name": "Up Again"}, "action": "UPDATE"})
    assert updated["createCustomer"] == {
        "customer": {"rowId": row_id, "email": "up@example.com", "name": "Up Again"},
        "previousCustomer": {"name": "Up"},
    }
    left = await gql.data(upsert, {"input": {"email": "up@example.com", "name": "Ignored"}, "action": "NOTHING"})
    assert left["createCustomer"]["customer"] == {"rowId": row_id, "email": "up@example.com", "name": "Up Again"}
    assert fetch(database_url, "select count(*) from app.customers where email = 'up@example.com'") == [(1,)]


async def test_upsert_by_constraint_name_updates_only_the_columns_named(gql, database_url):
    await gql.data(
        'mutation { createCustomer(input: {email: "named@example.com", name: "Named", nickname: "n1"}) { customer { rowId } } }'
    )
    data = await gql.data(
        """mutation { createCustomer(input: {email: "named@example.com", name: "Renamed", nickname: "n2"},
             onConflict: {constraint: "customers_email_key", update: ["nickname"]}) { customer { name nickname } } }"""
    )
    assert data == {"createCustomer": {"customer": {"name": "Named", "nickname": "n2"}}}


async def test_rows_nested_under_an_upsert_get_its_key_in_every_outcome(gql, database_url):
    for action, number in (("UPDATE", "U-1"), ("NOTHING", "U-2")):
        data = await gql.data(
            """mutation($action: OnConflictAction!, $number: String!) { createCustomer(
                 input: {email: "ann@example.com", name: "Ann", orders: {create: [{number: $number}]}},
                 onConflict: {columns: ["email"], action: $action}) { customer { rowId orders(orderBy: NUMBER_ASC) { number } } } }""",
            {"action": action, "number": number},
        )
        customer = data["createCustomer"]["customer"]
        assert customer["rowId"] == 1
        assert {"number": number} in customer["orders"]


async def test_upsert_many(gql):
    data = await gql.data(
        """mutation { createTags(inputs: [{label: "gift"}, {label: "upsert-many-new"}],
             onConflict: {columns: ["label"], action: NOTHING}) { tags { rowId label } } }"""
    )
    tags = data["createTags"]["tags"]
    assert tags[0] == {"rowId": 1, "label": "gift"}
    assert tags[1]["label"] == "upsert-many-new"


async def test_on_conflict_needs_a_unique_key(gql):
    status, body = await gql.errors(
        'mutation { createCustomer(input: {email: "x@example.com", name: "X"}, onConflict: {columns: ["nickname"]}) { customer { rowId } } }'
    )
    assert status == 400 and body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["errors"][0]["path"] == ["createCustomer"]


async def test_foreign_tables_offer_no_upserts(tmp_path, database_url):
    available = fetch(database_url, "select count(*) from pg_available_extensions where name = 'postgres_fdw'")
    if available != [(1,)]:
        pytest.skip("the test server cannot install postgres_fdw (PostgreSQL contrib)")
    execute(
        database_url,
        """create extension if not exists postgres_fdw;
           create server if not exists nowhere foreign data wrapper postgres_fdw options (dbname 'nowhere');
           create foreign table if not exists app.remote_items (id integer not null, name text) server nowhere""",
    )
    settings = {**SETTINGS, "entities": {**SETTINGS["entities"], "remote_items": {"primary_key": ["id"]}}}
    try:
        sdl = (await read_schema(database_url, tmp_path, settings)).sdl
    finally:
        execute(database_url, "drop foreign table app.remote_items")
    assert "  createRemoteItem(input: CreateRemoteItemInput!): CreateRemoteItemPayload\n" in sdl
    assert "  createCustomer(input: CreateCustomerInput!, onConflict: CustomerOnConflictInput)" in sdl


# --- versions ----------------------------------------------------------------------------------------------------


async def test_expected_version_from_the_system_transaction_id(gql):
    version = (await gql.data("{ customer(rowId: 2) { rowVersion } }"))["customer"]["rowVersion"]
    status, body = await gql.errors(
        'mutation { updateCustomer(rowId: 2, set: {tier: "gold"}, expectedVersion: "1") { customer { tier } } }'
    )
    assert status == 200 and body["data"] == {"updateCustomer": None}
    error = body["errors"][0]
    assert error["extensions"]["code"] == "STALE_VERSION"
    assert error["extensions"]["fields"] == ["expectedVersion"]
    assert error["extensions"]["type"] == "CustomerErrorCode"
    data = await gql.data(
        'mutation($v: String) { updateCustomer(rowId: 2, set: {tier: "gold"}, expectedVersion: $v) { customer { tier rowVersion } } }',
        {"v": version},
    )
    assert data["updateCustomer"]["customer"]["tier"] == "gold"
    assert data["updateCustomer"]["customer"]["rowVersion"] != version


async def test_expected_version_from_a_version_column_on_update_and_delete(gql, database_url):
    order = (
        await gql.data('mutation { createOrder(input: {customerId: 2, number: "V-1"}) { order { rowId rowVersion } } }')
    )["createOrder"]["order"]
    assert order["rowVersion"] == "1"
    data = await gql.data(
        'mutation($id: Int!) { updateOrder(rowId: $id, set: {note: "v2"}, expectedVersion: "1") { order { rowVersion } } }',
        {"id": order["rowId"]},
    )
    assert data == {"updateOrder": {"order": {"rowVersion": "2"}}}
    status, body = await gql.errors(
        'mutation($id: Int!) { deleteOrder(rowId: $id, expectedVersion: "1") { order { rowId } } }',
        {"id": order["rowId"]},
    )
    assert body["errors"][0]["extensions"]["code"] == "STALE_VERSION"
    assert fetch(database_url, "select count(*) from app.orders where id = %s", [order["rowId"]]) == [(1,)]
    data = await gql.data(
        'mutation($id: Int!) { deleteOrder(rowId: $id, expectedVersion: "2") { order { note } } }',
        {"id": order["rowId"]},
    )
    assert data == {"deleteOrder": {"order": {"note": "v2"}}}


# --- writes by filter --------------------------------------------------------------------------------------------


async def test_bulk_update_with_previous_rows_in_updated_order(gql):
    await gql.data(
        """mutation { createOrders(inputs: [{customerId: 2, number: "P-1", note: "p1"},
             {customerId: 2, number: "P-2", note: "p2"}, {customerId: 2, number: "P-3", note: "p3"}]) { orders { rowId } } }"""
    )
    data = await gql.data(
        """mutation { updateOrders(where: {number: {startsWith: "P-"}}, set: {note: "pp"}) {
             affectedCount orders { number note } previousOrders { number note rowVersion } } }"""
    )
    payload = data["updateOrders"]
    assert payload["affectedCount"] == 3
    assert {o["note"] for o in payload["orders"]} == {"pp"}
    assert [o["number"] for o in payload["orders"]] == [p["number"] for p in payload["previousOrders"]]
    assert sorted((p["number"], p["note"], p["rowVersion"]) for p in payload["previousOrders"]) == [
        ("P-1", "p1", None), ("P-2", "p2", None), ("P-3", "p3", None),
    ]  # fmt: skip


async def test_bulk_update_limit_rolls_back(tmp_path, database_url):
    settings = {**SETTINGS, "limits": {"bulk_rows": 2}}
    async with graphql_service(tmp_path, database_url, settings) as gql:
        await gql.data(
            'mutation { a: createOrders(inputs: [{customerId: 2, number: "L-1"}, {customerId: 2, number: "L-2"}]) { orders { rowId } }'
            ' b: createOrder(input: {customerId: 2, number: "L-3"}) { order { rowId } } }'
        )
        status, body = await gql.errors(
            'mutation { updateOrders(where: {number: {startsWith: "L-"}}, set: {note: "bulk"}) { affectedCount } }'
        )
        assert status == 200
        error = body["errors"][0]
        assert error["extensions"]["code"] == "BULK_LIMIT_EXCEEDED"
        assert (error["extensions"]["limit"], error["extensions"]["actual"]) == (2, 3)
        assert fetch(database_url, "select count(*) from app.orders where note = 'bulk'") == [(0,)]
        status, body = await gql.errors(
            'mutation { deleteOrders(where: {number: {startsWith: "L-"}}) { affectedCount } }'
        )
        assert body["errors"][0]["extensions"]["code"] == "BULK_LIMIT_EXCEEDED"
        assert fetch(database_url, "select count(*) from app.orders where number like 'L-%'") == [(3,)]
        # A create writing more rows than the limit (nested rows count) fails before any SQL.
        status, body = await gql.errors(
            """mutation { createCustomer(input: {email: "many@example.com", name: "Many",
                 orders: {create: [{number: "M-1"}, {number: "M-2"}]}}) { customer { rowId } } }"""
        )
        assert status == 413
        assert body["errors"][0]["extensions"] | {"requestId": None} == {
            "code": "BULK_LIMIT_EXCEEDED", "requestId": None, "limit": 2, "actual": 3,
        }  # fmt: skip
        assert body["data"] is None


async def test_require_filter(tmp_path, database_url):
    settings = {**SETTINGS, "limits": {"require_filter": True}}
    async with graphql_service(tmp_path, database_url, settings) as gql:
        for where in ("", "where: {}, "):
            status, body = await gql.errors(
                f'mutation {{ updateRooms({where}set: {{name: "x"}}) {{ affectedCount }} }}'
            )
            assert status == 400
            assert body["errors"][0]["extensions"]["code"] == "FILTER_REQUIRED"
        data = await gql.data('mutation { updateRooms(set: {name: "Any"}, unfiltered: true) { affectedCount } }')
        assert data == {"updateRooms": {"affectedCount": 2}}


async def test_bulk_update_does_not_write_relations(gql):
    status, body = await gql.errors(
        "mutation { updateOrders(where: {rowId: {equalTo: 1}}, set: {customer: {connect: {rowId: 2}}}) { affectedCount } }"
    )
    assert status == 400
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "does not write related rows" in body["errors"][0]["message"]


# --- functions, retries, savepoints, commits ---------------------------------------------------------------------


async def test_volatile_functions_are_mutations_in_the_same_transaction(gql, database_url):
    status, body = await gql.errors(
        """mutation { a: addTag(wanted: "fn-tag") { label } b: createTag(input: {label: "fn-tag"}) { tag { rowId } } }"""
    )
    assert body["data"] == {"a": None, "b": None}
    assert body["errors"][0]["path"] == ["b"]
    assert fetch(database_url, "select count(*) from app.tags where label = 'fn-tag'") == [(0,)]
    data = await gql.data('mutation { addTag(wanted: "fn-tag") { label orderTags { orderId } } }')
    assert data == {"addTag": {"label": "fn-tag", "orderTags": []}}


async def test_a_serialization_failure_is_retried(gql, database_url):
    execute(database_url, "select setval('app.flaky_calls', 1, false)")
    data = await gql.data('mutation { flakyTag(wanted: "retried") { label } }')
    assert data == {"flakyTag": {"label": "retried"}}
    assert fetch(database_url, "select last_value from app.flaky_calls") == [(2,)]
    assert fetch(database_url, "select count(*) from app.tags where label = 'retried'") == [(1,)]


async def test_a_connection_lost_while_committing_is_retryable_with_the_caveat(gql, database_url):
    execute(
        database_url,
        """create function app.die_at_commit() returns trigger language plpgsql as $$
             begin perform pg_terminate_backend(pg_backend_pid()); return null; end $$;
           create constraint trigger rooms_die_at_commit after insert on app.rooms
             deferrable initially deferred for each row execute function app.die_at_commit()""",
    )
    try:
        status, body = await gql.errors('mutation { createRoom(input: {rowId: 77, name: "Doomed"}) { room { name } } }')
    finally:
        execute(database_url, "drop trigger rooms_die_at_commit on app.rooms; drop function app.die_at_commit()")
    assert status == 503
    assert body["data"] is None
    error = body["errors"][0]
    assert error["extensions"]["code"] == "DATABASE_UNAVAILABLE"
    assert "unknown" in error["message"] and "idempotent" in error["message"]


async def test_a_mutation_inside_an_open_transaction_uses_a_savepoint(gql, database_url, tmp_path):
    """SPEC "Mutations" 1: the caller's transaction stays usable when the mutation fails (the pipeline API; no
    HTTP request opens a transaction before the mutation yet)."""
    config, model = await read_model(database_url, tmp_path / "model", SETTINGS)
    planner = MutationPlanner(QueryPlanner(build_graphql_schema(model).schema, model, config.limits))
    statements = Statements(model, config.limits, config.errors)

    def plan(text: str):
        document = parse(text)
        return planner.plan(document.definitions[0], {}, {})

    async with open_pool(database_url, connection_settings(config), size=1) as pool:
        executor = Executor(pool)
        pipeline, context = Pipeline(executor), Context("test")

        async def work(tx):
            await tx.execute("insert into app.tags (label) values ('outer-kept')")
            with pytest.raises(MutationFailed) as failed:
                taken = plan('mutation { createTag(input: {label: "gift"}) { tag { rowId } } }')
                await pipeline.write(statements, taken, context, transaction=tx)
            assert failed.value.error.code_name == "LABEL_TAKEN"
            kept = plan('mutation { createTag(input: {label: "inner-kept"}) { tag { rowId } } }')
            await pipeline.write(statements, kept, context, transaction=tx)

        await executor.run(work)
    labels = {row[0] for row in fetch(database_url, "select label from app.tags where label like '%-kept'")}
    assert labels == {"outer-kept", "inner-kept"}


async def test_mutations_over_get_are_refused(gql):
    response = await gql.client.get(
        "/graphql", params={"query": 'mutation { createTag(input: {label: "g"}) { tag { rowId } } }'}
    )
    assert response.status_code == 405
