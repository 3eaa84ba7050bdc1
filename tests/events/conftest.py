"""Each event test starts without the service's schema and with empty tables: capture installs anew."""

import pytest

from tests.events.support import sql


@pytest.fixture(autouse=True)
def clean(database_url):
    yield
    sql(database_url, "drop schema if exists svc_events cascade")
    sql(database_url, "truncate app_public.orders, app_public.tags, app_public.notes restart identity cascade")
