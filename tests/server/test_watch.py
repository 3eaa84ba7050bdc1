"""The dev schema watcher (SPEC "Runtime modes", "Configuration"): in dev mode with `watch.enabled`, DDL is noticed
(an event trigger when the role may create one, else catalog polling every two seconds), the snapshot is rebuilt and
swapped within seconds without a restart, and the schema files are re-exported (`watch.export`); a changed svc.yaml
applies the settings that may change at run time and warns about the others by name."""

import logging
import secrets

import psycopg
import pytest
import trio
import yaml
from psycopg import sql
from psycopg.conninfo import make_conninfo

from tests.support.postgres import execute
from tests.support.service import LOOPBACK, merge, running_service, wait_until

#: The issue's bound: a new column is served within 3 s without a restart.
PICKED_UP_WITHIN = 3.0


async def generation(client) -> int:
    return (await client.get("/health")).json()["schema"]["generation"]


def exported(tmp_path) -> str:
    path = tmp_path / "schema.graphql"
    return path.read_text() if path.exists() else ""


async def test_an_added_column_is_served_within_seconds_with_the_event_trigger(tmp_path, database_url, caplog):
    caplog.set_level(logging.INFO, logger="svc")
    async with running_service(tmp_path, database_url, mode="dev") as service:
        await wait_until(lambda: _logged(caplog, "watching DDL with the event trigger"))
        assert "subtitle" not in exported(tmp_path)
        execute(database_url, "alter table app_public.posts add column subtitle text")
        try:
            started = trio.current_time()
            await wait_until(lambda: _has(tmp_path, "subtitle: String"), timeout=PICKED_UP_WITHIN)
            assert trio.current_time() - started < PICKED_UP_WITHIN
            assert await generation(service.client) == 2
        finally:
            execute(database_url, "alter table app_public.posts drop column subtitle")
        await wait_until(lambda: _lacks(tmp_path, "subtitle"), timeout=PICKED_UP_WITHIN)


@pytest.fixture
def owner_url(database_url):
    """The module's database reached as a role that owns the demo schema but is no superuser (no event triggers)."""
    role = f"svc_watch_{secrets.token_hex(3)}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("create role {} login").format(sql.Identifier(role)))
        conn.execute(sql.SQL("alter schema app_public owner to {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("alter table app_public.posts owner to {}").format(sql.Identifier(role)))
    try:
        yield make_conninfo(database_url, user=role)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("alter table app_public.posts owner to postgres")
            conn.execute("alter schema app_public owner to postgres")
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


async def test_an_added_column_is_served_within_seconds_by_polling(tmp_path, owner_url, caplog):
    caplog.set_level(logging.INFO, logger="svc")
    async with running_service(tmp_path, owner_url, mode="dev") as service:
        await wait_until(lambda: _logged(caplog, "watching DDL by polling the catalog every 2s"))
        execute(owner_url, "alter table app_public.posts add column teaser text")
        try:
            started = trio.current_time()
            await wait_until(lambda: _has(tmp_path, "teaser: String"), timeout=PICKED_UP_WITHIN)
            assert trio.current_time() - started < PICKED_UP_WITHIN
            assert await generation(service.client) == 2
        finally:
            execute(owner_url, "alter table app_public.posts drop column teaser")


async def test_watching_is_off_in_prod(tmp_path, database_url, caplog):
    caplog.set_level(logging.INFO, logger="svc")
    async with running_service(tmp_path, database_url, {"reload": {"enabled": False}}) as service:
        execute(database_url, "alter table app_public.posts add column unseen text")
        try:
            await trio.sleep(2.5)
            assert await generation(service.client) == 1
        finally:
            execute(database_url, "alter table app_public.posts drop column unseen")
    assert not exported(tmp_path)
    assert not any("watching DDL" in r.getMessage() for r in caplog.records)


async def test_a_changed_config_file_applies_what_it_may_and_warns_about_the_rest(tmp_path, database_url, caplog):
    caplog.set_level(logging.INFO, logger="svc")
    async with running_service(tmp_path, database_url, mode="dev") as service:
        await wait_until(lambda: _has(tmp_path, "type Post implements Node"))
        settings = merge(LOOPBACK, {"entities": {"posts": {"type_name": "Article"}}, "server": {"port": 4999}})
        (tmp_path / "svc.yaml").write_text(yaml.safe_dump(settings))
        await wait_until(lambda: _has(tmp_path, "type Article implements Node"), timeout=PICKED_UP_WITHIN + 2)
        assert await generation(service.client) == 2
        await wait_until(
            lambda: _logged(caplog, "svc.yaml changed server.port, which takes effect only after a restart")
        )
        (tmp_path / "svc.yaml").write_text("server: {host: 127.0.0.1, port: 0}\nlimits: {page_sise: 1}\n")
        await wait_until(lambda: _logged(caplog, "changed but cannot be used"), timeout=PICKED_UP_WITHIN + 2)
        assert await generation(service.client) == 2


async def _logged(caplog, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def _has(tmp_path, text: str) -> bool:
    return text in exported(tmp_path)


async def _lacks(tmp_path, text: str) -> bool:
    return text not in exported(tmp_path)
