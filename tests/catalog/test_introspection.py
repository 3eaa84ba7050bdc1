"""The catalog read from a real database (tests/fixtures/catalog_features.sql, a small shop) through the real
introspection query: one test per family of facts, each asserting whole facts."""

import pytest

from svc.catalog import (
    Argument,
    ArgumentMode,
    Attribute,
    Bounds,
    Catalog,
    Check,
    Column,
    DomainCheck,
    Exclusion,
    Extension,
    ForeignKey,
    ForeignKeyAction,
    Index,
    IndexColumn,
    Key,
    PgType,
    Policy,
    Relation,
    RelationKind,
    TypeKind,
    Volatility,
)
from svc.db import ConnectionSettings, Executor, open_pool
from svc.snapshot import build_snapshot
from tests.support.catalog import read_database_catalog
from tests.support.service import configure

DATABASE_FIXTURES = ["catalog_features.sql"]
SCHEMAS = ["app_public", "app_private"]
#: The configured roles: one that does not exist is left out, without an error.
ROLES = ["svc_catalog_shopper", "svc_catalog_nobody", "svc_catalog_visitor"]

TABLE_PRIVILEGES = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})
COLUMN_PRIVILEGES = frozenset({"SELECT", "INSERT", "UPDATE"})
NONE: frozenset[str] = frozenset()
SELECT = frozenset({"SELECT"})
INT4, INT8, INT2, TEXT, VARCHAR, BPCHAR, NUMERIC, UUID, TIMESTAMPTZ = 23, 20, 21, 25, 1043, 1042, 1700, 2950, 1184
RECORD, VOID = 2249, 2278


@pytest.fixture(scope="module")
def catalog(database_url: str) -> Catalog:
    return read_database_catalog(database_url, SCHEMAS, ROLES)


def relation(catalog: Catalog, name: str, schema: str = "app_public") -> Relation:
    found = catalog.relation(schema, name)
    assert found is not None, f"{schema}.{name} not read"
    return found


def column(found: Relation, name: str) -> Column:
    read = found.column(name)
    assert read is not None, f"{found.name}.{name} not read"
    return read


def type_oid(catalog: Catalog, name: str, schema: str = "app_public") -> int:
    return next(t.oid for t in catalog.types.values() if t.schema == schema and t.name == name)


def privileges(catalog: Catalog, shopper: frozenset[str], visitor: frozenset[str], owner=TABLE_PRIVILEGES):
    """Per role, as read: the connecting role (the fixture's owner) first."""
    return {catalog.current_user: owner, "svc_catalog_shopper": shopper, "svc_catalog_visitor": visitor}


# --- the whole catalog ---------------------------------------------------------------------------------------------


def test_the_catalog_names_its_schemas_roles_and_settings(catalog: Catalog, database_url: str):
    assert catalog.schemas == ("app_public", "app_private")
    assert catalog.roles == (catalog.current_user, "svc_catalog_shopper", "svc_catalog_visitor")
    assert catalog.schema_comments == {"app_public": "The shop, as its API shows it."}
    assert catalog.server_version_num >= 140000
    assert catalog.extensions == (Extension("plpgsql", "pg_catalog", "1.0"),)
    # pg_trgm is not installed here: its settings are left out, not an error.
    assert set(catalog.settings) == {"default_text_search_config"}


def test_schemas_come_in_configured_order_and_missing_ones_are_left_out(database_url: str):
    catalog = read_database_catalog(database_url, ["app_private", "no_such_schema", "app_public"])
    assert catalog.schemas == ("app_private", "app_public")
    assert catalog.roles == (catalog.current_user,)


