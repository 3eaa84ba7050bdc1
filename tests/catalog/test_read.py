"""`read_catalog` without a database: a small document in the shape introspect.sql returns, written by hand, read
into whole facts (ARCHITECTURE.md: the catalog is testable from recorded JSON)."""

from typing import Any

from svc.catalog import (
    Argument,
    ArgumentMode,
    Bounds,
    Catalog,
    Check,
    Column,
    Exclusion,
    Extension,
    ForeignKey,
    ForeignKeyAction,
    Function,
    Index,
    IndexColumn,
    Key,
    PgType,
    Policy,
    Relation,
    RelationKind,
    TypeKind,
    Volatility,
    read_catalog,
)

INT4, TEXT, TSTZRANGE, VOID = 23, 25, 3910, 2278
BOOKINGS, BOOKINGS_TYPE, BOOKINGS_2026, TRGM_TYPE, TRGM_FUNCTION, FUNCTION = 1000, 1001, 1010, 2000, 2001, 3000
OWNER = {"owner": ["SELECT", "INSERT", "UPDATE", "DELETE"], "guest": ["SELECT"]}


def column(name: str, position: int, type_oid: int, **overrides: Any) -> dict[str, Any]:
    return {
        "name": name, "position": position, "type": {INT4: "integer", TEXT: "text", TSTZRANGE: "tstzrange"}[type_oid],
        "type_oid": type_oid, "not_null": False, "has_default": False, "identity": None, "generated": False,
        "comment": None, "default": None, "max_length": None, "numeric_precision": None, "numeric_scale": None,
        "privileges": None, **overrides,
    }  # fmt: skip


