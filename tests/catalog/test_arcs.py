"""Exclusive arcs read from CHECK texts (issue 23): the columns of which exactly one is set, in the three forms read
(`num_nonnulls(...) = 1`, `num_nulls(...) = n - 1`, a sum of `(col IS NOT NULL)::integer` equal to 1), alone or as
a term of an AND; and from a real catalog (tests/fixtures/arcs.sql).

Every text below is what PostgreSQL 15 wrote (pg_get_constraintdef) for the constraint in the comment beside it.
"""

import pytest

from svc.catalog._checks import exactly_one
from tests.support.catalog import read_database_catalog

DATABASE_FIXTURES = ["arcs.sql"]


@pytest.mark.parametrize(
    ("definition", "columns"),
    [
        # check (num_nonnulls(p_id, q_id, r_id) = 1)
        ("CHECK ((num_nonnulls(p_id, q_id, r_id) = 1))", ("p_id", "q_id", "r_id")),
        # check (1 = num_nonnulls(p_id, q_id))
        ("CHECK ((1 = num_nonnulls(p_id, q_id)))", ("p_id", "q_id")),
        # check (num_nulls(p_id, q_id, r_id) = 2)
        ("CHECK ((num_nulls(p_id, q_id, r_id) = 2))", ("p_id", "q_id", "r_id")),
        # check ((p_id is not null)::int + (q_id is not null)::int = 1)
        ("CHECK (((((p_id IS NOT NULL))::integer + ((q_id IS NOT NULL))::integer) = 1))", ("p_id", "q_id")),
        # check ((p_id is not null)::int + (q_id is not null)::int + (r_id is not null)::int = 1)
        ("CHECK ((((((p_id IS NOT NULL))::integer + ((q_id IS NOT NULL))::integer) + ((r_id IS NOT NULL))::integer)"
         " = 1))", ("p_id", "q_id", "r_id")),
        # check ((p_id is not null)::int + (q_id is not null)::int = 1 and id > 0)
        ("CHECK ((((((p_id IS NOT NULL))::integer + ((q_id IS NOT NULL))::integer) = 1) AND (id > 0)))",
         ("p_id", "q_id")),
    ],
)  # fmt: skip
def test_the_forms_an_exclusive_arc_is_read_in(definition: str, columns: tuple[str, ...]):
    assert exactly_one(definition) == columns


@pytest.mark.parametrize(
    "definition",
    [
        "CHECK ((num_nonnulls(p_id, q_id) <= 1))",  # at most one
        "CHECK ((num_nonnulls(p_id, q_id) = 2))",  # both
        "CHECK ((num_nulls(p_id, q_id, r_id) = 1))",  # two of three
        "CHECK ((num_nonnulls(p_id) = 1))",  # one column: a NOT NULL
        "CHECK ((num_nonnulls(p_id, p_id) = 1))",  # a column twice
        "CHECK ((num_nonnulls((p_id + 1), q_id) = 1))",  # not a column
        "CHECK (((((p_id IS NULL))::integer + ((q_id IS NOT NULL))::integer) = 1))",  # IS NULL
        "CHECK (((((p_id IS NOT NULL))::integer + ((q_id IS NOT NULL))::integer) = 2))",
        "CHECK (((p_id IS NULL) <> (q_id IS NULL)))",  # an equivalent PostgreSQL cannot be asked to read
        "CHECK (((num_nonnulls(p_id, q_id) = 1) OR (id > 0)))",
    ],
)
def test_checks_that_are_not_exactly_one_give_no_arc(definition: str):
    assert exactly_one(definition) is None


def test_the_catalog_reads_each_arc_check_with_its_columns(database_url: str):
    catalog = read_database_catalog(database_url, ["app"])
    arcs = {
        (relation.name, check.name): check.exactly_one
        for relation in catalog.relations
        for check in relation.checks
        if check.exactly_one is not None
    }
    assert arcs == {
        ("comment", "comment_one_target"): ("post_id", "photo_id", "video_id"),
        ("reaction", "reaction_check"): ("post_id", "video_id"),
        ("bookmark", "bookmark_points_once"): ("photo_id", "video_id"),
        ("note", "note_check"): ("post_id", "external_id"),  # read; the model finds no foreign key for one column
    }