def test_relations_are_read_with_their_kinds_and_partitions_are_left_out(catalog: Catalog):
    kinds = {(r.schema, r.name): r.kind for r in catalog.relations}
    assert kinds == {
        ("app_private", "customer_secrets"): RelationKind.TABLE,
        ("app_public", "categories"): RelationKind.TABLE,
        ("app_public", "category_sales"): RelationKind.MATERIALIZED_VIEW,
        ("app_public", "customers"): RelationKind.TABLE,
        ("app_public", "order_items"): RelationKind.TABLE,
        ("app_public", "order_totals"): RelationKind.VIEW,
        ("app_public", "orders"): RelationKind.TABLE,
        ("app_public", "page_views"): RelationKind.TABLE,
        ("app_public", "product_listing"): RelationKind.VIEW,
        ("app_public", "product_tags"): RelationKind.TABLE,
        ("app_public", "products"): RelationKind.TABLE,
        ("app_public", "reviews"): RelationKind.TABLE,
        ("app_public", "sales"): RelationKind.TABLE,
        ("app_public", "sales_channels"): RelationKind.TABLE,
        ("app_public", "shipments"): RelationKind.TABLE,
        ("app_public", "stock_movements"): RelationKind.PARTITIONED_TABLE,
        ("app_public", "tags"): RelationKind.TABLE,
        ("app_public", "workshop_sessions"): RelationKind.TABLE,
    }
    products = relation(catalog, "products")
    assert products.comment == "Things the shop sells."
    assert catalog.type(products.type_oid).relation_oid == products.oid


# --- columns -------------------------------------------------------------------------------------------------------


def test_columns_carry_types_defaults_identity_and_lengths(catalog: Catalog):
    everyone = privileges(catalog, NONE, NONE, owner=COLUMN_PRIVILEGES)
    customers = relation(catalog, "customers")
    assert customers.columns[0] == Column(
        "id", 1, "integer", INT4, not_null=True, has_default=False, identity="d", generated=False, comment=None,
        privileges=privileges(catalog, SELECT, NONE, owner=COLUMN_PRIVILEGES),  # a column grant
    )  # fmt: skip
    # A domain over varchar(320): the length comes through the domain, the type is named with its schema.
    assert column(customers, "email") == Column(
        "email", 2, "app_public.email", type_oid(catalog, "email"), not_null=True, has_default=False, identity=None,
        generated=False, comment=None, max_length=320, privileges=everyone,
    )  # fmt: skip
    assert column(customers, "phone") == Column(
        "phone", 5, "character(16)", BPCHAR, not_null=False, has_default=False, identity=None, generated=False,
        comment=None, max_length=16, privileges=everyone,
    )  # fmt: skip
    assert column(customers, "preferred_contact") == Column(
        "preferred_contact", 6, "character varying(8)", VARCHAR, not_null=True, has_default=True, identity=None,
        generated=False, comment=None, default="'email'::character varying", max_length=8, privileges=everyone,
    )  # fmt: skip
    assert column(customers, "address") == Column(
        "address", 7, "app_public.postal_address", type_oid(catalog, "postal_address"), not_null=False,
        has_default=False, identity=None, generated=False, comment=None, privileges=everyone,
    )  # fmt: skip

    products = relation(catalog, "products")
    selectable = privileges(catalog, SELECT, SELECT, owner=COLUMN_PRIVILEGES)
    assert column(products, "id") == Column(
        "id", 1, "uuid", UUID, not_null=True, has_default=True, identity=None, generated=False, comment=None,
        default="gen_random_uuid()", privileges=selectable,
    )  # fmt: skip
    assert column(products, "price") == Column(
        "price", 6, "numeric(10,2)", NUMERIC, not_null=True, has_default=False, identity=None, generated=False,
        comment=None, numeric_precision=10, numeric_scale=2, privileges=selectable,
    )  # fmt: skip
    assert column(products, "age_rating") == Column(
        "age_rating", 8, "app_public.age_rating", type_oid(catalog, "age_rating"), not_null=True, has_default=True,
        identity=None, generated=False, comment=None, default="'all-ages'::app_public.age_rating",
        privileges=selectable,
    )  # fmt: skip
    assert column(products, "search") == Column(
        "search", 14, "tsvector", 3614, not_null=False, has_default=True, identity=None, generated=True,
        comment="Name and description, for full-text search.",
        default="to_tsvector('english'::regconfig, (((name)::text || ' '::text) || COALESCE(description, ''::text)))",
        privileges=selectable,
    )  # fmt: skip
    assert [(c.name, c.type, c.type_oid) for c in products.columns if c.name in (
        "image_urls", "details", "care_instructions", "thumbnail",
    )] == [("image_urls", "text[]", 1009), ("details", "jsonb", 3802), ("care_instructions", "json", 114),
           ("thumbnail", "bytea", 17)]  # fmt: skip

    # A domain over numeric(10, 2): precision and scale come through it; a generated stored column is read-only.
    items = relation(catalog, "order_items")
    shopper = privileges(catalog, COLUMN_PRIVILEGES, NONE, owner=COLUMN_PRIVILEGES)
    assert column(items, "unit_price") == Column(
        "unit_price", 5, "app_public.money_amount", type_oid(catalog, "money_amount"), not_null=False,
        has_default=False, identity=None, generated=False, comment=None, numeric_precision=10, numeric_scale=2,
        privileges=shopper,
    )  # fmt: skip
    assert column(items, "line_total") == Column(
        "line_total", 6, "numeric(12,2)", NUMERIC, not_null=False, has_default=True, identity=None, generated=True,
        comment=None, default="((quantity)::numeric * (unit_price)::numeric)", numeric_precision=12,
        numeric_scale=2, privileges=shopper,
    )  # fmt: skip

    categories = relation(catalog, "categories")
    assert column(categories, "id").identity == "a"
    assert column(categories, "slug").comment == "The category's part of a shop address."
    assert column(categories, "typical_prices").type == "app_public.price_range"
    assert column(relation(catalog, "sales"), "skipped_days").type == "datemultirange"


