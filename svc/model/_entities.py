"""The API model: every name, type, relation and error code both APIs are generated from (layer 3).

Built once per snapshot from the catalog facts and the configuration (`build_model`). The GraphQL schema, the
OpenAPI document, the planners and the compiler read these values; none of them derives a name of its own.
Database names (`schema`, `table`, `column`) travel with every API name, so the compiler never looks names up.
"""

import enum
import functools
from collections.abc import Mapping

import attrs

from svc.catalog import Bounds, ForeignKeyAction, RelationKind

from ._naming import pascal


class Scalar(enum.Enum):
    """The GraphQL scalars values map to (SPEC "Scalars and value mapping")."""

    INT = "Int"
    BIG_INT = "BigInt"  # int8: a JSON string
    FLOAT = "Float"
    DECIMAL = "Decimal"  # numeric: a JSON string
    BOOLEAN = "Boolean"
    STRING = "String"
    UUID = "UUID"
    DATETIME = "Datetime"
    DATE = "Date"
    TIME = "Time"
    INTERVAL = "Interval"
    JSON = "JSON"


#: The members of an aggregates object (SPEC "Aggregates"), each with a type of its own per entity.
AGGREGATE_MEMBERS = (
    "sum",
    "avg",
    "min",
    "max",
    "distinctCount",
    "stddevSample",
    "stddevPopulation",
    "varianceSample",
    "variancePopulation",
    "median",
    "percentile",
)


class ValueKind(enum.Enum):
    SCALAR = "scalar"
    ENUM = "enum"
    COMPOSITE = "composite"
    RANGE = "range"
    LIST = "list"


@attrs.frozen
class ValueType:
    """The API type of a value (a column, argument, attribute or function result) and its SQL type.

    `name` is the scalar, enum, composite or range type's GraphQL name (for a list, its item's); `sql_type` is what
    a bound parameter is cast to (`integer`, `public.mpaa_rating`, `text[]`).
    """

    kind: ValueKind
    name: str
    sql_type: str
    item: "ValueType | None" = None
    item_nullable: bool = True

    @functools.cached_property
    def scalar(self) -> Scalar | None:
        return Scalar(self.name) if self.kind is ValueKind.SCALAR else None

    @property
    def sql_name(self) -> str:
        """The SQL type's own name, without its schema or quotes (`ltree` for `public.ltree`)."""
        return self.sql_type.rsplit(".", 1)[-1].strip('"')


@attrs.frozen
class Deprecation:
    reason: str


@attrs.frozen
class JsonSchemaCheck:
    """The JSON Schema a json or jsonb column's values must match (a CHECK calling pg_jsonschema's schema-match
    function with a literal schema, on the column or on its domain; SPEC "Extension integrations")."""

    schema: str  # the schema's JSON text, as written
    #: Its OpenAPI component's name where it is one: `Json.<Domain>` (a domain's schema, always a component) or
    #: `Json.<table>.<column>` (a column's, when it refers to itself).
    component: str
    #: The table CHECK's name; None when the domain holds the schema.
    constraint: str | None = None
    #: Whether the domain holds it.
    domain: bool = False


@attrs.frozen
class Field:
    """A column exposed as a field of its entity's type."""

    name: str  # API name, camelCase
    column: str
    type: ValueType
    nullable: bool  # as read
    description: str | None = None
    deprecation: Deprecation | None = None
    #: May be set by a create (`Create<Type>Input`) / an update (`Update<Type>Input`). Generated and identity-always
    #: columns are never written; under `rbac`, only the columns the role may INSERT / UPDATE are (`prune_model`).
    insertable: bool = True
    updatable: bool = True
    #: A create may leave it out (nullable, default, identity or generated).
    optional_on_create: bool = True
    max_length: int | None = None  # varchar(n)/char(n)
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    bounds: Bounds | None = None
    json_schema: JsonSchemaCheck | None = None
    #: Orderable and comparable with <, > (not json, not composite, not arrays of those).
    orderable: bool = True
    #: The name in REST rows and parameters (SPEC "Naming": the primary key appears under the key column's name):
    #: the field's name, but `id` where GraphQL calls the key `rowId` (there `id` is the global ID).
    rest_name: str = attrs.field(default=attrs.Factory(lambda self: self.name, takes_self=True))


