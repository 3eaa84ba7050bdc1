"""The catalog of a test database, read through the real introspection query (what `build_snapshot` runs)."""

from collections.abc import Sequence

import psycopg

from svc.catalog import INTROSPECTION_QUERY, Catalog, read_catalog


def read_database_catalog(url: str, schemas: Sequence[str], roles: Sequence[str] = ()) -> Catalog:
    """Run the introspection query on `url` in a repeatable-read, read-only transaction and read its document."""
    with psycopg.connect(url) as conn:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        document = conn.execute(INTROSPECTION_QUERY, {"schemas": list(schemas), "roles": list(roles)}).fetchone()
    assert document is not None
    return read_catalog(document[0])