def test_column_grants_give_columns_privileges_their_table_lacks(catalog: Catalog):
    customers = relation(catalog, "customers")
    assert customers.privileges == privileges(catalog, NONE, NONE)
    by_column = {c.name: c.privileges["svc_catalog_shopper"] for c in customers.columns}
    assert by_column == {
        "id": SELECT,
        "email": NONE,
        "display_name": frozenset({"SELECT", "UPDATE"}),
        "full_name": frozenset({"SELECT", "UPDATE"}),
        "phone": NONE,
        "preferred_contact": NONE,
        "address": NONE,
        "created_at": NONE,
        "deleted_at": NONE,
    }
    assert all(c.privileges["svc_catalog_visitor"] == NONE for c in customers.columns)


def test_table_privileges_are_read_per_role(catalog: Catalog):
    assert relation(catalog, "orders").privileges == privileges(catalog, frozenset({"SELECT", "INSERT", "UPDATE"}),
                                                                NONE)  # fmt: skip
    assert relation(catalog, "order_items").privileges == privileges(catalog, TABLE_PRIVILEGES, NONE)
    assert relation(catalog, "reviews").privileges == privileges(catalog, frozenset({"SELECT", "INSERT", "DELETE"}),
                                                                 SELECT)  # fmt: skip
    assert relation(catalog, "product_listing").privileges == privileges(catalog, SELECT, SELECT)
    assert relation(catalog, "customer_secrets", "app_private").privileges == privileges(catalog, NONE, NONE)


# --- keys ----------------------------------------------------------------------------------------------------------


def test_primary_keys_single_composite_and_none(catalog: Catalog):
    assert relation(catalog, "products").primary_key == Key("products_pkey", ("id",), is_primary=True)
    assert relation(catalog, "order_items").primary_key == Key(
        "order_items_pkey", ("order_id", "line_no"), is_primary=True
    )
    # The junction table: its two foreign keys form its primary key.
    assert relation(catalog, "product_tags").primary_key == Key(
        "product_tags_pkey", ("product_id", "tag_id"), is_primary=True
    )
    assert relation(catalog, "stock_movements").primary_key == Key(
        "stock_movements_pkey", ("moved_at", "id"), is_primary=True
    )
    assert relation(catalog, "page_views").primary_key is None
    assert relation(catalog, "page_views").unique_keys == ()