class Cardinality(enum.Enum):
    TO_ONE = "to_one"
    TO_MANY = "to_many"
    MANY_TO_MANY = "many_to_many"


@attrs.frozen
class EntityRef:
    schema: str
    table: str


@attrs.frozen
class Relation:
    """A relation field: to-one (this row holds the key), to-many (children hold it) or many-to-many (through a
    junction table's two foreign keys).

    `pairs` match this entity's columns with the target's: for to-one, (foreign key column, referenced column); for
    to-many, (referenced column here, foreign key column of the child); for many-to-many, (this entity's column,
    the junction's column) in `pairs` and (the junction's column, the target's column) in `junction_pairs`.
    """

    name: str
    kind: Cardinality
    target: EntityRef
    pairs: tuple[tuple[str, str], ...]
    foreign_key: str  # the constraint (for many-to-many: the junction's key towards the target)
    #: To-one on the row holding the key (else a reverse relation or many-to-many).
    holds_key: bool = False
    nullable: bool = True  # to-one: the row may have none
    junction: EntityRef | None = None
    junction_pairs: tuple[tuple[str, str], ...] = ()
    junction_foreign_key: str | None = None  # many-to-many: the junction's key towards this entity
    on_delete: ForeignKeyAction = ForeignKeyAction.NO_ACTION
    description: str | None = None
    deprecation: Deprecation | None = None
    #: `batch: true` on a virtual key to a remote table: children of a page of parents in one remote query.
    batch: bool = False
    #: Offered in `Create<Type>Input` / `Update<Type>Input` (nested writes). Always, but under `rbac`, where the role
    #: must be able to write the columns the relation's writes set (`prune_model`).
    insertable: bool = True
    updatable: bool = True
    #: A period foreign key (PostgreSQL 18 `FOREIGN KEY (x, PERIOD valid_at) REFERENCES t (id, PERIOD valid_at)`):
    #: (this entity's period column, the target's); `pairs` leave them out. Across it, a to-one relation reaches
    #: the target's version valid at one instant (SPEC "List query parameters": `asOf`).
    period: tuple[str, str] | None = None


@attrs.frozen
class TemporalKey:
    """PostgreSQL 18's temporal key (`PRIMARY KEY (id, valid_at WITHOUT OVERLAPS)`): `columns` name a thing, and
    the versions of one thing have periods (`period`, a range or multirange column) that do not overlap. A read
    `asOf` an instant keeps the versions whose period contains it (`instant_type`: the period's element type, what
    the instant is cast to). `history` names the field listing a row's versions in order (None when the name is
    taken by a column, relation or computed field)."""

    columns: tuple[str, ...]
    period: str
    instant_type: str
    history: str | None = "history"


@attrs.frozen
class Arc:
    """An exclusive arc (SPEC "Embedding controls": `target`): nullable foreign keys of which a CHECK says exactly one
    is set (`num_nonnulls(a_id, b_id) = 1` and its equivalent forms), each the sole column of a single-column
    foreign key. Its field is the row the set key points at, of one of the targets' types: a GraphQL union
    `type_name`, a REST object with `__typename`; creating a row connects it by type through `input_name`.

    `relations` are the to-one relations of the keys (the ordinary per-key fields, which stay), in the CHECK's order.
    """

    name: str  # `target`
    type_name: str  # `CommentTarget`
    input_name: str  # `CommentTargetInput`
    relations: tuple[str, ...]
    check: str  # the CHECK constraint's name

    @property
    def connect_name(self) -> str:
        """The input naming the row to connect by its type: `CommentTargetConnectInput`."""
        return f"{self.type_name}ConnectInput"


@attrs.frozen
class Hierarchy:
    """`ancestors`/`descendants` over a self-referencing foreign key (prefixed with the relation's name when the
    table has more than one), or `<field>Ancestors`/`<field>Descendants` over an ltree path column (`path`: rows
    whose path is above or below the row's own)."""

    ancestors: str
    descendants: str
    pairs: tuple[tuple[str, str], ...]  # (child's foreign key column, parent's key column); () for a path
    foreign_key: str | None  # None for a path
    path: str | None = None  # the ltree column

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the walk reads."""
        return (self.path,) if self.path is not None else tuple(c for pair in self.pairs for c in pair)


@attrs.frozen
class Argument:
    name: str  # API name
    sql_name: str | None  # the function's argument name (None when unnamed: passed by position)
    type: ValueType
    required: bool  # no default; (non-null in the API only when the function is strict or it has no default)
    position: int  # among the function's input arguments, from 0


class ReturnKind(enum.Enum):
    ROWS = "rows"  # set of a table's rows: a connection at the root, a list elsewhere
    ROW = "row"  # one row of a table (or null)
    SCALAR = "scalar"
    SCALARS = "scalars"  # set of scalars: a list
    RECORD = "record"  # OUT/TABLE columns: an object type of its own
    RECORDS = "records"
    VOID = "void"


@attrs.frozen
class RecordType:
    """The object type of a function's OUT/TABLE columns."""

    name: str
    fields: tuple[Field, ...]


