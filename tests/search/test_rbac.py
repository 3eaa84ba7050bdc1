"""Search under `rbac` (SPEC "What the service does", rule 3): a role sees the search documents made of columns it
may read, highlights only where it may read the text, and hybrid search only while it sees both methods."""

import pytest

from svc.model import SearchMethod, prune_model
from tests.support.model import read_catalog_and_model
from tests.support.postgres import execute

DATABASE_FIXTURES: list[str] = []
SCHEMA = """
create extension if not exists pg_trgm;
create schema shop;
create table shop.notes (
  id integer primary key,
  title text not null,
  secret text not null,
  body text not null,
  words tsvector generated always as (to_tsvector('english', title || ' ' || secret)) stored
);
create index notes_title_trgm on shop.notes using gin (title gin_trgm_ops);
create index notes_secret_trgm on shop.notes using gin (secret gin_trgm_ops);
create index notes_words on shop.notes using gin (words);
do $$ begin create role svc_search_clerk; exception when duplicate_object then null; end $$;
grant usage on schema shop to svc_search_clerk;
grant select (id, title, body, words) on shop.notes to svc_search_clerk;
"""


@pytest.fixture(scope="module")
def read(database_url, tmp_path_factory):
    execute(database_url, SCHEMA)
    settings = {"database": {"schemas": ["shop"]}}
    return read_catalog_and_model(
        database_url, tmp_path_factory.mktemp("search_rbac"), settings, roles=["svc_search_clerk"]
    )


def test_a_role_searches_only_what_it_may_read(read):
    catalog, model = read
    notes = model.entity_named("Note")
    assert notes is not None
    assert [f.name for f in notes.search.of(SearchMethod.FUZZY)] == ["SECRET", "TITLE"]
    assert notes.search.of(SearchMethod.FULL_TEXT)[0].source is not None
    clerk = prune_model(model, catalog, "svc_search_clerk").entity_named("Note")
    assert clerk is not None
    assert [f.name for f in clerk.search.of(SearchMethod.FUZZY)] == ["TITLE"]
    (words,) = clerk.search.of(SearchMethod.FULL_TEXT)
    assert words.source is None  # its text reads `secret`: no highlights for the clerk