def test_unique_constraints_and_unique_indexes_are_keys(catalog: Catalog):
    assert relation(catalog, "categories").unique_keys == (Key("categories_name_key", ("name",)),)
    assert relation(catalog, "reviews").unique_keys == (
        Key("reviews_product_id_customer_id_key", ("product_id", "customer_id")),
    )
    assert relation(catalog, "sales_channels").unique_keys == (
        Key("sales_channels_name_key", ("name",), nulls_not_distinct=True),
    )
    assert relation(catalog, "tags").unique_keys == (Key("tags_label_key", ("label",), is_constraint=False),)
    # A partial unique index and an expression unique index: usable for errors, not as lookups.
    customers = relation(catalog, "customers")
    assert customers.unique_keys == (
        Key("customers_display_name_key", ("display_name",), is_constraint=False, predicate="deleted_at IS NULL"),
        Key("customers_email_key", ("email",), is_constraint=False, expressions=("lower(email::text)",)),
    )
    assert [k.is_plain for k in customers.unique_keys] == [False, False]
    assert relation(catalog, "category_sales").unique_keys == (
        Key("category_sales_category_id_key", ("category_id",), is_constraint=False),
    )


# --- foreign keys --------------------------------------------------------------------------------------------------


def test_foreign_keys_with_each_action(catalog: Catalog):
    def key(table: str, schema: str = "app_public") -> tuple[ForeignKey, ...]:
        return relation(catalog, table, schema).foreign_keys

    assert key("categories") == (  # a tree: the key points at its own table
        ForeignKey("categories_parent_id_fkey", ("parent_id",), "app_public", "categories", ("id",),
                   on_delete=ForeignKeyAction.CASCADE),
    )  # fmt: skip
    assert key("products") == (
        ForeignKey("products_category_id_fkey", ("category_id",), "app_public", "categories", ("id",),
                   on_delete=ForeignKeyAction.SET_NULL),
    )  # fmt: skip
    assert key("orders") == (
        ForeignKey("orders_customer_id_fkey", ("customer_id",), "app_public", "customers", ("id",),
                   on_delete=ForeignKeyAction.RESTRICT, comment="The customer who placed the order."),
        ForeignKey("orders_sales_channel_id_fkey", ("sales_channel_id",), "app_public", "sales_channels", ("id",),
                   on_delete=ForeignKeyAction.SET_DEFAULT),
    )  # fmt: skip
    assert key("order_items") == (
        ForeignKey("order_items_order_id_fkey", ("order_id",), "app_public", "orders", ("id",),
                   on_delete=ForeignKeyAction.CASCADE),
        ForeignKey("order_items_product_id_fkey", ("product_id",), "app_public", "products", ("id",)),
    )  # fmt: skip
    assert key("product_tags") == (
        ForeignKey("product_tags_product_id_fkey", ("product_id",), "app_public", "products", ("id",),
                   on_delete=ForeignKeyAction.CASCADE),
        ForeignKey("product_tags_tag_id_fkey", ("tag_id",), "app_public", "tags", ("id",),
                   on_delete=ForeignKeyAction.RESTRICT, on_update=ForeignKeyAction.CASCADE),
    )  # fmt: skip
    assert key("shipments") == (  # composite, columns paired in order
        ForeignKey("shipments_order_id_line_no_fkey", ("order_id", "line_no"), "app_public", "order_items",
                   ("order_id", "line_no"), on_delete=ForeignKeyAction.CASCADE),
    )  # fmt: skip
    assert key("customer_secrets", "app_private") == (  # across schemas
        ForeignKey("customer_secrets_customer_id_fkey", ("customer_id",), "app_public", "customers", ("id",),
                   on_delete=ForeignKeyAction.CASCADE),
    )  # fmt: skip


def test_foreign_keys_declared_on_partitions_are_lifted_to_the_partitioned_table(catalog: Catalog):
    assert relation(catalog, "stock_movements").foreign_keys == (
        ForeignKey("stock_movements_2025_order_id_fkey", ("order_id",), "app_public", "orders", ("id",),
                   partition_constraints=("stock_movements_2025_order_id_fkey", "stock_movements_2026_order_id_fkey")),
        ForeignKey("stock_movements_2025_product_id_fkey", ("product_id",), "app_public", "products", ("id",),
                   partition_constraints=("stock_movements_2025_product_id_fkey",
                                          "stock_movements_2026_product_id_fkey")),
    )  # fmt: skip