@attrs.frozen
class Returns:
    kind: ReturnKind
    entity: EntityRef | None = None  # ROWS, ROW
    type: ValueType | None = None  # SCALAR, SCALARS
    record: RecordType | None = None  # RECORD, RECORDS


@attrs.frozen
class ComputedField:
    """A function whose first argument is this entity's row: a field with the function's other arguments."""

    name: str
    schema: str
    function: str
    arguments: tuple[Argument, ...]  # without the row argument
    returns: Returns
    description: str | None = None
    deprecation: Deprecation | None = None
    #: Mounted functions (`functions.<name>.mount`): arguments filled from this row's columns, API name -> column.
    from_columns: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class RootFunction:
    """A STABLE/IMMUTABLE function served as a query root field, or a VOLATILE one as a mutation."""

    name: str
    schema: str
    function: str
    arguments: tuple[Argument, ...]
    returns: Returns
    mutation: bool
    strict: bool
    description: str | None = None
    deprecation: Deprecation | None = None


@attrs.frozen
class Lookup:
    """A lookup by a whole unique key: `person(id:)` for the primary key, `personByUsername(username:)` else."""

    name: str
    columns: tuple[str, ...]
    primary: bool
    constraint: str


class ErrorKind(enum.Enum):
    UNIQUE = "unique"
    FOREIGN_KEY = "foreign_key"  # the referenced row does not exist
    REFERENCED_BY = "referenced_by"  # a row referring here blocks a delete or re-key
    CHECK = "check"
    EXCLUSION = "exclusion"
    NOT_NULL = "not_null"
    DOMAIN_CHECK = "domain_check"
    STALE_VERSION = "stale_version"
    TOO_LONG = "too_long"
    OUT_OF_RANGE = "out_of_range"


@attrs.frozen
class ErrorCode:
    """One value of `<Type>ErrorCode`: the code, what raises it, and the fields it names (SPEC "Errors")."""

    code: str
    kind: ErrorKind
    constraint: str | None  # constraint or index name the database reports (None for checks before SQL)
    columns: tuple[str, ...]
    #: Other names the database may report for the same violation (partition constraints of a lifted key).
    aliases: tuple[str, ...] = ()


class Operation(enum.Enum):
    READ = "read"  # lookups, node
    LIST = "list"
    CONNECTION = "connection"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


@attrs.frozen
class RootNames:
    """Root field names of an entity (SPEC "Root fields per table")."""

    single: str  # person
    list: str  # people
    connection: str  # peopleConnection
    create: str  # createPerson
    create_many: str  # createPeople
    update: str  # updatePerson
    update_by_node_id: str  # updatePersonByNodeId
    update_many: str  # updatePeople
    delete: str  # deletePerson
    delete_by_node_id: str  # deletePersonByNodeId
    delete_many: str  # deletePeople


