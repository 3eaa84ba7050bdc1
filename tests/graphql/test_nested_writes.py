"""Nested writes (SPEC "Nested writes"): every row of the table (to-one, to-many and many-to-many relations, in create
and in update inputs) and every rule under it, each checked in the payload and in the database."""

import pytest

from svc.plan import encode_global_id
from tests.support.graphql import graphql_service
from tests.support.postgres import fetch

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def customer(gql, email: str, **more: str) -> int:
    extra = "".join(f", {k}: {v}" for k, v in more.items())
    data = await gql.data(
        f'mutation {{ createCustomer(input: {{email: "{email}", name: "{email}"{extra}}}) {{ customer {{ rowId }} }} }}'
    )
    return data["createCustomer"]["customer"]["rowId"]


async def refused(gql, query: str, variables=None) -> dict:
    """The one error of a mutation that must fail (and write nothing)."""
    status, body = await gql.errors(query, variables)
    assert len(body["errors"]) == 1, body
    return body["errors"][0] | {"status": status, "data": body["data"]}


# --- to-one (this row holds the key) -----------------------------------------------------------------------------


async def test_to_one_connect_by_key_and_by_global_id(gql):
    data = await gql.data(
        """mutation($id: ID) { a: createOrder(input: {number: "T1-1", customer: {connect: {email: "bob@example.com"}}}) {
             order { customer { rowId } } }
           b: createOrder(input: {number: "T1-2", customer: {connect: {id: $id}}}) { order { customer { rowId } } } }""",
        {"id": encode_global_id("Customer", 1)},
    )
    assert data == {"a": {"order": {"customer": {"rowId": 2}}}, "b": {"order": {"customer": {"rowId": 1}}}}


