"""Capture (SPEC "Events" -> "Change events and schedules"): service-managed triggers write one outbox row per changed
row, in the change's own transaction, shaped like REST rows; inserts and deletes through statement-level triggers
over transition tables, updates only on a real change; the install is idempotent and `manual` only checks."""

import psycopg
import pytest
import trio

from svc.server import StartupError, serve
from tests.events.support import ENVIRON, outbox, served, settings, sql
from tests.support.receiver import running_receiver
from tests.support.service import configure, running_service

DATABASE_FIXTURES = ["events.sql"]


def order(key: int, customer: str, total: str, status: str = "NEW") -> dict:
    """An order as REST answers it: BigInt and Decimal as strings, the enum as its GraphQL value, no secret_note."""
    row = {"id": str(key), "customer": customer, "total": total, "status": status, "placedAt": "2026-01-02"}
    return {**row, "details": None, "spot": None}


async def test_writes_through_graphql_rest_and_sql_are_captured_as_rest_rows(tmp_path, database_url):
    async with served(tmp_path, database_url) as (receiver, service):
        created = await service.client.post(
            "/graphql",
            json={"query": 'mutation { createOrder(input: {customer: "Ada", total: "12.5", status: SHIPPED_OUT}) '
                           "{ order { rowId } } }"},
        )  # fmt: skip
        assert created.json()["data"]["createOrder"]["order"]["rowId"] == "1"
        rest = await service.client.post("/rest/orders", json={"customer": "Grace", "total": "7"})
        assert rest.status_code == 201
        sql(database_url, "insert into app_public.orders (customer, secret_note) values ('Edsger', 'hidden')")
        assert (await service.client.patch("/rest/orders/2", json={"total": "8.25"})).status_code == 200
        assert (await service.client.delete("/rest/orders/3")).status_code in (200, 204)

        rows = outbox(database_url)
        assert [(r["trigger"], r["table"], r["op"], r["target"]) for r in rows] == [
            ("orders.insert", "orders", "insert", "default"),
            ("orders.insert", "orders", "insert", "default"),
            ("orders.insert", "orders", "insert", "default"),
            ("orders.update", "orders", "update", "default"),
            ("orders.delete", "orders", "delete", "default"),
        ]
        assert [(r["old"], r["new"]) for r in rows] == [
            (None, order(1, "Ada", "12.50", "SHIPPED_OUT")),
            (None, order(2, "Grace", "7.00")),
            (None, order(3, "Edsger", "0.00")),
            (order(2, "Grace", "7.00"), order(2, "Grace", "8.25")),
            (order(3, "Edsger", "0.00"), None),
        ]
        # Keys in the order REST writes them.
        assert list(rows[0]["new"]) == ["id", "customer", "total", "status", "placedAt", "details", "spot"]
        await receiver.wait_for(lambda received: len(received) == 5)
        delivered = {r.id: r.verified(ENVIRON["HOOK_SECRET"]) for r in receiver.received}  # in any order
        assert delivered == {
            str(r["id"]): {"id": str(r["id"]), "createdAt": delivered[str(r["id"])]["createdAt"], "table": "orders",
                           "op": r["op"], "old": r["old"], "new": r["new"]}
            for r in rows
        }  # fmt: skip


async def test_no_change_and_rolled_back_writes_leave_no_event(tmp_path, database_url):
    async with served(tmp_path, database_url) as (receiver, _):
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        sql(database_url, "update app_public.orders set customer = customer")  # nothing changes
        sql(database_url, "update app_public.orders set secret_note = 'only an omitted column changes'")
        sql(database_url, "update app_public.notes set body = 'x'")  # no events on notes
        sql(database_url, "insert into app_public.notes (body) values ('not captured')")
        with psycopg.connect(database_url) as conn:
            conn.execute("insert into app_public.orders (customer) values ('Rolled back')")
            conn.execute("update app_public.orders set total = 5")
            conn.rollback()
        # tags capture inserts only
        sql(database_url, "insert into app_public.tags values (1, 'a')")
        sql(database_url, "delete from app_public.tags")
        # json and point columns have no equality operator: their changes are compared as text
        sql(database_url, """update app_public.orders set details = '{"gift": true}', spot = '(1,2)'""")
        sql(database_url, """update app_public.orders set details = '{"gift": true}'""")  # the same text again
        assert [r["trigger"] for r in outbox(database_url)] == ["orders.insert", "tags.insert", "orders.update"]
        assert outbox(database_url)[1]["new"] == {"orderId": "1", "tag": "a"}
        changed = outbox(database_url)[2]
        assert (changed["old"]["details"], changed["new"]["details"], changed["new"]["spot"]) == (
            None, {"gift": True}, "(1,2)",
        )  # fmt: skip


