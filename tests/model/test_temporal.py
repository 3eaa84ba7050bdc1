"""Temporal keys read from a real PostgreSQL 18 catalog (tests/fixtures/temporal.sql): a key `WITHOUT OVERLAPS` and a
period foreign key are recognized (pg_constraint.conperiod), and the model gives a table its `TemporalKey` (key columns,
period, the period's element type as the instant's, the `history` field) and makes period foreign keys relations
matched on their other columns, named after them (SPEC "List query parameters": `asOf`)."""

import secrets

from svc.catalog import ForeignKey, Key
from svc.model import Cardinality, EntityRef, TemporalKey, prune_model
from tests.support.model import read_catalog_and_model
from tests.support.postgres import execute

SETTINGS = {"database": {"schemas": ["public"]}}


def test_keys_without_overlaps_and_period_foreign_keys_are_recognized(tmp_path, pg18_database_url):
    catalog, _ = read_catalog_and_model(pg18_database_url, tmp_path, SETTINGS)
    rooms, bookings = catalog.relation("public", "rooms"), catalog.relation("public", "bookings")
    assert rooms is not None and bookings is not None
    assert rooms.primary_key == Key("rooms_pkey", ("id", "valid_at"), is_primary=True, without_overlaps=True)
    assert bookings.primary_key == Key("bookings_pkey", ("id",), is_primary=True)
    assert bookings.foreign_keys == (
        ForeignKey(
            "bookings_room_id_valid_at_fkey",
            ("room_id", "valid_at"),
            "public",
            "rooms",
            ("id", "valid_at"),
            period=True,
        ),
    )


def test_the_model_gives_temporal_keys_and_relations_across_period_foreign_keys(tmp_path, pg18_database_url):
    _, model = read_catalog_and_model(pg18_database_url, tmp_path, SETTINGS)
    room, booking, staff = (model.entity(EntityRef("public", name)) for name in ("rooms", "bookings", "staff"))
    assert room.temporal == TemporalKey(("id",), "valid_at", "timestamp with time zone")
    assert staff.temporal == TemporalKey(("id",), "valid_at", "date")
    assert booking.temporal is None
    assert (room.as_of_lookup, staff.as_of_lookup, booking.as_of_lookup) == ("roomAsOf", "staffAsOf", None)
    [to_room] = booking.relations
    assert (to_room.name, to_room.kind, to_room.pairs, to_room.period) == (
        "room",
        Cardinality.TO_ONE,
        (("room_id", "id"),),
        ("valid_at", "valid_at"),
    )
    reverse = {relation.name: relation for relation in room.relations}
    # A room has many duties over time: across a period foreign key, the child's key without its period decides.
    assert {name: (r.kind, r.pairs, r.period) for name, r in reverse.items()} == {
        "bookings": (Cardinality.TO_MANY, (("id", "room_id"),), ("valid_at", "valid_at")),
        "duties": (Cardinality.TO_MANY, (("id", "room_id"),), ("valid_at", "valid_at")),
    }


def test_a_history_column_keeps_its_name_and_the_history_field_is_left_out(tmp_path, pg18_database_url):
    execute(pg18_database_url, "alter table staff add column history text")
    try:
        _, model = read_catalog_and_model(pg18_database_url, tmp_path, SETTINGS)
    finally:
        execute(pg18_database_url, "alter table staff drop column history")
    staff = model.entity(EntityRef("public", "staff"))
    assert staff.temporal is not None and staff.temporal.history is None
    assert staff.field("history") is not None


def test_a_role_that_may_not_read_the_period_reads_no_temporal_key(tmp_path, pg18_database_url):
    role = f"svc_temporal_clerk_{secrets.token_hex(3)}"
    execute(pg18_database_url, f"create role {role}")
    try:
        execute(pg18_database_url, f"grant select (id, name, rate) on rooms to {role}")
        execute(pg18_database_url, f"grant select on bookings to {role}")
        catalog, model = read_catalog_and_model(pg18_database_url, tmp_path, SETTINGS, roles=[role])
        clerk = prune_model(model, catalog, role)
    finally:
        execute(pg18_database_url, f"drop owned by {role}; drop role {role}")
    room, booking = (clerk.entity(EntityRef("public", name)) for name in ("rooms", "bookings"))
    assert (room.temporal, room.as_of_lookup) == (None, None)
    assert booking.relations == ()  # its period foreign key compares rooms' period, which the role cannot read
