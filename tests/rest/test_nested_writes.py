"""Nested writes in REST bodies (SPEC "REST API" -> Writes 9, "Nested writes"): the GraphQL relation shapes with REST
names (to-one create, connect, connectOrCreate, update, disconnect; to-many create, connect, connectOrCreate,
disconnect, set, update, delete, sync; many-to-many create, connect, connectOrCreate, disconnect, set), keys by
their REST name, a unique key or a global ID; all or nothing; constraint errors with typed codes naming the input
path; a non-matching If-Match refuses the whole nested update."""

import pytest

from svc.plan import encode_global_id
from tests.support.postgres import fetch
from tests.support.rest import assert_json, assert_problem, bad_request, problem, rest_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "entities": {"orders": {"version_column": "version"}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


async def new_customer(rest, email: str, **members) -> int:
    response = await rest.post("/rest/customers", json={"email": email, "name": email, **members})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def addresses(database_url: str, customer: int) -> list[tuple]:
    return fetch(database_url, "select city from app.addresses where customer_id = %s order by city", [customer])


def tags_of(database_url: str, order: int) -> list[tuple]:
    return fetch(
        database_url,
        "select t.label from app.order_tags ot join app.tags t on t.id = ot.tag_id where ot.order_id = %s"
        " order by t.label",
        [order],
    )


def conflict(code: str, detail: str, instance: str, code_type: str, fields: list[str]) -> dict:
    return problem(409, code, detail, instance, title="Conflict", codeType=code_type, fields=fields)


# --- to-one ------------------------------------------------------------------------------------------------------


async def test_to_one_create_is_written_first(rest, database_url):
    response = await rest.post(
        "/rest/orders?fields=number&include=customer,customer.orders&fields[customer]=email&fields[customer.orders]=number",
        json={"number": "T1-1", "customer": {"create": {"email": "t1-1@example.com", "name": "New Buyer"}}},
    )
    assert_json(
        response, 201, {"number": "T1-1", "customer": {"email": "t1-1@example.com", "orders": [{"number": "T1-1"}]}}
    )
    assert fetch(
        database_url,
        "select c.email from app.orders o join app.customers c on c.id = o.customer_id where o.number = 'T1-1'",
    ) == [("t1-1@example.com",)]


async def test_to_one_connect_by_rest_key_unique_key_or_global_id(rest):
    path = "/rest/orders?fields=number,customerId"
    for number, key, customer in (
        ("T1-2", {"id": 2}, 2),
        ("T1-3", {"email": "ann@example.com"}, 1),
        ("T1-4", {"id": encode_global_id("Customer", 2)}, 2),
        ("T1-5", {"rowId": 1}, 1),
    ):
        response = await rest.post(path, json={"number": number, "customer": {"connect": key}})
        assert_json(response, 201, {"number": number, "customerId": customer})


async def test_to_one_connect_or_create(rest, database_url):
    body = {
        "number": "T1-6",
        "customer": {
            "connectOrCreate": {
                "where": {"email": "coc@example.com"},
                "create": {"email": "coc@example.com", "name": "COC"},
            }
        },
    }
    first = await rest.post("/rest/orders?fields=customerId", json=body)
    second = await rest.post("/rest/orders?fields=customerId", json={**body, "number": "T1-7"})
    assert first.json() == second.json()
    assert fetch(database_url, "select count(*) from app.customers where email = 'coc@example.com'") == [(1,)]


async def test_to_one_connect_to_a_missing_row_is_the_relations_not_found(rest, database_url):
    assert_problem(
        await rest.post("/rest/orders", json={"number": "T1-8", "customer": {"connect": {"id": 999}}}),
        conflict(
            "CUSTOMER_NOT_FOUND",
            "no customer matches input.customer.connect",
            "/rest/orders",
            "OrderErrorCode",
            ["input.customer.connect"],
        ),
    )
    assert fetch(database_url, "select count(*) from app.orders where number = 'T1-8'") == [(0,)]


async def test_to_one_update_and_disconnect(rest, database_url):
    owner = await new_customer(rest, "t1-owner@example.com")
    created = await rest.post("/rest/addresses", json={"city": "Lyon", "customer": {"connect": {"id": owner}}})
    key = created.json()["id"]
    response = await rest.patch(
        f"/rest/addresses/{key}?fields=city&include=customer&fields[customer]=nickname",
        json={"customer": {"update": {"nickname": "updated through"}}},
    )
    assert_json(response, 200, {"city": "Lyon", "customer": {"nickname": "updated through"}})
    response = await rest.patch(f"/rest/addresses/{key}?fields=customerId", json={"customer": {"disconnect": True}})
    assert_json(response, 200, {"customerId": None})
    assert fetch(database_url, "select nickname from app.customers where id = %s", [owner]) == [("updated through",)]


# --- to-many -----------------------------------------------------------------------------------------------------


async def test_to_many_create_and_connect_in_a_create(rest, database_url):
    loose = (await rest.post("/rest/addresses", json={"city": "Loose"})).json()["id"]
    response = await rest.post(
        "/rest/customers?fields=email&include=orders,addressesByCustomerId"
        "&fields[orders]=number&fields[addressesByCustomerId]=city",
        json={
            "email": "tm@example.com",
            "name": "TM",
            "orders": {"create": [{"number": "TM-1"}, {"number": "TM-2", "quantity": 3}]},
            "addressesByCustomerId": {"connect": [{"id": loose}], "create": [{"city": "Made"}]},
        },
    )
    assert_json(
        response,
        201,
        {
            "email": "tm@example.com",
            "orders": [{"number": "TM-1"}, {"number": "TM-2"}],
            "addressesByCustomerId": [{"city": "Loose"}, {"city": "Made"}],
        },
    )
    key = fetch(database_url, "select id from app.customers where email = 'tm@example.com'")[0][0]
    assert addresses(database_url, key) == [("Loose",), ("Made",)]


async def test_to_many_members_of_an_update(rest, database_url):
    key = await new_customer(
        rest, "tmu@example.com", addressesByCustomerId={"create": [{"city": "A"}, {"city": "B"}, {"city": "C"}]}
    )
    path = f"/rest/customers/{key}?fields=id&include=addressesByCustomerId&fields[addressesByCustomerId]=city"
    ids = dict(
        (city, id_)
        for id_, city in fetch(database_url, "select id, city from app.addresses where customer_id = %s", [key])
    )

    response = await rest.patch(path, json={"addressesByCustomerId": {"disconnect": [{"id": ids["A"]}]}})
    assert_json(response, 200, {"id": key, "addressesByCustomerId": [{"city": "B"}, {"city": "C"}]})
    response = await rest.patch(path, json={"addressesByCustomerId": {"set": [{"id": ids["C"]}, {"id": ids["A"]}]}})
    assert addresses(database_url, key) == [("A",), ("C",)]
    response = await rest.patch(
        path, json={"addressesByCustomerId": {"update": [{"where": {"id": ids["C"]}, "data": {"city": "C2"}}]}}
    )
    assert addresses(database_url, key) == [("A",), ("C2",)]
    response = await rest.patch(path, json={"addressesByCustomerId": {"delete": [{"id": ids["A"]}]}})
    assert addresses(database_url, key) == [("C2",)]
    assert fetch(database_url, "select count(*) from app.addresses where id = %s", [ids["A"]]) == [(0,)]
    # sync: a list of row objects; the key matches a child, no key inserts, the others are deleted.
    response = await rest.patch(
        path, json={"addressesByCustomerId": {"sync": [{"id": ids["C"], "city": "C3"}, {"city": "D"}]}}
    )
    assert_json(response, 200, {"id": key, "addressesByCustomerId": [{"city": "C3"}, {"city": "D"}]})
    assert addresses(database_url, key) == [("C3",), ("D",)]


async def test_update_and_delete_act_only_on_children(rest, database_url):
    key = await new_customer(rest, "only-children@example.com")
    path = f"/rest/customers/{key}"
    for member in ("update", "delete"):
        item = {"where": {"id": 1}, "data": {"city": "Stolen"}} if member == "update" else {"id": 1}
        at = f"input.addressesByCustomerId.{member}[0]" + (".where" if member == "update" else "")
        assert_problem(
            await rest.patch(path, json={"addressesByCustomerId": {member: [item]}}),
            problem(
                404,
                "NOT_FOUND",
                f"{at} names no row of addressesByCustomerId of this row",
                path,
                title="Not Found",
                fields=[at],
            ),
        )
    assert fetch(database_url, "select city from app.addresses where id = 1") == [("Oslo",)]


async def test_a_required_key_cannot_be_released(rest):
    assert_problem(
        await rest.patch("/rest/customers/2", json={"orders": {"disconnect": [{"id": 3}]}}),
        bad_request(
            "orders cannot be released (disconnect): their key is not nullable",
            "/rest/customers/2",
            field="input.orders.disconnect",
        ),
    )


# --- many-to-many ------------------------------------------------------------------------------------------------


async def test_many_to_many_members(rest, database_url):
    response = await rest.post(
        "/rest/orders?fields=number&include=tags&fields[tags]=label",
        json={
            "customerId": 2,
            "number": "MM-1",
            "tags": {"connect": [{"label": "gift"}], "create": [{"label": "mm-new"}]},
        },
    )
    assert_json(response, 201, {"number": "MM-1", "tags": [{"label": "gift"}, {"label": "mm-new"}]})
    key = fetch(database_url, "select id from app.orders where number = 'MM-1'")[0][0]
    path = f"/rest/orders/{key}"
    await rest.patch(path, json={"tags": {"disconnect": [{"label": "gift"}, {"label": "rush"}]}})
    assert tags_of(database_url, key) == [("mm-new",)]
    await rest.patch(path, json={"tags": {"set": [{"label": "rush"}, {"id": 1}]}})
    assert tags_of(database_url, key) == [("gift",), ("rush",)]
    await rest.patch(
        path,
        json={"tags": {"connectOrCreate": [{"where": {"label": "mm-coc"}, "create": {"label": "mm-coc"}}]}},
    )
    assert tags_of(database_url, key) == [("gift",), ("mm-coc",), ("rush",)]
    # Connecting a related row keeps its junction row.
    await rest.patch(path, json={"tags": {"connect": [{"label": "gift"}]}})
    assert tags_of(database_url, key) == [("gift",), ("mm-coc",), ("rush",)]


async def test_the_junction_rows_directly(rest, database_url):
    response = await rest.post(
        "/rest/orders?fields=number&include=orderTags&fields[orderTags]=tagId",
        json={
            "customerId": 2,
            "number": "MM-2",
            "orderTags": {"create": [{"tagId": 1}, {"tag": {"connect": {"label": "rush"}}}]},
        },
    )
    assert_json(response, 201, {"number": "MM-2", "orderTags": [{"tagId": 1}, {"tagId": 2}]})


async def test_key_inputs_name_their_item_paths(rest):
    assert_problem(
        await rest.patch(
            "/rest/orders/1", json={"tags": {"connect": [{"label": "rush"}, {"id": encode_global_id("Customer", 1)}]}}
        ),
        bad_request(
            "a global ID of a Customer where a Tag belongs", "/rest/orders/1", field="input.tags.connect[1].id"
        ),
    )
    assert_problem(
        await rest.patch("/rest/orders/1", json={"tags": {"connect": [{"id": "one"}]}}),
        bad_request(
            "input.tags.connect[0].id: Int cannot represent non-integer value: 'one'",
            "/rest/orders/1",
            field="input.tags.connect[0].id",
        ),
    )


# --- errors, all or nothing, If-Match ----------------------------------------------------------------------------


async def test_constraint_errors_name_the_nested_input_path(rest, database_url):
    assert_problem(
        await rest.post(
            "/rest/orders",
            json={"customerId": 2, "number": "NE-1", "orderTags": {"create": [{"tagId": 1}, {"tagId": 99}]}},
        ),
        conflict(
            "TAG_NOT_FOUND",
            'insert or update on table "order_tags" violates foreign key constraint "order_tags_tag_id_fkey"',
            "/rest/orders",
            "OrderTagErrorCode",
            ["input.orderTags.create[1].tagId"],
        ),
    )
    assert_problem(
        await rest.post(
            "/rest/customers",
            json={
                "email": "ne@example.com",
                "name": "NE",
                "orders": {"create": [{"number": "NE-2"}, {"number": "NE-2"}]},
            },
        ),
        conflict(
            "CUSTOMER_ID_NUMBER_TAKEN",
            'duplicate key value violates unique constraint "orders_customer_id_number_key"',
            "/rest/customers",
            "OrderErrorCode",
            ["input.orders.create", "input.orders.create[1].number"],
        ),
    )
    assert_problem(
        await rest.post(
            "/rest/customers",
            json={
                "email": "ne@example.com",
                "name": "NE",
                "orders": {"create": [{"number": "NE-3", "note": "far too long for ten"}]},
            },
        ),
        problem(
            422,
            "NOTE_TOO_LONG",
            "input.orders.create[0].note is too long: at most 10 characters",
            "/rest/customers",
            title="Unprocessable Content",
            codeType="OrderErrorCode",
            field="input.orders.create[0].note",
        ),
    )
    assert fetch(database_url, "select count(*) from app.orders where number like 'NE-%'") == [(0,)]
    assert fetch(database_url, "select count(*) from app.customers where email = 'ne@example.com'") == [(0,)]


async def test_a_failing_nested_write_leaves_everything_as_it_was(rest, database_url):
    before = (
        fetch(database_url, "select count(*) from app.customers"),
        fetch(database_url, "select count(*) from app.tags"),
    )
    body = [
        {
            "email": "aon-1@example.com",
            "name": "AON 1",
            "orders": {"create": [{"number": "AON-1", "tags": {"create": [{"label": "aon-tag"}]}}]},
        },
        {
            "email": "aon-2@example.com",
            "name": "AON 2",
            "orders": {"create": [{"number": "AON-2", "orderTags": {"create": [{"tagId": 99}]}}]},
        },
    ]
    response = await rest.post("/rest/customers", json=body)
    assert_problem(
        response,
        conflict(
            "TAG_NOT_FOUND",
            'insert or update on table "order_tags" violates foreign key constraint "order_tags_tag_id_fkey"',
            "/rest/customers",
            "OrderTagErrorCode",
            ["inputs[1].orders.create[0].orderTags.create[0].tagId"],
        ),
    )
    after = (
        fetch(database_url, "select count(*) from app.customers"),
        fetch(database_url, "select count(*) from app.tags"),
    )
    assert after == before
    assert fetch(database_url, "select count(*) from app.orders where number like 'AON-%'") == [(0,)]


async def test_a_non_matching_if_match_refuses_the_whole_nested_update(rest, database_url):
    response = await rest.post("/rest/orders", json={"customerId": 2, "number": "IFM-1"})
    key = response.json()["id"]
    path = f"/rest/orders/{key}"
    body = {"note": "changed", "tags": {"create": [{"label": "ifm-tag"}]}, "customer": {"update": {"nickname": "ifm"}}}
    assert_problem(
        await rest.patch(path, json=body, headers={"If-Match": '"7"'}),
        problem(
            412,
            "STALE_VERSION",
            "the row has changed since that version was read",
            path,
            title="Precondition Failed",
            codeType="OrderErrorCode",
            fields=["If-Match"],
        ),
    )
    assert fetch(database_url, "select note, version from app.orders where id = %s", [key]) == [(None, 1)]
    assert fetch(database_url, "select count(*) from app.tags where label = 'ifm-tag'") == [(0,)]
    assert fetch(database_url, "select nickname from app.customers where id = 2") == [(None,)]
    response = await rest.patch(
        f"{path}?fields=note&include=tags&fields[tags]=label", json=body, headers={"If-Match": '"1"'}
    )
    assert_json(response, 200, {"note": "changed", "tags": [{"label": "ifm-tag"}]})
    assert fetch(database_url, "select nickname from app.customers where id = 2") == [("ifm",)]
