"""The module's database read directly: each aggregate the service answers is checked against hand-written SQL."""

import psycopg
import pytest


@pytest.fixture(scope="module")
def db(database_url):
    """A connection in UTC: the service's sessions keep the server's zone, which is UTC here too."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("set timezone = 'UTC'")
        yield conn