@attrs.frozen
class TypeNames:
    """Every GraphQL type name an entity's type gives rise to (SPEC "Resources and their fields").

    The one place these names are derived: the SDL builder uses them, and the model checks them for collisions.
    """

    type: str
    plural: str
    connection: str
    edge: str
    order_by: str
    condition: str
    filter: str
    to_many_filter: str
    aggregate_filter: str
    group_by: str
    having: str
    key_input: str
    create_input: str
    update_input: str
    error_code: str
    aggregates: str
    aggregates_group: str
    fuzzy_field: str
    vector_field: str
    full_text_field: str
    spatial_field: str
    bm25_field: str
    search_results: str
    search_hit: str
    create_payload: str
    create_many_payload: str
    update_payload: str
    update_many_payload: str
    delete_payload: str
    delete_many_payload: str
    on_conflict: str
    connect_or_create: str
    update_by_key: str
    to_one_input: str
    to_one_update_input: str
    to_many_input: str
    to_many_update_input: str
    many_to_many_input: str
    many_to_many_update_input: str

    @classmethod
    def of(cls, type_name: str, plural: str) -> "TypeNames":
        return cls(
            type=type_name,
            plural=plural,
            connection=f"{plural}Connection",
            edge=f"{plural}Edge",
            order_by=f"{type_name}OrderBy",
            condition=f"{type_name}Condition",
            filter=f"{type_name}Filter",
            to_many_filter=f"{type_name}ToManyFilter",
            aggregate_filter=f"{type_name}AggregateFilter",
            group_by=f"{type_name}GroupBy",
            having=f"{type_name}HavingInput",
            key_input=f"{type_name}KeyInput",
            create_input=f"Create{type_name}Input",
            update_input=f"Update{type_name}Input",
            error_code=f"{type_name}ErrorCode",
            aggregates=f"{type_name}Aggregates",
            aggregates_group=f"{type_name}AggregatesGroup",
            fuzzy_field=f"{type_name}FuzzyField",
            vector_field=f"{type_name}VectorField",
            full_text_field=f"{type_name}FullTextField",
            spatial_field=f"{type_name}SpatialField",
            bm25_field=f"{type_name}Bm25Field",
            search_results=f"{type_name}SearchResults",
            search_hit=f"{type_name}SearchHit",
            create_payload=f"Create{type_name}Payload",
            create_many_payload=f"Create{plural}Payload",
            update_payload=f"Update{type_name}Payload",
            update_many_payload=f"Update{plural}Payload",
            delete_payload=f"Delete{type_name}Payload",
            delete_many_payload=f"Delete{plural}Payload",
            on_conflict=f"{type_name}OnConflictInput",
            connect_or_create=f"{type_name}ConnectOrCreateInput",
            update_by_key=f"{type_name}UpdateByKeyInput",
            to_one_input=f"{type_name}ToOneInput",
            to_one_update_input=f"{type_name}ToOneUpdateInput",
            to_many_input=f"{type_name}ToManyInput",
            to_many_update_input=f"{type_name}ToManyUpdateInput",
            many_to_many_input=f"{type_name}ManyToManyInput",
            many_to_many_update_input=f"{type_name}ManyToManyUpdateInput",
        )

    def aggregate_member(self, member: str) -> str:
        """`<Type><Member>Aggregates`: one aggregate member's values by column (`FilmSumAggregates`)."""
        return f"{self.type}{member[:1].upper()}{member[1:]}Aggregates"

    def all(self) -> tuple[str, ...]:
        """Every name but the plural (which names no type of its own)."""
        names = tuple(value for key, value in attrs.asdict(self).items() if key != "plural")
        return names + tuple(self.aggregate_member(member) for member in AGGREGATE_MEMBERS)


class SearchMethod(enum.Enum):
    """A way to search an entity's rows (SPEC "Search fields"); each value is its REST method name."""

    FUZZY = "fuzzy"  # trigram word similarity
    FULL_TEXT = "full-text"  # a tsvector document against a text query
    SEMANTIC = "semantic"  # vector similarity
    HYBRID = "hybrid"  # a lexical and a vector ranking fused (no index of its own)
    NEAREST = "nearest"  # spatial distance (PostGIS)

    @property
    def root_suffix(self) -> str:
        """`FuzzySearch`, `FullTextSearch`... (root fields `<plural><suffix>`, REST operations `<suffix><plural>`)."""
        return f"{pascal(self.value)}Search"


class VectorSimilarity(enum.Enum):
    """How a vector index compares vectors: its operator class decides (`vector_cosine_ops`...)."""

    COSINE = "cosine"
    INNER_PRODUCT = "inner_product"
    L2 = "l2"