async def test_a_thousand_row_insert_is_one_trigger_run(tmp_path, database_url):
    async with served(tmp_path, database_url) as (receiver, _):
        with psycopg.connect(database_url) as conn:
            conn.execute("set track_functions = 'pl'")
            conn.execute("insert into app_public.orders (customer) select 'c' || n from generate_series(1, 1000) n")
            (runs,) = conn.execute(
                "select pg_stat_get_xact_function_calls('svc_events.\"app_public.orders.insert\"'::regproc)"
            ).fetchone()
            conn.commit()
        assert runs == 1
        rows = outbox(database_url)
        assert len(rows) == 1000
        assert sorted(int(r["new"]["id"]) for r in rows) == list(range(1, 1001))
        await receiver.wait_for(lambda received: len({r.id for r in received}) == 1000, timeout=60)


async def test_installing_twice_changes_nothing_and_dropped_events_lose_their_triggers(tmp_path, database_url):
    async with running_receiver() as receiver:
        async with running_service(tmp_path / "a", database_url, settings(receiver.url), environ=ENVIRON):
            pass
        triggers = (
            "select tgrelid::regclass::text, tgname from pg_trigger where tgname like 'svc_events_%' order by 1, 2"
        )
        assert sql(database_url, triggers) == [
            ("app_public.orders", "svc_events_delete"),
            ("app_public.orders", "svc_events_insert"),
            ("app_public.orders", "svc_events_update"),
            ("app_public.tags", "svc_events_insert"),
        ]
        functions = "select oid, xmin from pg_proc where pronamespace = 'svc_events'::regnamespace order by 1"
        before = sql(database_url, functions)
        async with running_service(tmp_path / "b", database_url, settings(receiver.url), environ=ENVIRON):
            pass
        assert sql(database_url, functions) == before  # nothing replaced
        fewer = settings(receiver.url)
        fewer["entities"]["orders"]["events"]["operations"] = ["update"]
        del fewer["entities"]["tags"]
        async with running_service(tmp_path / "c", database_url, fewer, environ=ENVIRON):
            pass
        assert sql(database_url, triggers) == [("app_public.orders", "svc_events_update")]
        assert sql(database_url, "select proname from pg_proc where pronamespace = 'svc_events'::regnamespace "
                                 "and prorettype = 'trigger'::regtype") == [("app_public.orders.update",)]  # fmt: skip


async def test_a_reload_puts_back_a_trigger_dropped_by_hand(tmp_path, database_url):
    present = (
        "select count(*) from pg_trigger where tgname = 'svc_events_insert' and tgrelid = 'app_public.orders'::regclass"
    )
    async with served(tmp_path, database_url) as (receiver, service):
        sql(database_url, "drop trigger svc_events_insert on app_public.orders")
        sql(database_url, "notify svc_reload")
        with trio.fail_after(10):
            while (await service.client.get("/health")).json()["schema"]["generation"] < 2:
                await trio.sleep(0.05)
        assert sql(database_url, present) == [(1,)]
        sql(database_url, "insert into app_public.orders (customer) values ('Ada')")
        await receiver.wait_for(lambda received: len(received) == 1)


async def test_a_view_or_an_unknown_table_cannot_have_events(tmp_path, database_url):
    bad = settings("http://127.0.0.1:9/hook")
    bad["entities"] = {"big_orders": {"events": {}}, "nowhere": {"events": {}}}
    loaded = configure(tmp_path, bad, database_url=database_url, environ=ENVIRON)
    with pytest.raises(StartupError) as info:
        await serve(loaded)
    assert "entities.big_orders.events: app_public.big_orders is not a table: only tables have events" in str(
        info.value
    )
    assert "entities.nowhere: no table, view or foreign table 'nowhere'" in str(info.value)