def index(name: str, columns: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    return {
        "name": name, "method": "btree", "unique": False, "primary": False, "constraint": None,
        "constraint_type": None, "nulls_not_distinct": False, "columns": columns, "predicate": None,
        "expression_columns": [], "predicate_columns": [], **overrides,
    }  # fmt: skip


def foreign_key(name: str, column: str, target: str) -> dict[str, Any]:
    return {
        "name": name, "columns": [column], "target_schema": "app", "target_name": target, "target_columns": ["id"],
        "on_delete": "a", "on_update": "a", "comment": None,
    }  # fmt: skip


DOCUMENT: dict[str, Any] = {
    "server_version_num": 150020,
    "current_user": "owner",
    "standard_conforming_strings": False,
    "roles": ["owner", "guest"],
    "schemas": ["app"],
    "schema_comments": {"app": "Rooms to book."},
    "settings": {"default_text_search_config": "pg_catalog.english", "pg_trgm.similarity_threshold": "0.3"},
    "extensions": [
        {"name": "plpgsql", "schema": "pg_catalog", "version": "1.0",
         "members": {"relations": [], "types": [], "functions": [4000]}},
        {"name": "pg_trgm", "schema": "app", "version": "1.6",
         "members": {"relations": [], "types": [TRGM_TYPE], "functions": [TRGM_FUNCTION]}},
    ],
    "relations": [{
        "oid": BOOKINGS, "schema": "app", "name": "bookings", "kind": "p", "comment": "Who has a room when.",
        "type_oid": BOOKINGS_TYPE,
        "columns": [
            column("id", 1, INT4, not_null=True, identity="a"),
            column("room", 2, TEXT, not_null=True, privileges={"owner": ["SELECT", "INSERT", "UPDATE"],
                                                               "guest": ["SELECT", "UPDATE"]}),
            column("during", 3, TSTZRANGE, comment="When."),
            column("guest_id", 4, INT4),
            column("code", 5, TEXT, has_default=True, default="'A-1'::text"),
        ],
        "indexes": [
            index("bookings_during_excl", [{"column": "during", "expression": None, "opclass": "range_ops",
                                            "descending": False}], method="gist"),
            index("bookings_pkey", [{"column": "id", "expression": None, "opclass": "int4_ops",
                                     "descending": False}],
                  unique=True, primary=True, constraint="bookings_pkey", constraint_type="p"),
            index("bookings_room_key", [{"column": None, "expression": "lower(room)", "opclass": "text_ops",
                                         "descending": True}],
                  unique=True, predicate="id > 0", expression_columns=["room"], predicate_columns=["id"]),
        ],
        "foreign_keys": [],
        "partition_foreign_keys": [
            foreign_key("bookings_2026_guest_id_fkey", "guest_id", "guests"),
            foreign_key("bookings_2026_room_fkey", "room", "rooms"),
            foreign_key("bookings_2027_guest_id_fkey", "guest_id", "guests"),
        ],
        "constraints": [
            {"name": "bookings_code_check", "type": "c", "columns": ["code"], "index_columns": None,
             "expression": r"CHECK ((code ~ '^[A-Z]-\\d$'::text))"},
            {"name": "bookings_during_excl", "type": "x", "columns": None, "index_columns": ["during"],
             "expression": "EXCLUDE USING gist (during WITH &&)"},
            {"name": "room_names", "type": "c", "columns": ["room"], "index_columns": None,
             "expression": "CHECK ((room = ANY (ARRAY['blue'::text, 'red'::text])))"},
        ],
        "rls_enabled": True, "rls_forced": False,
        "policies": [{"name": "own", "command": "ALL", "roles": ["guest"], "permissive": True,
                      "using": "guest_id = 1", "with_check": None}],
        "privileges": OWNER,
        "updatable": 28,
        "foreign_server": None, "foreign_data_wrapper": None, "text_search_triggers": [], "remote": None,
    }],
    "types": [
        {"oid": INT4, "schema": "pg_catalog", "name": "int4", "sql_name": "integer", "kind": "b", "category": "N",
         "element_oid": None, "base_oid": None, "base_typmod": -1, "domain_not_null": False, "domain_checks": None,
         "enum_labels": None, "attributes": None, "range_subtype_oid": None, "multirange_range_oid": None,
         "relation_oid": None, "comment": "-2 billion to 2 billion integer, 4-byte storage"},
        {"oid": TEXT, "schema": "pg_catalog", "name": "text", "sql_name": "text", "kind": "b", "category": "S",
         "element_oid": None, "base_oid": None, "base_typmod": -1, "domain_not_null": False, "domain_checks": None,
         "enum_labels": None, "attributes": None, "range_subtype_oid": None, "multirange_range_oid": None,
         "relation_oid": None, "comment": None},
        {"oid": TRGM_TYPE, "schema": "app", "name": "gtrgm", "sql_name": "app.gtrgm", "kind": "b", "category": "U",
         "element_oid": None, "base_oid": None, "base_typmod": -1, "domain_not_null": False, "domain_checks": None,
         "enum_labels": None, "attributes": None, "range_subtype_oid": None, "multirange_range_oid": None,
         "relation_oid": None, "comment": None},
        {"oid": TRGM_TYPE + 1, "schema": "app", "name": "_gtrgm", "sql_name": "app.gtrgm[]", "kind": "b",
         "category": "A", "element_oid": TRGM_TYPE, "base_oid": None, "base_typmod": -1, "domain_not_null": False,
         "domain_checks": None, "enum_labels": None, "attributes": None, "range_subtype_oid": None,
         "multirange_range_oid": None, "relation_oid": None, "comment": None},
    ],
    "functions": [
        {"oid": FUNCTION, "schema": "app", "name": "book", "comment": "Book a room.", "volatility": "v",
         "strict": False, "security_definer": True, "returns_set": False, "return_type_oid": VOID, "defaults": 1,
         "arguments": [
             {"name": "room", "type_oid": TEXT, "mode": "i", "default": None},
             {"name": "nights", "type_oid": INT4, "mode": "i", "default": "1"},
             {"name": None, "type_oid": INT4, "mode": "o", "default": None},
         ],
         "language": "plpgsql", "executable": {"owner": True, "guest": False}, "kind": "f"},
        {"oid": TRGM_FUNCTION, "schema": "app", "name": "similarity", "comment": None, "volatility": "i",
         "strict": True, "security_definer": False, "returns_set": False, "return_type_oid": 700, "defaults": 0,
         "arguments": [{"name": None, "type_oid": TEXT, "mode": "i", "default": None},
                       {"name": None, "type_oid": TEXT, "mode": "i", "default": None}],
         "language": "c", "executable": {"owner": True, "guest": True}, "kind": "f"},
    ],
}  # fmt: skip


def test_a_recorded_document_reads_into_facts():
    catalog = read_catalog(DOCUMENT)
    assert catalog == Catalog(
        server_version_num=150020,
        schemas=("app",),
        relations=(BOOKINGS_RELATION,),
        types={
            INT4: PgType(INT4, "pg_catalog", "int4", "integer", TypeKind.BASE, "N",
                         comment="-2 billion to 2 billion integer, 4-byte storage"),
            TEXT: PgType(TEXT, "pg_catalog", "text", "text", TypeKind.BASE, "S"),
            TRGM_TYPE: PgType(TRGM_TYPE, "app", "gtrgm", "app.gtrgm", TypeKind.BASE, "U", extension="pg_trgm"),
            # An array type belongs to its element's extension.
            TRGM_TYPE + 1: PgType(TRGM_TYPE + 1, "app", "_gtrgm", "app.gtrgm[]", TypeKind.BASE, "A",
                                  element_oid=TRGM_TYPE, extension="pg_trgm"),
        },
        functions=(
            Function(FUNCTION, "app", "book", "Book a room.", Volatility.VOLATILE, strict=False,
                     security_definer=True, returns_set=False, return_type_oid=VOID, language="plpgsql",
                     executable={"owner": True, "guest": False},
                     # The last input argument has the default: the OUT argument after it does not count.
                     arguments=(Argument("room", TEXT, ArgumentMode.IN, has_default=False),
                                Argument("nights", INT4, ArgumentMode.IN, has_default=True, default="1"),
                                Argument(None, INT4, ArgumentMode.OUT, has_default=False))),
            Function(TRGM_FUNCTION, "app", "similarity", None, Volatility.IMMUTABLE, strict=True,
                     security_definer=False, returns_set=False, return_type_oid=700, language="c",
                     executable={"owner": True, "guest": True}, extension="pg_trgm",
                     arguments=(Argument(None, TEXT, ArgumentMode.IN, has_default=False),
                                Argument(None, TEXT, ArgumentMode.IN, has_default=False))),
        ),
        extensions=(Extension("plpgsql", "pg_catalog", "1.0"), Extension("pg_trgm", "app", "1.6")),
        roles=("owner", "guest"),
        current_user="owner",
        settings={"default_text_search_config": "pg_catalog.english", "pg_trgm.similarity_threshold": "0.3"},
        schema_comments={"app": "Rooms to book."},
    )  # fmt: skip


ALL = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})
COLUMNS_OF_OWNER = {"owner": frozenset({"SELECT", "INSERT", "UPDATE"}), "guest": frozenset({"SELECT"})}