async def test_to_one_connect_refuses_a_global_id_of_another_type(gql):
    error = await refused(
        gql,
        'mutation($id: ID) { createOrder(input: {number: "T1-3", customer: {connect: {id: $id}}}) { order { rowId } } }',
        {"id": encode_global_id("Tag", 1)},
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "input.customer.connect.id"


async def test_to_one_connect_to_a_missing_row_is_the_relations_not_found(gql):
    error = await refused(
        gql, 'mutation { createOrder(input: {number: "T1-4", customer: {connect: {rowId: 999}}}) { order { rowId } } }'
    )
    assert error["extensions"]["code"] == "CUSTOMER_NOT_FOUND"
    assert error["extensions"]["type"] == "OrderErrorCode"
    assert error["extensions"]["fields"] == ["input.customer.connect"]


async def test_to_one_create_is_written_first(gql, database_url):
    data = await gql.data(
        """mutation { createOrder(input: {number: "T1-5",
             customer: {create: {email: "t1-5@example.com", name: "New Buyer"}}}) {
             order { number customer { email orders { number } } } } }"""
    )
    assert data == {
        "createOrder": {
            "order": {"number": "T1-5", "customer": {"email": "t1-5@example.com", "orders": [{"number": "T1-5"}]}}
        }
    }


async def test_to_one_connect_or_create_connects_or_creates(gql, database_url):
    query = """mutation($email: String!) { createAddress(input: {city: "Lyon",
        customer: {connectOrCreate: {where: {email: $email}, create: {email: $email, name: $email}}}}) {
        address { customer { rowId email } } } }"""
    existing = await gql.data(query, {"email": "ann@example.com"})
    assert existing["createAddress"]["address"]["customer"] == {"rowId": 1, "email": "ann@example.com"}
    created = await gql.data(query, {"email": "coc@example.com"})
    assert created["createAddress"]["address"]["customer"]["email"] == "coc@example.com"
    assert fetch(database_url, "select count(*) from app.customers where email = 'coc@example.com'") == [(1,)]


async def test_connect_or_create_does_not_write_the_created_rows_relations(gql):
    error = await refused(
        gql,
        """mutation { createAddress(input: {city: "Nice", customer: {connectOrCreate: {where: {email: "r@example.com"},
             create: {email: "r@example.com", name: "R", orders: {create: [{number: "R-1"}]}}}}}) { address { rowId } } }""",
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "input.customer.connectOrCreate.create.orders"


async def test_to_one_disconnect_sets_the_key_null(gql, database_url):
    address = (
        await gql.data('mutation { createAddress(input: {city: "Oxford", customerId: 2}) { address { rowId } } }')
    )["createAddress"]["address"]["rowId"]
    data = await gql.data(
        "mutation($id: Int!) { updateAddress(rowId: $id, set: {customer: {disconnect: true}}) {"
        " address { customerId customer { rowId } } previousAddress { customerId } } }",
        {"id": address},
    )
    assert data == {
        "updateAddress": {"address": {"customerId": None, "customer": None}, "previousAddress": {"customerId": 2}}
    }


async def test_to_one_disconnect_needs_a_nullable_key(gql):
    error = await refused(
        gql, "mutation { updateOrder(rowId: 1, set: {customer: {disconnect: true}}) { order { rowId } } }"
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "not nullable" in error["message"]


async def test_to_one_update_changes_the_referred_row(gql, database_url):
    data = await gql.data(
        """mutation { updateOrder(rowId: 3, set: {note: "n", customer: {update: {nickname: "via-order"}}}) {
             order { note customer { rowId nickname } } } }"""
    )
    assert data == {"updateOrder": {"order": {"note": "n", "customer": {"rowId": 2, "nickname": "via-order"}}}}


async def test_to_one_connect_in_an_update_moves_the_reference(gql):
    data = await gql.data("""mutation { createOrder(input: {number: "T1-6", customerId: 1}) { order { rowId } } }""")
    order = data["createOrder"]["order"]["rowId"]
    data = await gql.data(
        "mutation($id: Int!) { updateOrder(rowId: $id, set: {customer: {connect: {rowId: 2}}}) { order { customerId } } }",
        {"id": order},
    )
    assert data == {"updateOrder": {"order": {"customerId": 2}}}


async def test_a_reference_is_given_once(gql):
    error = await refused(
        gql,
        'mutation { createOrder(input: {number: "T1-7", customerId: 1, customer: {connect: {rowId: 2}}}) { order { rowId } } }',
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"


# --- to-many (children hold the key) -----------------------------------------------------------------------------


async def test_to_many_create_connect_and_connect_or_create(gql, database_url):
    loose = (await gql.data('mutation { createAddress(input: {city: "Loose"}) { address { rowId } } }'))[
        "createAddress"
    ]["address"]["rowId"]
    moved = (await gql.data('mutation { createAddress(input: {city: "Moved", customerId: 2}) { address { rowId } } }'))[
        "createAddress"
    ]["address"]["rowId"]
    data = await gql.data(
        """mutation($loose: Int, $moved: Int) { createCustomer(input: {email: "tm-1@example.com", name: "TM1",
             addressesByCustomerId: {
               create: [{city: "Created"}],
               connect: [{rowId: $loose}, {rowId: $moved}],
               connectOrCreate: [{where: {rowId: 9999}, create: {city: "OrCreated"}}]}}) {
             customer { rowId addressesByCustomerId(orderBy: CITY_ASC) { city } } } }""",
        {"loose": loose, "moved": moved},
    )
    cities = [a["city"] for a in data["createCustomer"]["customer"]["addressesByCustomerId"]]
    assert cities == ["Created", "Loose", "Moved", "OrCreated"]
    assert fetch(database_url, "select customer_id from app.addresses where id = %s", [moved]) == [
        (data["createCustomer"]["customer"]["rowId"],)
    ]


async def test_to_many_connect_of_a_missing_row_fails(gql):
    error = await refused(
        gql,
        'mutation { createCustomer(input: {email: "tm-2@example.com", name: "TM2", addressesByCustomerId: {connect: [{rowId: 9999}]}}) { customer { rowId } } }',
    )
    assert error["extensions"]["code"] == "NOT_FOUND"
    assert error["extensions"]["fields"] == ["input.addressesByCustomerId.connect[0]"]


async def test_to_many_disconnect_releases_only_this_rows_children(gql, database_url):
    owner = await customer(gql, "tm-3@example.com", addressesByCustomerId='{create: [{city: "Keep"}, {city: "Drop"}]}')
    rows = dict(fetch(database_url, "select city, id from app.addresses where customer_id = %s", [owner]))
    data = await gql.data(
        """mutation($owner: Int!, $drop: Int, $foreign: Int) { updateCustomer(rowId: $owner,
             set: {addressesByCustomerId: {disconnect: [{rowId: $drop}, {rowId: $foreign}]}}) {
             customer { addressesByCustomerId { city } } } }""",
        {"owner": owner, "drop": rows["Drop"], "foreign": 3},  # address 3 belongs to Bob: nothing happens to it
    )
    assert data["updateCustomer"]["customer"]["addressesByCustomerId"] == [{"city": "Keep"}]
    assert fetch(database_url, "select customer_id from app.addresses where id in (%s, 3) order by id", [rows["Drop"]]) == [
        (2,), (None,),
    ]  # fmt: skip


async def test_to_many_disconnect_needs_a_nullable_key(gql):
    error = await refused(
        gql, "mutation { updateCustomer(rowId: 1, set: {orders: {disconnect: [{rowId: 1}]}}) { customer { rowId } } }"
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "set.orders.disconnect"


async def test_to_many_set_keeps_the_listed_and_the_created(gql, database_url):
    owner = await customer(
        gql, "tm-4@example.com", addressesByCustomerId='{create: [{city: "A"}, {city: "B"}, {city: "C"}]}'
    )
    rows = dict(fetch(database_url, "select city, id from app.addresses where customer_id = %s", [owner]))
    data = await gql.data(
        """mutation($owner: Int!, $b: Int) { updateCustomer(rowId: $owner,
             set: {addressesByCustomerId: {set: [{rowId: $b}], create: [{city: "D"}]}}) {
             customer { addressesByCustomerId(orderBy: CITY_ASC) { city } } } }""",
        {"owner": owner, "b": rows["B"]},
    )
    assert data["updateCustomer"]["customer"]["addressesByCustomerId"] == [{"city": "B"}, {"city": "D"}]
    assert fetch(database_url, "select customer_id from app.addresses where id = %s", [rows["A"]]) == [(None,)]


async def test_to_many_update_and_delete_act_only_on_this_rows_children(gql, database_url):
    owner = await customer(gql, "tm-5@example.com", orders='{create: [{number: "X-1"}, {number: "X-2"}]}')
    orders = dict(fetch(database_url, "select number, id from app.orders where customer_id = %s", [owner]))
    other = fetch(database_url, "select note from app.orders where id = 3")
    data = await gql.data(
        """mutation($owner: Int!, $x1: Int, $x2: Int) { updateCustomer(rowId: $owner, set: {orders: {
             update: [{where: {rowId: $x1}, data: {note: "upd"}}], delete: [{rowId: $x2}]}}) {
             customer { orders { number note } } } }""",
        {"owner": owner, "x1": orders["X-1"], "x2": orders["X-2"]},
    )
    assert data["updateCustomer"]["customer"]["orders"] == [{"number": "X-1", "note": "upd"}]
    for member in ('update: [{where: {rowId: 3}, data: {note: "stolen"}}]', "delete: [{rowId: 3}]"):
        error = await refused(
            gql,
            f"mutation($owner: Int!) {{ updateCustomer(rowId: $owner, set: {{orders: {{{member}}}}}) {{ customer {{ rowId }} }} }}",
            {"owner": owner},
        )
        assert error["extensions"]["code"] == "NOT_FOUND"
        assert error["path"] == ["updateCustomer"]
    assert fetch(database_url, "select note from app.orders where id = 3") == other


async def test_to_many_update_by_a_unique_key_of_the_child(gql):
    owner = await customer(gql, "tm-6@example.com", orders='{create: [{number: "Y-1"}]}')
    data = await gql.data(
        """mutation($owner: Int!) { updateCustomer(rowId: $owner, set: {orders: {
             update: [{where: {customerId: $owner, number: "Y-1"}, data: {quantity: 7}}]}}) {
             customer { orders { number quantity } } } }""",
        {"owner": owner},
    )
    assert data["updateCustomer"]["customer"]["orders"] == [{"number": "Y-1", "quantity": 7}]


async def test_to_many_sync_updates_inserts_and_deletes_in_one_statement(gql, database_url):
    owner = await customer(gql, "tm-7@example.com", orders='{create: [{number: "S-1", note: "one"}, {number: "S-2"}]}')
    orders = dict(fetch(database_url, "select number, id from app.orders where customer_id = %s", [owner]))
    data = await gql.data(
        """mutation($owner: Int!, $s1: Int) { updateCustomer(rowId: $owner, set: {orders: {sync: [
             {rowId: $s1, number: "S-1", quantity: 3}, {number: "S-3"}, {number: "S-4", note: "four"}]}}) {
             customer { orders(orderBy: NUMBER_ASC) { rowId number note quantity } } } }""",
        {"owner": owner, "s1": orders["S-1"]},
    )
    rows = data["updateCustomer"]["customer"]["orders"]
    assert [(r["number"], r["note"], r["quantity"]) for r in rows] == [
        ("S-1", "one", 3),  # updated: what the row leaves out keeps its value
        ("S-3", None, 1),  # inserted: what the row leaves out takes its default
        ("S-4", "four", 1),
    ]
    assert rows[0]["rowId"] == orders["S-1"]
    assert fetch(database_url, "select count(*) from app.orders where id = %s", [orders["S-2"]]) == [(0,)]


async def test_sync_rows_write_no_relations(gql):
    error = await refused(
        gql,
        """mutation { updateCustomer(rowId: 2, set: {orders: {sync: [{number: "Z-1", tags: {connect: [{rowId: 1}]}}]}}) {
             customer { rowId } } }""",
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"


async def test_sync_takes_no_other_member(gql):
    error = await refused(
        gql,
        """mutation { updateCustomer(rowId: 2, set: {orders: {sync: [{number: "Z-2"}], create: [{number: "Z-3"}]}}) {
             customer { rowId } } }""",
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"


# --- many-to-many (junction rows) --------------------------------------------------------------------------------


async def test_many_to_many_create_connect_and_connect_or_create(gql, database_url):
    data = await gql.data(
        """mutation { createOrder(input: {number: "M2M-1", customerId: 2, tags: {
             connect: [{label: "gift"}],
             create: [{label: "m2m-new"}],
             connectOrCreate: [{where: {label: "rush"}, create: {label: "rush"}},
                               {where: {label: "m2m-other"}, create: {label: "m2m-other"}}]}}) {
             order { tags(orderBy: LABEL_ASC) { label } } } }"""
    )
    assert [t["label"] for t in data["createOrder"]["order"]["tags"]] == ["gift", "m2m-new", "m2m-other", "rush"]
    assert fetch(database_url, "select count(*) from app.tags where label = 'rush'") == [(1,)]


async def test_many_to_many_connecting_a_related_row_keeps_its_junction_row(gql, database_url):
    before = fetch(database_url, "select xmin::text from app.order_tags where order_id = 1 and tag_id = 1")
    data = await gql.data(
        'mutation { updateOrder(rowId: 1, set: {tags: {connect: [{label: "gift"}]}}) { order { tags { label } } } }'
    )
    assert data == {"updateOrder": {"order": {"tags": [{"label": "gift"}]}}}
    assert fetch(database_url, "select xmin::text from app.order_tags where order_id = 1 and tag_id = 1") == before


async def test_many_to_many_disconnect_and_set(gql, database_url):
    order = (
        await gql.data(
            """mutation { createOrder(input: {number: "M2M-2", customerId: 2,
                 tags: {create: [{label: "m2m-a"}, {label: "m2m-b"}, {label: "m2m-c"}]}}) { order { rowId } } }"""
        )
    )["createOrder"]["order"]["rowId"]
    data = await gql.data(
        """mutation($id: Int!) { updateOrder(rowId: $id, set: {tags: {disconnect: [{label: "m2m-a"}, {label: "rush"}]}}) {
             order { tags(orderBy: LABEL_ASC) { label } } } }""",
        {"id": order},
    )
    assert [t["label"] for t in data["updateOrder"]["order"]["tags"]] == ["m2m-b", "m2m-c"]
    data = await gql.data(
        """mutation($id: Int!) { updateOrder(rowId: $id, set: {tags: {set: [{label: "m2m-c"}, {label: "gift"}],
             create: [{label: "m2m-d"}]}}) { order { tags(orderBy: LABEL_ASC) { label } } } }""",
        {"id": order},
    )
    assert [t["label"] for t in data["updateOrder"]["order"]["tags"]] == ["gift", "m2m-c", "m2m-d"]
    # Disconnecting deletes junction rows only: the tags stay.
    assert fetch(database_url, "select count(*) from app.tags where label in ('m2m-a', 'm2m-b')") == [(2,)]


# --- rules of nested updates -------------------------------------------------------------------------------------


async def test_an_update_with_nested_writes_needs_an_existing_row(gql):
    error = await refused(
        gql,
        'mutation { updateCustomer(rowId: 999, set: {orders: {create: [{number: "Q-1"}]}}) { customer { rowId } } }',
    )
    assert error["extensions"]["code"] == "NOT_FOUND"


async def test_nested_writes_three_levels_deep(gql):
    data = await gql.data(
        """mutation { createCustomer(input: {email: "deep@example.com", name: "Deep", orders: {create: [
             {number: "D-1", tags: {create: [{label: "deep-1"}], connect: [{label: "gift"}]}},
             {number: "D-2"}]}}) {
             customer { orders(orderBy: NUMBER_ASC) { number tags(orderBy: LABEL_ASC) { label } } } } }"""
    )
    assert data["createCustomer"]["customer"]["orders"] == [
        {"number": "D-1", "tags": [{"label": "deep-1"}, {"label": "gift"}]},
        {"number": "D-2", "tags": []},
    ]


async def test_a_key_input_takes_one_whole_key(gql):
    error = await refused(
        gql,
        'mutation { createOrder(input: {number: "K-1", customer: {connect: {rowId: 1, email: "ann@example.com"}}}) { order { rowId } } }',
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "one whole key" in error["message"]