@attrs.frozen
class SearchField:
    """One document an index lets the API search: an indexed column (`column`), or an index expression over the
    row's columns (`expression`, the catalog's text, unqualified column names). `name` is its value in the field
    enums (`TITLE`; an expression: its columns' names joined), REST's `field` lower-cased."""

    method: SearchMethod
    name: str
    columns: tuple[str, ...]  # every column it reads (all exposed)
    column: str | None = None
    expression: str | None = None
    #: Full text: the text-search configuration (None: the database's default) and the SQL of the text the
    #: document is made of, over the row's columns (None: not known, no highlights).
    config: str | None = None
    source: str | None = None
    source_columns: tuple[str, ...] = ()
    #: Semantic: the operator class's similarity, the vector's dimensions (None: any) and its type (`vector`).
    similarity: VectorSimilarity | None = None
    dimensions: int | None = None
    sql_type: str | None = None
    #: Nearest: a geography (distances in metres), else a geometry of `srid` (None: not fixed by the type).
    geography: bool = False
    srid: int | None = None


@attrs.frozen
class EntitySearch:
    """The search methods an entity's indexes give, each with its documents (the first is the default)."""

    fields: tuple[SearchField, ...] = ()
    #: A single-column primary key and both a lexical and a vector method: hybrid search.
    hybrid: bool = False

    @classmethod
    def found(cls, fields: tuple[SearchField, ...], key: tuple[str, ...] | None) -> "EntitySearch":
        """The search of these documents on a table with this primary key."""
        search = cls(fields)
        both = search.lexical is not None and search.vector is not None
        return cls(fields, hybrid=key is not None and len(key) == 1 and both)

    @property
    def methods(self) -> tuple[SearchMethod, ...]:
        """In SDL order: fuzzy, full text, semantic, hybrid, nearest (those the entity has)."""
        return tuple(
            method
            for method in SearchMethod
            if (self.hybrid if method is SearchMethod.HYBRID else any(f.method is method for f in self.fields))
        )

    def of(self, method: SearchMethod) -> tuple[SearchField, ...]:
        return tuple(f for f in self.fields if f.method is method)

    @property
    def lexical(self) -> SearchField | None:
        """The document a text query searches when no field is named (hybrid, global): full text, else fuzzy."""
        return next(iter(self.of(SearchMethod.FULL_TEXT) or self.of(SearchMethod.FUZZY)), None)

    @property
    def vector(self) -> SearchField | None:
        return next(iter(self.of(SearchMethod.SEMANTIC)), None)


@attrs.frozen
class EntityEvents:
    """The change events of a table (SPEC "Events"): its webhooks are named `<name>.<operation>`."""

    #: The table's name, schema-qualified outside the first exposed schema (`people`, `audit.people`).
    name: str
    #: Of insert, update, delete, in that order.
    operations: tuple[str, ...]
    #: The webhook target (a key of `events.targets`).
    target: str
    description: str | None = None


@attrs.frozen
class Subtype:
    """A table-per-type subtype of an entity: a table whose whole primary key is a foreign key to the entity's whole
    primary key (one row of it at most per row of the entity; issue 23). Its rows are also rows of the entity."""

    target: EntityRef
    type_name: str  # Dog
    #: The entity's to-one relation field reaching the subtype's row (`dog`).
    relation: str
    pairs: tuple[tuple[str, str], ...]  # (the entity's key column, the subtype's key column)
    #: The subtype's fields a REST row of the entity carries (all but its key), each with its REST name there: the
    #: field's own REST name when no field of the entity or of another subtype takes it, else `<relation>.<name>`.
    columns: tuple[tuple[str, Field], ...]


@attrs.frozen
class Supertype:
    """The table a table-per-type subtype's rows are also rows of (see `Subtype`): creating a subtype row with any
    of the parent's columns creates the parent row too, through `relation`, the subtype's to-one relation to it."""

    target: EntityRef
    type_name: str  # Animal
    relation: str  # animalById
    #: The parent's insertable fields but its key, each with its name among the subtype's create input's members:
    #: its own name when the subtype has no member of that name, else `<parent><Name>` (`animalName`).
    columns: tuple[tuple[str, Field], ...]

    def column(self, name: str) -> Field | None:
        return next((field for member, field in self.columns if member == name), None)


