"""Putting the capture DDL in place (`events.install: auto`) or checking a DBA did (`manual`).

An install runs in one transaction under an advisory lock, so instances starting together install once and the
others find it done; when `svc_events.installed` already holds this DDL's digest and every trigger it makes is
there, it changes nothing (no trigger is replaced, no table locked). A check says what is missing instead of
changing anything.
"""

import logging

import attrs
import psycopg
from psycopg import sql

from svc.db import Executor, Transaction
from svc.errors import Code, SvcError, first_line
from svc.snapshot import Snapshot, SnapshotError

from ._capture import SCHEMA, CaptureDdl, capture_ddl

log = logging.getLogger("svc.events")

#: The advisory lock key of installs: fixed, so every instance of any version takes the same lock.
_INSTALL_LOCK = 0x5E7E_4E75


async def prepare_capture(executor: Executor, snapshot: Snapshot) -> Snapshot:
    """Install the capture a new snapshot asks for (`auto`), or check it is there (`manual`: what is missing becomes
    a warning of the snapshot). Nothing to do without webhook targets. An install the database refuses is a
    failed startup check; an unreachable database is left to the reloader, as for the snapshot itself."""
    config = snapshot.config
    if not config.events.targets:
        return snapshot
    ddl = capture_ddl(snapshot.model, config)
    if config.events.install == "manual":
        missing = await check_capture(executor, ddl)
        if not missing:
            return snapshot
        warning = f"events.install is manual and the database lacks {'; '.join(missing)}: apply `svc events sql`"
        return attrs.evolve(snapshot, warnings=(*snapshot.warnings, warning))
    try:
        if await install_capture(executor, ddl):
            log.info("installed event capture %s on %d table operations", ddl.digest, len(ddl.captures))
    except (psycopg.Error, SvcError) as exc:
        if isinstance(exc, SvcError) and exc.code is Code.DATABASE_UNAVAILABLE:
            raise
        raise SnapshotError([f"events.install: installing the event capture failed: {first_line(exc)}"]) from exc
    return snapshot


async def install_capture(executor: Executor, ddl: CaptureDdl) -> bool:
    """Install the capture unless exactly this version is in place; True when something was (re)installed."""

    async def install(tx: Transaction) -> bool:
        await tx.execute(sql.SQL("select pg_advisory_xact_lock({})").format(sql.Literal(_INSTALL_LOCK)))
        if not await _missing(tx, ddl):
            return False
        for statement in ddl.statements:
            await tx.execute(statement)
        return True

    return await executor.run(install)


async def check_capture(executor: Executor, ddl: CaptureDdl) -> list[str]:
    """What the database lacks of the capture `ddl` installs; empty when exactly this version is installed."""
    return await executor.run(lambda tx: _missing(tx, ddl), readonly=True)


async def _missing(tx: Transaction, ddl: CaptureDdl) -> list[str]:
    """The schema when it is not there, the triggers that are not (dropped by hand, say), or the version when the
    installed one differs."""
    digest = await _installed_digest(tx)
    if digest is None:
        return [f"the {SCHEMA} schema is not installed"]
    cursor = await tx.execute(
        "select n.nspname || '.' || c.relname || '.' || t.tgname from pg_trigger t"
        " join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace"
        " where t.tgname like 'svc\\_events\\_%'"
    )
    present = {row[0] for row in await cursor.fetchall()}
    missing = [
        f"trigger {c.trigger} on {c.entity.schema}.{c.entity.table}"
        for c in ddl.captures
        if f"{c.entity.schema}.{c.entity.table}.{c.trigger}" not in present
    ]
    if digest != ddl.digest:
        missing.append(f"this configuration's capture {ddl.digest} (installed: {digest})")
    return missing


async def _installed_digest(tx: Transaction) -> str | None:
    cursor = await tx.execute("select to_regclass('svc_events.installed') is not null")
    row = await cursor.fetchone()
    if row is None or not row[0]:
        return None
    cursor = await tx.execute("select digest from svc_events.installed")
    found = await cursor.fetchone()
    return None if found is None else found[0]
