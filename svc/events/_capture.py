"""The capture DDL: the `svc_events` schema (outbox, attempts, schedules, stopped targets, the SQL functions) and one
trigger per table and operation with `entities.<table>.events` (SPEC "Events" -> "Change events and schedules").

Payloads are written in the change's own transaction, shaped like REST rows (the REST field names, BigInt and
Decimal as strings, enums as their GraphQL values) by the same value mapping REST reads use; omitted columns are not
in the model, so never in a payload. Inserts and deletes are captured by statement-level triggers over transition
tables (a 1,000-row insert is one trigger run, one INSERT ... SELECT); updates by a row-level trigger that fires only
when the row changed (compared as text, since json, point and other types have no equality) and writes an event
only when its payload did (a change to omitted columns only is none). Each capture notifies `events.channel`,
delivered when the transaction commits.

Everything here is idempotent (`if not exists`, `create or replace`), so installing twice changes nothing; the
statements carry a digest of themselves into `svc_events.installed`, which tells an install or a check whether the
database holds exactly this version.
"""

import hashlib
from collections.abc import Sequence

import attrs
from psycopg import sql

from svc.config import Config
from svc.model import Entity, Model
from svc.plan import ColumnOutput, value_map
from svc.sql import row_object

SCHEMA = "svc_events"
#: The prefix of the triggers the service owns on captured tables (`svc_events_insert`, ...).
TRIGGER_PREFIX = "svc_events_"
#: Identifiers are cut at 63 bytes by PostgreSQL: longer function names end in a digest instead.
_NAME_LIMIT = 63

_TABLES = """
create schema if not exists svc_events;
comment on schema svc_events is 'Change events and schedules of svc: managed by the service (README "Events")';

create table if not exists svc_events.outbox (
    id uuid primary key default gen_random_uuid(),
    created_at timestamptz not null default clock_timestamp(),
    trigger text not null,
    target text not null,
    "table" text,
    op text check (op in ('insert', 'update', 'delete')),
    old json,
    new json,
    schedule text,
    slot timestamptz,
    payload json,
    state text not null default 'pending' check (state in ('pending', 'delivered', 'dead')),
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default clock_timestamp(),
    lease_holder text,
    lease_expires_at timestamptz,
    last_outcome text check (last_outcome in ('delivered', 'retry', 'dead', 'unknown')),
    last_status integer,
    last_error text,
    finished_at timestamptz,
    unique (schedule, slot)
);
create index if not exists outbox_due on svc_events.outbox (next_attempt_at) where state = 'pending';
create index if not exists outbox_dead on svc_events.outbox (finished_at) where state = 'dead';

create table if not exists svc_events.attempts (
    id bigint generated always as identity primary key,
    event_id uuid not null references svc_events.outbox (id) on delete cascade,
    attempt integer not null,
    instance text not null,
    started_at timestamptz not null,
    finished_at timestamptz not null,
    outcome text not null check (outcome in ('delivered', 'retry', 'dead', 'unknown')),
    status integer,
    error text
);
create index if not exists attempts_of_event on svc_events.attempts (event_id);

create table if not exists svc_events.schedules (
    name text primary key,
    last_slot timestamptz not null
);

create table if not exists svc_events.stopped_targets (
    target text primary key,
    url text not null,
    stopped_at timestamptz not null default clock_timestamp()
);

create table if not exists svc_events.installed (
    digest text not null
);

create or replace function svc_events.redrive(event_ids uuid[] default null) returns integer
language sql security definer set search_path = pg_catalog, pg_temp as $redrive$
    with redriven as (
        update svc_events.outbox
           set state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), finished_at = null,
               lease_holder = null, lease_expires_at = null
         where state = 'dead' and (event_ids is null or id = any (event_ids))
        returning 1
    ), woken as (select pg_notify({channel}, '') where exists (select from redriven))
    select count(*)::integer from redriven left join woken on true
$redrive$;
comment on function svc_events.redrive(uuid[]) is
    'Deliver dead events again (all of them when no ids are given), from a first attempt; returns how many';

create or replace function svc_events.resume_target(target_name text) returns boolean
language sql security definer set search_path = pg_catalog, pg_temp as $resume$
    with resumed as (delete from svc_events.stopped_targets where target = target_name returning 1)
    select exists (select from resumed)
$resume$;
comment on function svc_events.resume_target(text) is
    'Deliver to a target again after it answered 410 Gone (its dead events stay dead: see redrive)';
"""