@attrs.frozen
class Entity:
    """A table, view, materialized view or foreign table exposed as a type and a resource."""

    schema: str
    table: str
    kind: RelationKind
    type_name: str  # Person
    plural_name: str  # People
    roots: RootNames
    fields: tuple[Field, ...]
    primary_key: tuple[str, ...] | None  # columns (from the catalog, or `entities.<t>.primary_key`)
    lookups: tuple[Lookup, ...]
    relations: tuple[Relation, ...]
    hierarchies: tuple[Hierarchy, ...]
    computed: tuple[ComputedField, ...]
    operations: frozenset[Operation]
    error_codes: tuple[ErrorCode, ...]
    description: str | None = None
    deprecation: Deprecation | None = None
    version_column: str | None = None
    #: Columns compared by `<Type>Condition` and `<Type>Filter` (every exposed column).
    upsertable: bool = True  # foreign tables offer no upserts
    #: Operations the table allows but this API does not offer: omitted by `omit_operations`, or (rbac) not granted
    #: to the role. REST answers them 403, not 405 (SPEC "Errors" -> REST: "operation not permitted").
    withheld: frozenset[Operation] = frozenset()
    #: The system transaction id can serve as the row version (reading it needs SELECT on the whole table: a role
    #: with column grants only gets a null `rowVersion` unless `version_column` is set).
    system_version: bool = True
    #: Change events of the table (`entities.<table>.events`), None when it has none.
    events: EntityEvents | None = None
    #: Search methods from the table's indexes (SPEC "Search fields").
    search: EntitySearch = EntitySearch()
    #: PostgreSQL 18's temporal key, when the table has one (SPEC "List query parameters": `asOf`).
    temporal: TemporalKey | None = None
    #: Exclusive arcs over the table's foreign keys.
    arcs: tuple[Arc, ...] = ()
    #: Table-per-type subtypes of the table (direct ones; a subtype's own subtypes are its own).
    subtypes: tuple[Subtype, ...] = ()
    #: The GraphQL field naming the concrete type of a row (`typename`), when the entity has subtypes.
    typename_field: str | None = None
    #: The table the entity is a table-per-type subtype of.
    supertype: Supertype | None = None
    #: `COPY ... FROM` writes rows into it as INSERT does: a table (plain or partitioned) without rules (COPY
    #: ignores them) or row-level security (COPY refuses it). An import copies its rows in when it may.
    copy_inserts: bool = False

    def subtype_column(self, rest_name: str) -> tuple[Subtype, Field] | None:
        """The subtype field a REST row of the entity carries under this name (`barkVolume`, `dog.name`)."""
        return next(((s, f) for s in self.subtypes for name, f in s.columns if name == rest_name), None)

    @property
    def ref(self) -> EntityRef:
        return EntityRef(self.schema, self.table)

    @property
    def node(self) -> bool:
        """Implements Node: a single-column primary key and reads allowed (SPEC "Fields present on generated types")."""
        return self.primary_key is not None and len(self.primary_key) == 1 and Operation.READ in self.operations

    def field(self, name: str) -> Field | None:
        return self._fields_by_name.get(name)

    @functools.cached_property
    def _fields_by_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    def relation(self, name: str) -> Relation | None:
        return next((r for r in self.relations if r.name == name), None)

    def arc_relations(self, arc: Arc) -> tuple[Relation, ...]:
        """The arc's relations that the entity offers (`rbac` may have pruned some), in the arc's order."""
        return tuple(r for name in arc.relations if (r := self.relation(name)) is not None)

    def field_of_column(self, column: str) -> Field | None:
        return next((f for f in self.fields if f.column == column), None)

    def rest_field(self, name: str) -> Field | None:
        """The field a REST row, body or parameter names: by its REST name, else by its column's name."""
        return next((f for f in self.fields if f.rest_name == name), None) or self.field_of_column(name)

    def query_fields(self) -> tuple[str, ...]:
        """The Query root fields this entity offers (per its operations)."""
        names = [lookup.name for lookup in self.lookups] if Operation.READ in self.operations else []
        if Operation.READ in self.operations and self.as_of_lookup is not None:
            names.append(self.as_of_lookup)
        if Operation.LIST in self.operations:
            names.append(self.roots.list)
        if Operation.CONNECTION in self.operations:
            names.append(self.roots.connection)
        if Operation.LIST in self.operations:
            names += [self.search_root(method) for method in self.search.methods]
        return tuple(names)

    @property
    def as_of_lookup(self) -> str | None:
        """`<single>AsOf`: a temporal table's row by its key without the period, the version valid at an instant
        (None without a temporal key or a primary key lookup)."""
        primary = next((lookup for lookup in self.lookups if lookup.primary), None)
        return f"{primary.name}AsOf" if self.temporal is not None and primary is not None else None

    def search_root(self, method: SearchMethod) -> str:
        """`<plural>FuzzySearch`... (lower-camel plural, as the list field is by default)."""
        return f"{self.plural_name[:1].lower()}{self.plural_name[1:]}{method.root_suffix}"

    def mutation_fields(self) -> tuple[str, ...]:
        """The Mutation root fields this entity offers (per its operations and key)."""
        roots, names = self.roots, []
        if Operation.CREATE in self.operations:
            names += [roots.create, roots.create_many]
        if Operation.UPDATE in self.operations:
            names += [roots.update, roots.update_many] + ([roots.update_by_node_id] if self.node else [])
        if Operation.DELETE in self.operations:
            names += [roots.delete, roots.delete_many] + ([roots.delete_by_node_id] if self.node else [])
        return tuple(names)

    @functools.cached_property
    def names(self) -> TypeNames:
        return TypeNames.of(self.type_name, self.plural_name)


