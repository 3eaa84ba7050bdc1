"""The schema watcher actor (dev mode with `watch.enabled`): notice DDL and svc.yaml changes, have the reloader
rebuild, and re-export the schema files after each swap when `watch.export` (SPEC "Runtime modes", "Configuration").

DDL: when the connecting role may create an event trigger (a superuser), the watcher installs one in schema
`svc_watch` that notifies the reload channel on every DDL command, so the reloader hears of it at once; otherwise it
polls a fingerprint of the exposed schemas' catalog rows every two seconds. svc.yaml: its modification is polled on
the same beat; the settings that may change at run time take effect with the next snapshot, and a change to any
other setting is logged as a warning naming it.
"""

import logging
from collections.abc import Callable
from pathlib import Path

import trio
from psycopg import sql

from svc.config import ConfigError, LoadedConfig, apply_changes
from svc.db import Connection
from svc.export import export_files, write_exports
from svc.snapshot import Snapshot

from ._reloader import Reloader

log = logging.getLogger("svc.watch")

#: SPEC "Limits" -> other constants: the dev watcher polls the catalog every 2 s.
POLL_INTERVAL = 2.0
WATCH_SCHEMA = "svc_watch"

_FINGERPRINT = """\
with exposed as (select oid from pg_namespace where nspname = any(%(schemas)s))
select md5(coalesce(string_agg(item, ',' order by item), '')) from (
  select 'n' || n.oid || ':' || n.xmin from pg_namespace n where n.oid in (select oid from exposed)
  union all select 'c' || c.oid || ':' || c.xmin from pg_class c where c.relnamespace in (select oid from exposed)
  union all select 'a' || a.attrelid || '.' || a.attnum || ':' || a.xmin
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relnamespace in (select oid from exposed) and a.attnum > 0
  union all select 'k' || k.oid || ':' || k.xmin from pg_constraint k where k.connamespace in (select oid from exposed)
  union all select 'i' || i.indexrelid || ':' || i.xmin
    from pg_index i join pg_class c on c.oid = i.indrelid where c.relnamespace in (select oid from exposed)
  union all select 'p' || p.oid || ':' || p.xmin from pg_proc p where p.pronamespace in (select oid from exposed)
  union all select 't' || t.oid || ':' || t.xmin from pg_type t where t.typnamespace in (select oid from exposed)
  union all select 'e' || e.oid || ':' || e.xmin from pg_enum e join pg_type t on t.oid = e.enumtypid
    where t.typnamespace in (select oid from exposed)
  union all select 'r' || r.oid || ':' || r.xmin from pg_policy r join pg_class c on c.oid = r.polrelid
    where c.relnamespace in (select oid from exposed)
  union all select 'd' || d.objoid || '.' || d.classoid || '.' || d.objsubid || ':' || d.xmin from pg_description d
  union all select 'x' || x.oid || ':' || x.xmin from pg_extension x
) items(item)"""


async def export_snapshot(snapshot: Snapshot) -> None:
    """After a swap (`watch.export`): re-write the export files whose text changed."""
    files = export_files(snapshot.config, snapshot.graphql, await snapshot.whole.openapi())
    written = await trio.to_thread.run_sync(write_exports, files)
    for path in written:
        log.info("exported %s", path)


_INSTALLED = """\
select
  exists(select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = %(schema)s and p.proname = 'notify_ddl' and p.prosrc = %(body)s),
  exists(select from pg_event_trigger where evtname = 'svc_watch_ddl')"""


class SchemaWatcher:
    def __init__(
        self,
        *,
        conninfo: str,
        reloader: Reloader,
        loaded: LoadedConfig,
        read_config: Callable[[], LoadedConfig],
        connect_timeout: float = 5.0,
        interval: float = POLL_INTERVAL,
    ) -> None:
        self._conninfo = conninfo
        self._reloader = reloader
        self._config_path = loaded.path
        self._read_config = read_config
        self._connect_timeout = connect_timeout
        self._interval = interval

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Ready at once: an unreachable database must not hold up the service's start (the actor retries)."""
        async with trio.open_nursery() as nursery:
            task_status.started()
            nursery.start_soon(self._watch_catalog)
            if self._config_path is not None:
                nursery.start_soon(self._watch_config_file, self._config_path)

    # --- DDL -----------------------------------------------------------------------------------------------------

    async def _watch_catalog(self) -> None:
        """Install the event trigger, or poll; a lost connection ends this with an error (the actor restarts)."""
        async with await Connection.connect(self._conninfo, autocommit=True, timeout=self._connect_timeout) as conn:
            channel = self._reloader.config.reload.channel
            if self._reloader.config.reload.enabled and await _install_event_trigger(conn, channel):
                log.info("watching DDL with the event trigger svc_watch_ddl (notifies %s)", channel)
                await trio.sleep_forever()
            log.info("watching DDL by polling the catalog every %gs", self._interval)
            previous = await self._fingerprint(conn)
            while True:
                await trio.sleep(self._interval)
                current = await self._fingerprint(conn)
                if current != previous:
                    previous = current
                    self._reloader.request("the catalog changed")

    async def _fingerprint(self, conn: Connection) -> str:
        schemas = list(self._reloader.config.database.schemas)
        cursor = await conn.execute(_FINGERPRINT, {"schemas": schemas}, prepare=False)
        row = await cursor.fetchone()
        assert row is not None
        return str(row[0])

    # --- svc.yaml ------------------------------------------------------------------------------------------------

    async def _watch_config_file(self, path: Path) -> None:
        seen = await _stamp(path)
        while True:
            await trio.sleep(self._interval)
            stamp = await _stamp(path)
            if stamp == seen:
                continue
            seen = stamp
            try:
                loaded = await trio.to_thread.run_sync(self._read_config)
            except ConfigError as exc:
                log.error("%s changed but cannot be used (still running with the previous settings): %s", path, exc)
                continue
            applied, restart = apply_changes(self._reloader.config, loaded.config)
            for key in restart:
                log.warning("%s changed %s, which takes effect only after a restart", path.name, key)
            if applied != self._reloader.config:
                self._reloader.config = applied
                self._reloader.request(f"{path.name} changed")


async def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = await trio.Path(path).stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


async def _install_event_trigger(conn: Connection, channel: str) -> bool:
    """Install (or refresh) the DDL event trigger when the role may: event triggers need a superuser.

    When the trigger and its function are already as wanted nothing is run: installing is DDL, which would fire the
    installed trigger and reload every watching service for nothing.
    """
    cursor = await conn.execute("select rolsuper from pg_roles where rolname = current_user", prepare=False)
    row = await cursor.fetchone()
    if not row or not row[0]:
        return False
    body = sql.SQL("begin perform pg_notify({}, 'ddl'); end").format(sql.Literal(channel)).as_string(conn)
    cursor = await conn.execute(_INSTALLED, {"schema": WATCH_SCHEMA, "body": body}, prepare=False)
    function_current, trigger_exists = await cursor.fetchone() or (False, False)
    schema = sql.Identifier(WATCH_SCHEMA)
    async with conn.transaction():
        if not function_current:
            await conn.execute(sql.SQL("create schema if not exists {}").format(schema), prepare=False)
            create = "create or replace function {}.notify_ddl() returns event_trigger language plpgsql as {}"
            await conn.execute(sql.SQL(create).format(schema, sql.Literal(body)), prepare=False)
        if not trigger_exists:
            create = "create event trigger svc_watch_ddl on ddl_command_end execute function {}.notify_ddl()"
            await conn.execute(sql.SQL(create).format(schema), prepare=False)
    return True
