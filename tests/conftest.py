"""Shared fixtures: a real PostgreSQL (SVC_TEST_DATABASE_URL, else 127.0.0.1:5432, else embedded) and a fresh
database per test module, loaded with the module's `DATABASE_FIXTURES` (default `basic.sql`)."""

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.faultproxy import FaultProxy, open_fault_proxy
from tests.support.postgres import fresh_database, postgres_server, upstream_of, via

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


@pytest.fixture
async def fault_proxy(database_url: str) -> AsyncIterator[FaultProxy]:
    async with open_fault_proxy(upstream_of(database_url)) as proxy:
        yield proxy


@pytest.fixture
def proxied_url(database_url: str, fault_proxy: FaultProxy) -> str:
    """The module's database, reached through the fault proxy."""
    return via(database_url, fault_proxy.port)
