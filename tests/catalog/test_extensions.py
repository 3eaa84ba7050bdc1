"""What the catalog reads of extensions (tests/fixtures/catalog_extensions.sql over catalog_features.sql): trigram
index operator classes, objects an extension owns, a postgres_fdw foreign table and pg_trgm's settings.

The embedded test server (pgserver) has no contrib: these tests skip there, naming the missing extension.
"""

from collections.abc import Iterator

import psycopg
import pytest

from svc.catalog import (
    Catalog,
    Column,
    Extension,
    Index,
    IndexColumn,
    Relation,
    RelationKind,
    RemoteTable,
    TypeKind,
)
from tests.support.catalog import read_database_catalog

DATABASE_FIXTURES = ["catalog_features.sql", "catalog_extensions.sql"]
REQUIRED_EXTENSIONS = ("pg_trgm", "postgres_fdw")
COLUMN_PRIVILEGES = frozenset({"SELECT", "INSERT", "UPDATE"})


@pytest.fixture(scope="module", autouse=True)
def required_extensions(pg_server: str) -> Iterator[None]:
    """Skip the module, before its database is loaded, when the server cannot install the fixture's extensions."""
    with psycopg.connect(pg_server) as conn:
        available = {name for (name,) in conn.execute("select name from pg_available_extensions")}
    missing = [name for name in REQUIRED_EXTENSIONS if name not in available]
    if missing:
        pytest.skip(f"the test server cannot install {', '.join(missing)} (PostgreSQL contrib)")
    yield


@pytest.fixture(scope="module")
def catalog(database_url: str) -> Catalog:
    return read_database_catalog(database_url, ["app_public", "extensions"], ["svc_catalog_shopper"])


def relation(catalog: Catalog, name: str) -> Relation:
    found = catalog.relation("app_public", name)
    assert found is not None, f"app_public.{name} not read"
    return found


def test_trigram_indexes_name_their_operator_classes(catalog: Catalog):
    assert [i for i in relation(catalog, "products").indexes if i.method == "gin" and i.name.endswith("trgm_idx")] == [
        Index("products_name_trgm_idx", "gin", (IndexColumn("name", None, "gin_trgm_ops"),), False, False,
              referenced_columns=("name",)),
    ]  # fmt: skip
    assert [i for i in relation(catalog, "customers").indexes if i.method == "gist"] == [
        Index("customers_display_name_trgm_idx", "gist", (IndexColumn("display_name", None, "gist_trgm_ops"),),
              False, False, referenced_columns=("display_name",)),
    ]  # fmt: skip


def test_extensions_and_the_objects_they_own(catalog: Catalog):
    assert {(e.name, e.schema) for e in catalog.extensions} == {
        ("plpgsql", "pg_catalog"), ("pg_trgm", "extensions"), ("postgres_fdw", "extensions"),
    }  # fmt: skip
    assert all(isinstance(e, Extension) and e.version for e in catalog.extensions)
    # Functions of an exposed schema that an extension owns are read, marked as its own (the model hides them).
    owners = {f.name: f.extension for f in catalog.functions if f.schema == "extensions"}
    assert owners["similarity"] == "pg_trgm"
    assert owners["word_similarity"] == "pg_trgm"
    assert owners["postgres_fdw_handler"] == "postgres_fdw"
    assert set(owners.values()) == {"pg_trgm", "postgres_fdw"}
    assert all(f.extension is None for f in catalog.functions if f.schema == "app_public")
    types = {t.name: t for t in catalog.types.values() if t.schema == "extensions"}
    assert (types["gtrgm"].kind, types["gtrgm"].extension) == (TypeKind.BASE, "pg_trgm")
    assert types["_gtrgm"].extension == "pg_trgm"  # an array type belongs to its element's extension


def test_a_foreign_table_names_its_server_and_wrapper(catalog: Catalog):
    prices = relation(catalog, "supplier_prices")
    assert (prices.kind, prices.foreign_server, prices.foreign_data_wrapper) == (
        RelationKind.FOREIGN_TABLE, "svc_catalog_suppliers", "postgres_fdw",
    )  # fmt: skip
    assert prices.comment == "What suppliers charge, from their price lists."
    # Declared `updatable 'false'`: postgres_fdw refuses writes through it.
    assert (prices.insertable, prices.updatable, prices.deletable) == (False, False, False)
    assert prices.primary_key is None  # the remote key is not in this catalog (SPEC: read from the remote one)
    # where it is read from: the remote table and each column's name there
    assert prices.remote == RemoteTable(
        "app_private", "supplier_prices", {"sku": "sku", "supplier": "supplier", "price": "price"}
    )
    assert prices.privileges["svc_catalog_shopper"] == frozenset({"SELECT"})
    assert prices.columns[2] == Column(
        "price", 3, "numeric(10,2)", 1700, not_null=False, has_default=False, identity=None, generated=False,
        comment=None, numeric_precision=10, numeric_scale=2,
        privileges={catalog.current_user: COLUMN_PRIVILEGES, "svc_catalog_shopper": frozenset({"SELECT"})},
    )  # fmt: skip


def test_pg_trgm_settings_are_read_when_set(catalog: Catalog):
    assert catalog.settings["pg_trgm.similarity_threshold"] == "0.4"
    assert catalog.settings["default_text_search_config"].startswith("pg_catalog.")
