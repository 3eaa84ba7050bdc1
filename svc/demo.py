"""`svc demo`: an embedded PostgreSQL (pgserver) under `.svc/` in the working directory, with the demo schema.

The README's first command on a fresh machine: nothing is needed but Python. The server's data stays under
`.svc/pgdata` between runs; the demo database is created and loaded on the first run only, so what a user adds to
it survives. The embedded server listens on a Unix socket only and stops when the demo stops.
"""

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import psycopg
from psycopg import sql

log = logging.getLogger("svc.demo")

DEMO_DATABASE = "svc_demo"
DEMO_SCHEMA = "app_public"
DATA_DIRECTORY = Path(".svc")


def demo_sql() -> bytes:
    """The demo schema's statements, as the file's bytes: psycopg runs a query given as bytes as it is (its
    LiteralString guard is for text built in code)."""
    return resources.files("svc").joinpath("demo.sql").read_bytes()


@contextmanager
def embedded_database(directory: Path = DATA_DIRECTORY) -> Iterator[str]:
    """Start (or join) the embedded server under `directory`, load the demo once, yield the demo database's URL."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, containers); pgserver falls back to /tmp.
        warnings.simplefilter("ignore")
        # Its import locates the bundled PostgreSQL: only the demo needs it.
        from pgserver.postgres_server import get_server

    directory.mkdir(parents=True, exist_ok=True)
    log.info("starting the embedded PostgreSQL under %s", directory / "pgdata")
    server = get_server(directory.resolve() / "pgdata", cleanup_mode="stop")
    try:
        _create_database(server.get_uri())
        url = server.get_uri(DEMO_DATABASE)
        _load_demo(url)
        yield url
    finally:
        server.cleanup()


def _create_database(maintenance_url: str) -> None:
    with psycopg.connect(maintenance_url, autocommit=True) as conn:
        if conn.execute("select from pg_database where datname = %s", [DEMO_DATABASE]).fetchone() is None:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(DEMO_DATABASE)))


def _load_demo(url: str) -> None:
    with psycopg.connect(url) as conn:
        if conn.execute("select from pg_namespace where nspname = %s", [DEMO_SCHEMA]).fetchone() is None:
            log.info("loading the demo schema into %s", DEMO_DATABASE)
            conn.execute(demo_sql())  # several statements: with no parameters psycopg sends one simple query
