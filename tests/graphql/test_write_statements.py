"""How many statements a mutation takes (SPEC "Mutations" 1-2; ARCHITECTURE.md "Writes"): each root field is its
write, then its payload read by key in a statement of its own (CTEs share one snapshot, so a read in the write's
statement would not see the write). A write tree, nested writes and mixed-shape bulk creates included, is ONE
statement unless a write must see an earlier write's effect on its own table (then the tree is cut there), and the
result is what writing row by row in the order given would give."""

import pytest

from tests.support.postgres import fetch
from tests.support.service import running_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}}


@pytest.fixture
async def service(tmp_path, database_url):
    async with running_service(tmp_path, database_url, SETTINGS) as service:
        yield service


async def sent(service, query: str, variables: dict | None = None) -> tuple[int, dict]:
    """The statements a mutation sent, and its answer's data."""
    before = (await service.client.get("/health")).json()["statements"]
    response = await service.client.post("/graphql", json={"query": query, "variables": variables or {}})
    body = response.json()
    assert "errors" not in body, body
    return (await service.client.get("/health")).json()["statements"] - before, body["data"]


async def test_a_create_with_nested_writes_is_one_write_statement_and_the_payload_read(service, database_url):
    count, data = await sent(
        service,
        """mutation { createOrder(input: {number: "S-1", customer: {connect: {email: "bob@example.com"}},
             tags: {connect: [{label: "rush"}], create: [{label: "sorted"}]}}) {
           order { number customer { email } tags(orderBy: LABEL_ASC) { label } } } }""",
    )
    assert count == 2
    assert data == {
        "createOrder": {
            "order": {
                "number": "S-1",
                "customer": {"email": "bob@example.com"},
                "tags": [{"label": "rush"}, {"label": "sorted"}],
            }
        }
    }


async def test_a_bulk_create_of_mixed_shapes_is_one_statement_with_rows_in_the_order_given(service, database_url):
    count, data = await sent(
        service,
        """mutation { createCustomers(inputs: [
             {email: "m1@example.com", name: "M1"},
             {email: "m2@example.com", name: "M2", nickname: "two"},
             {email: "m3@example.com", name: "M3"}]) { customers { email nickname tier } } }""",
    )
    assert count == 2
    assert data["createCustomers"]["customers"] == [
        {"email": "m1@example.com", "nickname": None, "tier": "basic"},
        {"email": "m2@example.com", "nickname": "two", "tier": "basic"},
        {"email": "m3@example.com", "nickname": None, "tier": "basic"},
    ]


async def test_each_root_field_is_its_write_and_its_payload_read(service):
    count, _ = await sent(
        service,
        """mutation { a: createTag(input: {label: "one"}) { tag { label } }
                      b: createTag(input: {label: "two"}) { tag { label } } }""",
    )
    assert count == 4


async def test_a_write_that_must_see_an_earlier_write_of_its_table_is_cut_into_a_second_statement(
    service, database_url
):
    """`connect` moves B-1 here, then `update` changes it: the update must see B-1 as this row's child, so it runs
    in a statement after the connect's (row by row, it would succeed; in one snapshot it would not find it)."""
    order = fetch(database_url, "select id from app.orders where number = 'B-1'")[0][0]
    count, data = await sent(
        service,
        """mutation($order: Int!) { updateCustomer(rowId: 1, set: {orders: {
             connect: [{rowId: $order}], update: [{where: {rowId: $order}, data: {note: "moved"}}]}}) {
           customer { orders(orderBy: NUMBER_ASC) { number note } } } }""",
        {"order": order},
    )
    assert count == 3
    assert {"number": "B-1", "note": "moved"} in data["updateCustomer"]["customer"]["orders"]
    assert fetch(database_url, "select customer_id, note from app.orders where number = 'B-1'") == [(1, "moved")]


async def test_a_sync_and_a_write_by_filter_are_one_statement_each(service, database_url):
    """(A payload that selects no rows, only `affectedCount`, reads nothing after the write.)"""
    count, _ = await sent(
        service,
        """mutation { updateCustomer(rowId: 2, set: {orders: {sync: [{number: "B-9"}]}}) {
           customer { orders { number } } } }""",
    )
    assert count == 2
    count, data = await sent(
        service, 'mutation { updateOrders(where: {number: {equalTo: "B-9"}}, set: {note: "synced"}) { affectedCount } }'
    )
    assert (count, data) == (1, {"updateOrders": {"affectedCount": 1}})