# --- checks and exclusions -----------------------------------------------------------------------------------------


def test_checks_with_their_names_values_and_bounds(catalog: Catalog):
    assert relation(catalog, "products").checks == (
        Check("few_keywords", ("keywords",), "CHECK ((array_length(keywords, 1) <= 12))", name_chosen=True,
              bounds=Bounds(max_items=12)),
        Check("products_image_urls_check", ("image_urls",), "CHECK ((cardinality(image_urls) <= 8))",
              name_chosen=False, bounds=Bounds(max_items=8)),
        Check("products_price_check", ("price",), "CHECK ((price > (0)::numeric))", name_chosen=False,
              bounds=Bounds(exclusive_minimum=0)),
        Check("products_weight_grams_check", ("weight_grams",),
              "CHECK (((weight_grams >= 1) AND (weight_grams <= 50000)))", name_chosen=False,
              bounds=Bounds(minimum=1, maximum=50000)),
        Check("sku_format", ("sku",), "CHECK ((sku ~ '^[A-Z]{3}-[0-9]{4}$'::text))", name_chosen=True,
              bounds=Bounds(pattern="^[A-Z]{3}-[0-9]{4}$")),
    )  # fmt: skip
    assert relation(catalog, "customers").checks == (
        Check("customers_full_name_check", ("full_name",), "CHECK ((char_length(full_name) <= 200))",
              name_chosen=False, bounds=Bounds(max_length=200)),
        Check("customers_preferred_contact_check", ("preferred_contact",),
              "CHECK (((preferred_contact)::text = ANY ((ARRAY['email'::character varying, 'phone'::character "
              "varying, 'none'::character varying])::text[])))", name_chosen=False,
              allowed_values=("email", "phone", "none")),
    )  # fmt: skip
    assert relation(catalog, "shipments").checks == (
        Check("shipments_carrier_check", ("carrier",),
              "CHECK ((carrier = ANY (ARRAY['post'::text, 'courier'::text, 'pickup'::text])))", name_chosen=False,
              allowed_values=("post", "courier", "pickup")),
        # Two columns, in table order; PostgreSQL names such a check after the table alone.
        Check("shipments_check", ("tracking_code", "shipped_at"),
              "CHECK (((shipped_at IS NULL) OR (tracking_code IS NOT NULL)))", name_chosen=False),
    )  # fmt: skip
    assert relation(catalog, "reviews").checks == (
        Check("body_length", ("body",), "CHECK (((length(body) >= 10) AND (length(body) <= 2000)))",
              name_chosen=True, bounds=Bounds(min_length=10, max_length=2000)),
    )  # fmt: skip
    assert relation(catalog, "tags").checks == (
        Check("tags_label_check", ("label",), "CHECK ((label = lower(label)))", name_chosen=False),
    )
    assert [(c.name, c.bounds) for c in relation(catalog, "sales").checks] == [
        ("sales_discount_percent_check", Bounds(exclusive_minimum=0, exclusive_maximum=90)),
    ]


def test_exclusion_constraints(catalog: Catalog):
    assert relation(catalog, "workshop_sessions").exclusions == (
        Exclusion("workshop_sessions_during_excl", ("during",), False, "EXCLUDE USING gist (during WITH &&)"),
    )
    assert relation(catalog, "sales").exclusions == (
        Exclusion("one_sale_at_a_time", ("period",), True, "EXCLUDE USING gist (period WITH &&)"),
    )


# --- indexes -------------------------------------------------------------------------------------------------------