@attrs.frozen
class EnumType:
    """A GraphQL enum: a database enum, or a text column closed by a CHECK IN-list.

    `values` maps each database label to its GraphQL value, in the database's order.
    """

    name: str
    values: tuple[tuple[str, str], ...]
    sql_type: str
    description: str | None = None

    def graphql_value(self, label: str) -> str:
        return dict(self.values)[label]


@attrs.frozen
class CompositeType:
    """A composite type: an object type `<Name>` and an input type `<Name>Input`."""

    name: str
    input_name: str
    sql_type: str
    fields: tuple[Field, ...]
    description: str | None = None


@attrs.frozen
class RangeType:
    """A range type: `<Name>` with `start`/`end` bounds, and `<Name>Input`; `bound` is the subtype's API type."""

    name: str
    input_name: str
    sql_type: str
    bound: ValueType


@attrs.frozen
class Model:
    entities: tuple[Entity, ...]
    functions: tuple[RootFunction, ...]
    enums: tuple[EnumType, ...]
    composites: tuple[CompositeType, ...]
    ranges: tuple[RangeType, ...]
    records: tuple[RecordType, ...]
    #: Startup warnings (schema-prefixed names, ...), each naming what to set to silence it.
    warnings: tuple[str, ...] = ()
    _by_ref: Mapping[EntityRef, Entity] = attrs.field(factory=dict, repr=False, eq=False)
    _by_type: Mapping[str, Entity] = attrs.field(factory=dict, repr=False, eq=False)
    _enum_by_name: Mapping[str, EnumType] = attrs.field(factory=dict, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_ref", {entity.ref: entity for entity in self.entities})
        object.__setattr__(self, "_by_type", {entity.type_name: entity for entity in self.entities})
        object.__setattr__(self, "_enum_by_name", {enum.name: enum for enum in self.enums})

    def entity(self, ref: EntityRef) -> Entity:
        return self._by_ref[ref]

    def entity_named(self, type_name: str) -> Entity | None:
        return self._by_type.get(type_name)

    def arc_targets(self, entity: Entity, arc: Arc, *, update: bool) -> tuple[tuple[Relation, Entity], ...]:
        """The arc's relations, with their targets, that a create (`update`: an update) may connect through the arc's
        member: to a target with a key, through a relation the role may write, when the entity offers the write."""
        operation = Operation.UPDATE if update else Operation.CREATE
        if operation not in entity.operations:
            return ()
        return tuple(
            (relation, target)
            for relation in entity.arc_relations(arc)
            if (relation.updatable if update else relation.insertable)
            and ((target := self.entity(relation.target)).primary_key is not None or target.lookups)
        )

    def arc_input(self, entity: Entity, arc: Arc) -> tuple[tuple[Relation, Entity], ...]:
        """The targets the arc's input (`<Type><Arc>Input`) names: a create's, else an update's. An update takes the
        input only when it may connect each of them (`arc_connects`)."""
        return self.arc_targets(entity, arc, update=False) or self.arc_targets(entity, arc, update=True)

    def arc_connects(self, entity: Entity, arc: Arc, *, update: bool) -> bool:
        """Whether a create's (an update's) input has the arc's member."""
        targets = self.arc_targets(entity, arc, update=update)
        return bool(targets) and (not update or targets == self.arc_input(entity, arc))

    def enum(self, name: str) -> EnumType:
        return self._enum_by_name[name]
