"""Casts name their type as the catalog does (format_type's text), written into the statement as it is: every name
PostgreSQL writes is taken, and text that is not a type name is refused (psycopg.sql has no piece for a type)."""

import psycopg
import pytest
from psycopg import sql

from svc.sql._filters import TypeName

DATABASE_FIXTURES = ["reads.sql"]

#: Types with modifiers, and SQL's names of more than one word, as format_type writes them.
_MODIFIED = """create table app_public.modified (
  a numeric(5,2), b varchar(40), c timestamp(3) with time zone, d time(2), e interval day to second(3),
  f interval year to month, g bit varying(5), h char(3), i numeric(5,-2), j "char", k interval(2),
  l timestamp(0)[], m double precision[], n app_public.genre[]
)"""


def test_every_type_the_catalog_names_is_written_as_it_is(database_url):
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(_MODIFIED)
        names = [
            row[0]
            for row in conn.execute(
                # As introspect.sql names them: the schema written unless pg_catalog's.
                "select case when n.nspname <> 'pg_catalog' and pg_type_is_visible(t.oid)"
                " then quote_ident(n.nspname) || '.' else '' end || format_type(t.oid, null)"
                " from pg_type t join pg_namespace n on n.oid = t.typnamespace"
                " union select format_type(atttypid, atttypmod) from pg_attribute"
                " where attrelid = 'app_public.modified'::regclass and attnum > 0"
            )
        ]
    assert {"integer", "text[]", "app_public.genre", "numeric(5,2)", "timestamp(3) with time zone"} <= set(names)
    for name in names:
        assert sql.SQL("x::{}").format(TypeName(name)).as_string(None) == f"x::{name}"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "integer; drop table books",
        "text) or (true",
        "integer -- ",
        "integer /* x */",
        "integer union select 1",
        '"genre" "x"',
        '"unclosed',
        "app_public.genre.extra",
        "numeric(5,2",
        "text[1]",
        "integer\n",
    ],
)
def test_text_that_is_not_a_type_name_is_refused(text):
    with pytest.raises(ValueError, match="not a type name"):
        TypeName(text)