_SCHEDULE = """
create or replace function svc_events.schedule(target text, at timestamptz, payload json default null)
returns uuid language plpgsql security definer set search_path = pg_catalog, pg_temp as $schedule$
declare
    event_id uuid;
begin
    if target is null or not (target = any ({targets}::text[])) then
        raise exception 'svc_events.schedule: no webhook target %', coalesce(quote_literal(target), 'null')
            using errcode = '22023', hint = 'events.targets names them: ' || array_to_string({targets}::text[], ', ');
    end if;
    insert into svc_events.outbox (trigger, target, slot, payload, next_attempt_at)
    values ('schedule', target, coalesce(at, clock_timestamp()), payload, coalesce(at, clock_timestamp()))
    returning id into event_id;
    perform pg_notify({channel}, '');
    return event_id;
end
$schedule$;
comment on function svc_events.schedule(text, timestamptz, json) is
    'Enqueue a one-off event for a webhook target, delivered at or after `at`, in the caller''s transaction';
-- They run as their owner: only roles granted them may call them (the schema has no usage for public either).
revoke all on function svc_events.schedule(text, timestamptz, json), svc_events.redrive(uuid[]),
    svc_events.resume_target(text) from public;
"""


@attrs.frozen
class Capture:
    """One captured table and operation: its trigger and the function it runs."""

    entity: Entity
    op: str

    @property
    def trigger(self) -> str:
        return TRIGGER_PREFIX + self.op

    @property
    def function(self) -> str:
        name = f"{self.entity.schema}.{self.entity.table}.{self.op}"
        if len(name.encode()) <= _NAME_LIMIT:
            return name
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        return f"{name.encode()[: _NAME_LIMIT - 13].decode(errors='ignore')}~{digest}"


@attrs.frozen
class CaptureDdl:
    """The statements that install event capture for a model and configuration, in order, and their digest."""

    statements: tuple[sql.SQL | sql.Composed, ...]
    captures: tuple[Capture, ...]
    digest: str

    def script(self) -> str:
        """The whole DDL as one script for a DBA (`svc events sql`), in one transaction."""
        body = ";\n\n".join(s.as_string(None).strip().rstrip(";") for s in self.statements)
        return f"-- svc event capture ({self.digest}); apply with: psql -v ON_ERROR_STOP=1 -1 -f <file>\n{body};\n"


def captures(model: Model) -> tuple[Capture, ...]:
    return tuple(Capture(entity, op) for entity in model.entities if entity.events for op in entity.events.operations)


def capture_ddl(model: Model, config: Config) -> CaptureDdl:
    """Every statement of the install: the schema's tables and functions, the triggers wanted, and dropping the
    triggers and functions of tables or operations no longer captured."""
    channel = config.events.channel
    targets = sorted(config.events.targets)
    wanted = captures(model)
    statements: list[sql.SQL | sql.Composed] = [
        sql.SQL(_TABLES).format(channel=sql.Literal(channel)),
        sql.SQL(_SCHEDULE).format(channel=sql.Literal(channel), targets=sql.Literal(targets)),
    ]
    for capture in wanted:
        statements += _capture(model, capture, channel)
    statements.append(_drop_unwanted(wanted))
    text = "\n".join(s.as_string(None) for s in statements)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    statements += [
        sql.SQL("delete from svc_events.installed"),
        sql.SQL("insert into svc_events.installed (digest) values ({})").format(sql.Literal(digest)),
    ]
    return CaptureDdl(tuple(statements), wanted, digest)