BOOKINGS_RELATION = Relation(
    oid=BOOKINGS, schema="app", name="bookings", kind=RelationKind.PARTITIONED_TABLE, comment="Who has a room when.",
    type_oid=BOOKINGS_TYPE,
    columns=(
        Column("id", 1, "integer", INT4, True, False, "a", False, None, privileges=COLUMNS_OF_OWNER),
        # A column with grants of its own keeps them; the others have their table's column privileges.
        Column("room", 2, "text", TEXT, True, False, None, False, None,
               privileges={**COLUMNS_OF_OWNER, "guest": frozenset({"SELECT", "UPDATE"})}),
        Column("during", 3, "tstzrange", TSTZRANGE, False, False, None, False, "When.", privileges=COLUMNS_OF_OWNER),
        Column("guest_id", 4, "integer", INT4, False, False, None, False, None, privileges=COLUMNS_OF_OWNER),
        Column("code", 5, "text", TEXT, False, True, None, False, None, default="'A-1'::text",
               privileges=COLUMNS_OF_OWNER),
    ),
    primary_key=Key("bookings_pkey", ("id",), is_primary=True),
    unique_keys=(Key("bookings_room_key", ("room",), is_constraint=False, predicate="id > 0",
                     expressions=("lower(room)",)),),
    # Lifted from the partitions: one per distinct key, named after the first, with every partition's name.
    foreign_keys=(
        ForeignKey("bookings_2026_guest_id_fkey", ("guest_id",), "app", "guests", ("id",),
                   ForeignKeyAction.NO_ACTION, ForeignKeyAction.NO_ACTION,
                   partition_constraints=("bookings_2026_guest_id_fkey", "bookings_2027_guest_id_fkey")),
        ForeignKey("bookings_2026_room_fkey", ("room",), "app", "rooms", ("id",),
                   partition_constraints=("bookings_2026_room_fkey",)),
    ),
    checks=(
        # standard_conforming_strings was off: the doubled backslash is read back as one.
        Check("bookings_code_check", ("code",), r"CHECK ((code ~ '^[A-Z]-\\d$'::text))", name_chosen=False,
              bounds=Bounds(pattern=r"^[A-Z]-\d$")),
        Check("room_names", ("room",), "CHECK ((room = ANY (ARRAY['blue'::text, 'red'::text])))",
              name_chosen=True, allowed_values=("blue", "red")),
    ),
    exclusions=(Exclusion("bookings_during_excl", ("during",), False, "EXCLUDE USING gist (during WITH &&)"),),
    indexes=(
        Index("bookings_during_excl", "gist", (IndexColumn("during", None, "range_ops"),), False, False,
              referenced_columns=("during",)),
        Index("bookings_pkey", "btree", (IndexColumn("id", None, "int4_ops"),), True, True,
              referenced_columns=("id",)),
        Index("bookings_room_key", "btree", (IndexColumn(None, "lower(room)", "text_ops", descending=True),), True,
              False, predicate="id > 0", referenced_columns=("room", "id")),
    ),
    rls_enabled=True,
    policies=(Policy("own", "ALL", ("guest",), True, "guest_id = 1", None),),
    privileges={"owner": ALL, "guest": frozenset({"SELECT"})},
)  # fmt: skip


def test_a_view_reads_what_can_be_written_through_it_from_a_bit_mask():
    view = {**DOCUMENT["relations"][0], "kind": "v", "updatable": 4 | 16, "partition_foreign_keys": []}
    catalog = read_catalog({**DOCUMENT, "relations": [view]})
    read = catalog.relations[0]
    assert (read.kind, read.insertable, read.updatable, read.deletable) == (RelationKind.VIEW, False, True, True)


def test_a_foreign_key_declared_on_the_table_is_not_lifted_again_from_its_partitions():
    declared = foreign_key("bookings_guest_id_fkey", "guest_id", "guests")
    relation = {**DOCUMENT["relations"][0], "foreign_keys": [declared]}
    catalog = read_catalog({**DOCUMENT, "relations": [relation]})
    assert [(k.name, k.partition_constraints) for k in catalog.relations[0].foreign_keys] == [
        ("bookings_2026_room_fkey", ("bookings_2026_room_fkey",)),
        ("bookings_guest_id_fkey", ()),
    ]
