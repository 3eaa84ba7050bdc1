"""Each test of a module on the events fixture starts without the service's schema and with empty tables, so the
capture installs anew. Modules without a database (signing, the transport) are left alone."""

import pytest

from tests.events.support import sql


@pytest.fixture(autouse=True)
def clean(request: pytest.FixtureRequest):
    on_events = "events.sql" in getattr(request.module, "DATABASE_FIXTURES", ())
    database_url = request.getfixturevalue("database_url") if on_events else None
    yield
    if database_url is not None:
        sql(database_url, "drop schema if exists svc_events cascade")
        sql(database_url, "truncate app_public.orders, app_public.tags, app_public.notes restart identity cascade")
