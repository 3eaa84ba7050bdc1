"""WAL positions as the read-your-writes headers carry them: PostgreSQL's `pg_lsn` text, both ways, and what a
request's positions remember of its writes."""

import psycopg
import pytest

from svc.db import Positions, format_lsn, parse_lsn


@pytest.mark.parametrize("text", ["0/0", "0/16B3748", "16/B374D848", "FFFFFFFF/FFFFFFFF", "a/b"])
def test_a_position_reads_back_as_postgresql_writes_it(text, pg_server):
    with psycopg.connect(pg_server, autocommit=True) as conn:
        written, position = conn.execute("select %s::pg_lsn::text, %s::pg_lsn - '0/0'", (text, text)).fetchone()
    assert parse_lsn(text) == int(position)
    assert format_lsn(parse_lsn(text)) == written


@pytest.mark.parametrize("text", ["", "0", "0/", "/1", "0/1/2", "123456789/0", "0/x", "-1/0", "0x1/0", " 0 / 1 "])
def test_anything_else_is_no_position(text):
    with pytest.raises(ValueError, match="not a WAL position"):
        parse_lsn(text)


def test_a_write_raises_what_the_request_s_later_reads_must_see():
    positions = Positions(minimum=parse_lsn("0/100"))
    positions.wrote(parse_lsn("0/80"))
    assert (positions.written, positions.minimum) == (0x80, 0x100)
    positions.wrote(parse_lsn("0/200"))
    assert (positions.written, positions.minimum) == (0x200, 0x200)