def test_indexes_with_methods_opclasses_and_order(catalog: Catalog):
    assert relation(catalog, "products").indexes == (
        Index("products_category_id_idx", "btree", (IndexColumn("category_id", None, "int4_ops"),), False, False,
              referenced_columns=("category_id",)),
        Index("products_pkey", "btree", (IndexColumn("id", None, "uuid_ops"),), True, True,
              referenced_columns=("id",)),
        Index("products_price_desc_idx", "btree", (IndexColumn("price", None, "numeric_ops", descending=True),),
              False, False, referenced_columns=("price",)),
        Index("products_search_idx", "gin", (IndexColumn("search", None, "tsvector_ops"),), False, False,
              referenced_columns=("search",)),
        Index("products_sku_key", "btree", (IndexColumn("sku", None, "text_ops"),), True, False,
              referenced_columns=("sku",)),
    )  # fmt: skip
    assert relation(catalog, "customers").indexes == (
        Index("customers_display_name_key", "btree", (IndexColumn("display_name", None, "text_ops"),), True, False,
              predicate="deleted_at IS NULL", referenced_columns=("display_name", "deleted_at")),
        Index("customers_email_key", "btree", (IndexColumn(None, "lower(email::text)", "text_ops"),), True, False,
              referenced_columns=("email",)),
        Index("customers_pkey", "btree", (IndexColumn("id", None, "int4_ops"),), True, True,
              referenced_columns=("id",)),
    )  # fmt: skip
    assert relation(catalog, "workshop_sessions").indexes[0] == Index(
        "workshop_sessions_during_excl", "gist", (IndexColumn("during", None, "range_ops"),), False, False,
        referenced_columns=("during",),
    )  # fmt: skip


# --- row-level security --------------------------------------------------------------------------------------------


def test_row_level_security_and_policies(catalog: Catalog):
    orders = relation(catalog, "orders")
    assert (orders.rls_enabled, orders.rls_forced) == (True, True)
    own = "customer_id = NULLIF(current_setting('jwt.claims.customer_id'::text, true), ''::text)::integer"
    assert orders.policies == (
        Policy("orders_insert_own", "INSERT", ("svc_catalog_shopper",), True, None, own),
        Policy("orders_keep_cancelled", "UPDATE", ("public",), False, "status <> 'cancelled'::app_public.order_status",
               None),
        Policy("orders_select_own", "SELECT", ("svc_catalog_shopper",), True, own, None),
    )  # fmt: skip
    reviews = relation(catalog, "reviews")
    assert (reviews.rls_enabled, reviews.rls_forced) == (True, False)
    assert reviews.policies == (Policy("reviews_public", "SELECT", ("public",), True, "true", None),)
    products = relation(catalog, "products")
    assert (products.rls_enabled, products.rls_forced, products.policies) == (False, False, ())


# --- views ---------------------------------------------------------------------------------------------------------


def test_views_say_what_can_be_written_through_them(catalog: Catalog):
    def writes(name: str) -> tuple[bool, bool, bool]:
        found = relation(catalog, name)
        return (found.insertable, found.updatable, found.deletable)

    assert writes("product_listing") == (True, True, True)
    assert writes("order_totals") == (False, False, False)
    assert writes("category_sales") == (False, False, False)
    assert writes("products") == (True, True, True)
    assert relation(catalog, "product_listing").comment == "Products shown to everyone."
    assert [c.name for c in relation(catalog, "product_listing").columns] == [
        "id", "sku", "name", "price", "category_id",
    ]  # fmt: skip


# --- types ---------------------------------------------------------------------------------------------------------


