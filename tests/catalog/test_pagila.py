"""The catalog of pagila (tests/fixtures/pagila), the benchmark's database: a partitioned table whose foreign keys
live on its partitions, enums and domains, views and a materialized view, and functions of several shapes."""

import pytest

from svc.catalog import (
    Argument,
    ArgumentMode,
    Catalog,
    DomainCheck,
    ForeignKey,
    Index,
    IndexColumn,
    Key,
    PgType,
    Relation,
    RelationKind,
    TypeKind,
    Volatility,
)
from tests.support.catalog import read_database_catalog
from tests.support.postgres import PAGILA

DATABASE_FIXTURES = PAGILA
INT4, INT8, NUMERIC, TIMESTAMPTZ, DATE = 23, 20, 1700, 1184, 1082


@pytest.fixture(scope="module")
def catalog(database_url: str) -> Catalog:
    return read_database_catalog(database_url, ["public"])


def relation(catalog: Catalog, name: str) -> Relation:
    found = catalog.relation("public", name)
    assert found is not None, f"public.{name} not read"
    return found


def pg_type(catalog: Catalog, name: str) -> PgType:
    return next(t for t in catalog.types.values() if t.schema == "public" and t.name == name)


def test_payment_is_partitioned_and_its_partitions_are_left_out(catalog: Catalog):
    payment = relation(catalog, "payment")
    assert payment.kind == RelationKind.PARTITIONED_TABLE
    assert payment.primary_key == Key("payment_pkey", ("payment_date", "payment_id"), is_primary=True)
    assert [r.name for r in catalog.relations if r.name.startswith("payment")] == ["payment"]


def test_payment_gets_the_foreign_keys_its_partitions_declare(catalog: Catalog):
    def lifted(column: str, target: str) -> ForeignKey:
        # p2022_01 .. p2022_06 declare it; p2022_07 has no foreign keys.
        names = tuple(f"payment_p2022_0{month}_{column}_fkey" for month in range(1, 7))
        return ForeignKey(names[0], (column,), "public", target, (column,), partition_constraints=names)

    assert relation(catalog, "payment").foreign_keys == (
        lifted("customer_id", "customer"),
        lifted("rental_id", "rental"),
        lifted("staff_id", "staff"),
    )


def test_enum_and_domains(catalog: Catalog):
    rating = pg_type(catalog, "mpaa_rating")
    assert rating == PgType(rating.oid, "public", "mpaa_rating", "public.mpaa_rating", TypeKind.ENUM, "E",
                            enum_labels=("G", "PG", "PG-13", "R", "NC-17"))  # fmt: skip
    year = pg_type(catalog, "year")
    assert year == PgType(
        year.oid, "public", "year", "public.year", TypeKind.DOMAIN, "N", base_oid=INT4,
        domain_checks=(DomainCheck("year_check", "CHECK (((VALUE >= 1901) AND (VALUE <= 2155)))"),),
    )  # fmt: skip
    # A name that needs quoting keeps its quotes in SQL.
    bigint = pg_type(catalog, "bıgınt")
    assert bigint == PgType(bigint.oid, "public", "bıgınt", 'public."bıgınt"', TypeKind.DOMAIN, "N", base_oid=INT8)
    columns = {c.name: c for c in relation(catalog, "film").columns}
    assert (columns["rating"].type_oid, columns["release_year"].type) == (rating.oid, "public.year")


def test_views_and_the_materialized_view(catalog: Catalog):
    kinds = {r.name: r.kind for r in catalog.relations if r.kind != RelationKind.TABLE}
    assert kinds == {
        "actor_info": RelationKind.VIEW,
        "customer_list": RelationKind.VIEW,
        "film_list": RelationKind.VIEW,
        "nicer_but_slower_film_list": RelationKind.VIEW,
        "sales_by_film_category": RelationKind.VIEW,
        "sales_by_store": RelationKind.VIEW,
        "staff_list": RelationKind.VIEW,
        "payment": RelationKind.PARTITIONED_TABLE,
        "rental_by_category": RelationKind.MATERIALIZED_VIEW,
    }
    assert relation(catalog, "rental_by_category").unique_keys == (
        Key("rental_category", ("category",), is_constraint=False),
    )


def test_the_full_text_index_of_film(catalog: Catalog):
    gist = [i for i in relation(catalog, "film").indexes if i.method == "gist"]
    assert gist == [
        Index("film_fulltext_idx", "gist", (IndexColumn("fulltext", None, "tsvector_ops"),), False, False,
              referenced_columns=("fulltext",)),
    ]  # fmt: skip


def test_functions(catalog: Catalog):
    functions = {f.name: f for f in catalog.functions}

    def shape(name: str) -> tuple:
        f = functions[name]
        return (f.volatility, f.returns_set, f.return_type_oid, f.arguments, f.language, f.kind)

    def arg(name: str | None, oid: int, mode: ArgumentMode = ArgumentMode.IN) -> Argument:
        return Argument(name, oid, mode, has_default=False)

    # One OUT argument: a set of its type, the OUT argument its column.
    assert shape("film_in_stock") == (Volatility.VOLATILE, True, INT4, (
        arg("p_film_id", INT4), arg("p_store_id", INT4), arg("p_film_count", INT4, ArgumentMode.OUT),
    ), "sql", "f")  # fmt: skip
    assert functions["film_in_stock"].output_columns == (arg("p_film_count", INT4, ArgumentMode.OUT),)
    assert shape("rewards_report") == (Volatility.VOLATILE, True, relation(catalog, "customer").type_oid, (
        arg("min_monthly_purchases", INT4), arg("min_dollar_amount_purchased", NUMERIC),
    ), "plpgsql", "f")  # fmt: skip
    assert functions["rewards_report"].security_definer
    assert shape("last_day") == (Volatility.IMMUTABLE, False, DATE, (arg(None, TIMESTAMPTZ),), "sql", "f")
    assert functions["last_day"].strict