def _capture(model: Model, capture: Capture, channel: str) -> list[sql.Composed]:
    entity, op = capture.entity, capture.op
    assert entity.events is not None
    outputs = [ColumnOutput(f.rest_name, f.column, value_map(f.type, model)) for f in entity.fields]
    table = sql.Identifier(entity.schema, entity.table)
    function = sql.Identifier(SCHEMA, capture.function)
    fixed = [sql.Literal(f"{entity.events.name}.{op}"), sql.Literal(entity.events.target),
             sql.Literal(entity.events.name), sql.Literal(op)]  # fmt: skip
    notify = sql.SQL("perform pg_notify({}, '');").format(sql.Literal(channel))
    if op == "update":
        # A change only in columns the payload leaves out (omitted ones) is no change to the receiver. Rows are
        # compared as text: json, point and other types have no equality operator.
        body = sql.SQL(
            "declare\n"
            "    old_row json := {old};\n"
            "    new_row json := {new};\n"
            "begin\n"
            "    if old_row::text = new_row::text then\n"
            "        return null;\n"
            "    end if;\n"
            '    insert into svc_events.outbox (trigger, target, "table", op, old, new)\n'
            "    values ({fixed}, old_row, new_row);\n"
            "    {notify}\n"
            "    return null;\n"
            "end"
        ).format(
            fixed=sql.SQL(", ").join(fixed),
            old=row_object(outputs, sql.Identifier("old")),
            new=row_object(outputs, sql.Identifier("new")),
            notify=notify,
        )
        fires = sql.SQL("after update on {table} for each row when (old::text is distinct from new::text)")
    else:
        rows, column = ("new_rows", "new") if op == "insert" else ("old_rows", "old")
        body = sql.SQL(
            "begin\n"
            '    insert into svc_events.outbox (trigger, target, "table", op, {column})\n'
            "    select {fixed}, {row} from {rows} as r;\n"
            "    if found then\n"
            "        {notify}\n"
            "    end if;\n"
            "    return null;\n"
            "end"
        ).format(
            column=sql.Identifier(column),
            fixed=sql.SQL(", ").join(fixed),
            row=row_object(outputs, sql.Identifier("r")),
            rows=sql.Identifier(rows),
            notify=notify,
        )
        fires = (
            sql.SQL("after insert on {table} referencing new table as new_rows for each statement")
            if op == "insert"
            else sql.SQL("after delete on {table} referencing old table as old_rows for each statement")
        )
    return [
        sql.SQL(
            "create or replace function {function}() returns trigger language plpgsql security definer\n"
            "set search_path = pg_catalog, pg_temp as {body}"
        ).format(function=function, body=sql.Literal(body.as_string(None))),
        sql.SQL("create or replace trigger {trigger} {fires} execute function {function}()").format(
            trigger=sql.Identifier(capture.trigger), fires=fires.format(table=table), function=function
        ),
    ]


def _drop_unwanted(wanted: Sequence[Capture]) -> sql.Composed:
    """A block dropping the service's triggers and capture functions that no configured capture names."""
    keep_triggers = [f"{c.entity.schema}.{c.entity.table}.{c.trigger}" for c in wanted]
    keep_functions = [c.function for c in wanted]
    return sql.SQL(
        "do $drop$\n"
        "declare\n"
        "    found record;\n"
        "begin\n"
        "    for found in\n"
        "        select t.tgname, c.relname, n.nspname from pg_trigger t\n"
        "        join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace\n"
        "        join pg_proc p on p.oid = t.tgfoid\n"
        "        where t.tgname like {prefix} and p.pronamespace = {schema}::regnamespace\n"
        "          and not (n.nspname || '.' || c.relname || '.' || t.tgname = any ({keep_triggers}::text[]))\n"
        "    loop\n"
        "        execute format('drop trigger %I on %I.%I', found.tgname, found.nspname, found.relname);\n"
        "    end loop;\n"
        "    for found in\n"
        "        select p.proname from pg_proc p\n"
        "        where p.pronamespace = {schema}::regnamespace and p.prorettype = 'trigger'::regtype\n"
        "          and not (p.proname = any ({keep_functions}::text[]))\n"
        "    loop\n"
        "        execute format('drop function svc_events.%I()', found.proname);\n"
        "    end loop;\n"
        "end\n"
        "$drop$"
    ).format(
        prefix=sql.Literal(TRIGGER_PREFIX.replace("_", "\\_") + "%"),
        schema=sql.Literal(SCHEMA),
        keep_triggers=sql.Literal(keep_triggers),
        keep_functions=sql.Literal(keep_functions),
    )