def test_enums_domains_composites_and_ranges(catalog: Catalog):
    def named(name: str) -> PgType:
        return catalog.type(type_oid(catalog, name))

    assert named("order_status") == PgType(
        named("order_status").oid, "app_public", "order_status", "app_public.order_status", TypeKind.ENUM, "E",
        enum_labels=("pending", "paid", "shipped", "cancelled"), comment="Where an order is in its life.",
    )  # fmt: skip
    assert named("age_rating").enum_labels == ("all-ages", "PG-13", "16+", "adults only")
    assert named("email") == PgType(
        named("email").oid, "app_public", "email", "app_public.email", TypeKind.DOMAIN, "S", base_oid=VARCHAR,
        base_typmod=324, comment="An e-mail address.",
        domain_checks=(DomainCheck("email_check",
                                   "CHECK (((VALUE)::text ~ '^[^@[:space:]]+@[^@[:space:]]+$'::text))"),),
    )  # fmt: skip
    assert named("money_amount") == PgType(
        named("money_amount").oid, "app_public", "money_amount", "app_public.money_amount", TypeKind.DOMAIN, "N",
        base_oid=NUMERIC, base_typmod=655366, domain_not_null=True,
        domain_checks=(DomainCheck("money_amount_not_negative", "CHECK ((VALUE >= (0)::numeric))"),),
    )  # fmt: skip
    assert named("postal_address") == PgType(
        named("postal_address").oid, "app_public", "postal_address", "app_public.postal_address",
        TypeKind.COMPOSITE, "C", comment="An address as printed on a parcel.",
        attributes=(Attribute("street", 1, TEXT, False), Attribute("city", 2, TEXT, False),
                    Attribute("postcode", 3, VARCHAR, False), Attribute("country", 4, BPCHAR, False)),
    )  # fmt: skip
    assert named("price_range") == PgType(
        named("price_range").oid, "app_public", "price_range", "app_public.price_range", TypeKind.RANGE, "R",
        range_subtype_oid=NUMERIC,
    )  # fmt: skip
    assert named("price_multirange").multirange_range_oid == named("price_range").oid
    assert named("_order_status") == PgType(
        named("_order_status").oid, "app_public", "_order_status", "app_public.order_status[]", TypeKind.BASE, "A",
        element_oid=named("order_status").oid,
    )  # fmt: skip
    # Built-in types the schema uses are read too, with what they refer to.
    assert catalog.type(4535).multirange_range_oid == 3912  # datemultirange -> daterange
    assert (catalog.type(3912).kind, catalog.type(3912).range_subtype_oid) == (TypeKind.RANGE, 1082)
    assert catalog.type(1009) == PgType(1009, "pg_catalog", "_text", "text[]", TypeKind.BASE, "A", element_oid=TEXT,
                                        comment=catalog.type(1009).comment)  # fmt: skip


def test_every_type_the_facts_mention_resolves(catalog: Catalog):
    mentioned = {c.type_oid for r in catalog.relations for c in r.columns}
    mentioned |= {a.type_oid for f in catalog.functions for a in f.arguments}
    mentioned |= {f.return_type_oid for f in catalog.functions}
    for pg_type in catalog.types.values():
        mentioned |= {a.type_oid for a in pg_type.attributes}
        mentioned |= {
            oid
            for oid in (pg_type.element_oid, pg_type.base_oid, pg_type.range_subtype_oid, pg_type.multirange_range_oid)
            if oid is not None
        }
    assert mentioned - catalog.types.keys() == set()
    assert {RECORD, VOID, UUID, TIMESTAMPTZ} <= catalog.types.keys()


# --- functions -----------------------------------------------------------------------------------------------------


def test_functions_with_their_arguments_results_and_grants(catalog: Catalog):
    functions = {(f.schema, f.name): f for f in catalog.functions}
    # Range constructors belong to the range type, not to the API.
    assert set(functions) == {("app_public", name) for name in (
        "add_tax", "archive_orders", "current_customer", "normalize_email", "place_order", "product_stats",
        "products_by_skus", "products_display_price", "search_products", "slugify", "top_products", "touch_customer",
    )} | {("app_private", "hash_password")}  # fmt: skip
    everyone = {catalog.current_user: True, "svc_catalog_shopper": True, "svc_catalog_visitor": True}
    products, customers, orders = (type_oid(catalog, name) for name in ("products", "customers", "orders"))

    def arg(name, oid, mode=ArgumentMode.IN, default=None):
        return Argument(name, oid, mode, has_default=default is not None, default=default)

    computed = functions["app_public", "products_display_price"]
    assert computed == computed.__class__(
        computed.oid, "app_public", "products_display_price", "The price as shown on a label.", Volatility.STABLE,
        strict=False, security_definer=False, returns_set=False, return_type_oid=TEXT,
        arguments=(arg("product", products), arg("currency", TEXT, default="'EUR'::text")), language="sql",
        executable=everyone,
    )  # fmt: skip
    place_order = functions["app_public", "place_order"]
    assert (place_order.volatility, place_order.security_definer, place_order.return_type_oid) == (
        Volatility.VOLATILE, True, orders,
    )  # fmt: skip
    assert place_order.comment == "Check out: one order with its lines."
    assert place_order.language == "plpgsql"
    assert place_order.executable == {**everyone, "svc_catalog_visitor": False}

    def shape(name: str) -> tuple:
        f = functions["app_public", name]
        return (f.volatility, f.strict, f.returns_set, f.return_type_oid, f.arguments, f.kind)

    assert shape("search_products") == (Volatility.STABLE, False, True, products, (arg("query", TEXT),), "f")
    assert shape("current_customer") == (Volatility.STABLE, False, False, customers, (), "f")
    assert shape("slugify") == (Volatility.IMMUTABLE, True, False, TEXT, (arg("value", TEXT),), "f")
    assert shape("product_stats") == (Volatility.STABLE, False, False, RECORD, (
        arg("product_id", UUID), arg("review_count", INT8, ArgumentMode.OUT),
        arg("average_rating", NUMERIC, ArgumentMode.OUT),
    ), "f")  # fmt: skip
    assert shape("top_products") == (Volatility.STABLE, False, True, RECORD, (
        arg("limit_count", INT4, default="10"), arg("product_id", UUID, ArgumentMode.TABLE),
        arg("name", TEXT, ArgumentMode.TABLE), arg("units_sold", INT8, ArgumentMode.TABLE),
    ), "f")  # fmt: skip
    assert shape("products_by_skus") == (Volatility.STABLE, False, True, products,
                                         (arg("skus", 1009, ArgumentMode.VARIADIC),), "f")  # fmt: skip
    assert shape("normalize_email") == (Volatility.IMMUTABLE, False, False, TEXT,
                                        (arg("address", TEXT, ArgumentMode.INOUT),), "f")  # fmt: skip
    assert shape("touch_customer") == (Volatility.VOLATILE, False, False, VOID, (arg("customer_id", INT4),), "f")
    assert shape("add_tax") == (Volatility.IMMUTABLE, False, False, NUMERIC,
                                (arg(None, NUMERIC), arg(None, NUMERIC)), "f")  # fmt: skip
    assert shape("archive_orders") == (Volatility.VOLATILE, False, False, VOID,
                                       (arg("placed_before", TIMESTAMPTZ),), "p")  # fmt: skip
    assert functions["app_public", "top_products"].output_columns == (
        arg("product_id", UUID, ArgumentMode.TABLE), arg("name", TEXT, ArgumentMode.TABLE),
        arg("units_sold", INT8, ArgumentMode.TABLE),
    )  # fmt: skip


# --- through the snapshot ------------------------------------------------------------------------------------------


async def test_the_snapshot_reads_privileges_for_the_configured_roles(tmp_path, database_url: str):
    loaded = configure(tmp_path, {
        "database": {"schemas": SCHEMAS},
        "auth": {"roles": {"authenticated": "svc_catalog_shopper", "anonymous": "svc_catalog_visitor"}},
    }, database_url=database_url)  # fmt: skip
    async with open_pool(database_url, ConnectionSettings(schemas=tuple(SCHEMAS)), size=1) as pool:
        snapshot = await build_snapshot(Executor(pool), loaded.config)
    catalog = snapshot.catalog
    assert catalog.roles == (catalog.current_user, "svc_catalog_shopper", "svc_catalog_visitor")
    assert relation(catalog, "orders").privileges["svc_catalog_shopper"] == frozenset({"SELECT", "INSERT", "UPDATE"})
    # With the schemas on the search path, types are still named with their schema.
    assert column(relation(catalog, "customers"), "email").type == "app_public.email"
