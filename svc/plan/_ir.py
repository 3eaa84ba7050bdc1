"""The operation plan: what to read, in what order, in which pages, shaped into which JSON (layer 4).

Both front ends build these values and the compiler (`svc/sql/`) turns them into one SQL statement; nothing here
knows GraphQL or HTTP. Database names travel in the plan (tables, columns, functions); API names appear only as the
JSON keys the response uses. Every value a client gave is a `Param`: the planner numbers them in walk order, so two
requests of the same shape give equal plans up to their parameters, and the compiled SQL is cached by that shape.
"""

import enum
from collections.abc import Sequence

import attrs

# --- values ------------------------------------------------------------------------------------------------------


@attrs.frozen
class Param:
    """A value bound as a statement parameter, cast to `sql_type` (`integer`, `text[]`, `public.mpaa_rating`)."""

    index: int
    sql_type: str


# --- what a row is read from, and how rows hang from their parent ------------------------------------------------


@attrs.frozen
class Table:
    schema: str
    name: str


@attrs.frozen
class FunctionCall:
    """Rows or a value from a function: `schema.name(args)`; with `row_argument`, the parent row goes first."""

    schema: str
    name: str
    arguments: tuple["Argument", ...] = ()
    row_argument: bool = False


@attrs.frozen
class JsonRows:
    """Rows given as a JSON array parameter, typed by a table's row type: rows as they were before a write (or as
    they were deleted), read again with their relations as they are now."""

    table: Table
    rows: "Param"


@attrs.frozen
class Argument:
    """One argument of a call: by name (`name => value`) or by position when the argument has no name."""

    name: str | None
    value: "Param | ColumnRef"


@attrs.frozen
class Link:
    """Child rows whose `pairs[i][1]` equals the parent row's `pairs[i][0]` (to-one and to-many relations)."""

    pairs: tuple[tuple[str, str], ...]


@attrs.frozen
class JunctionLink:
    """Rows of the target reached through junction rows: parent.p = junction.j (`parent_pairs`), then
    junction.j2 = target.t (`target_pairs`)."""

    junction: Table
    parent_pairs: tuple[tuple[str, str], ...]
    target_pairs: tuple[tuple[str, str], ...]


# --- expressions over the current row ----------------------------------------------------------------------------


@attrs.frozen
class ColumnRef:
    column: str


@attrs.frozen
class ComputedRef:
    """A scalar function of the row: `schema.function(row, arguments...)`."""

    call: FunctionCall


@attrs.frozen
class RelatedColumn:
    """A column of the row a to-one link reaches (NULL when there is none): for ordering and comparing."""

    table: Table
    link: Link
    column: str


@attrs.frozen
class RelatedCount:
    """How many rows a to-many link reaches."""

    table: Table
    link: "Link | JunctionLink"


@attrs.frozen
class KeyPosition:
    """Where the row's key stands in `keys`, a JSON array of key objects (`[{"id": 5}, ...]`, read as rows of
    `table`), from 1: rows a write touched are read back in the order written."""

    table: Table
    columns: tuple[str, ...]
    keys: "Param"


@attrs.frozen
class RelatedAggregate:
    """An aggregate (`sum`, `avg`, `min`, `max`) of a column over the rows a to-many link reaches, as float8."""

    table: Table
    link: "Link | JunctionLink"
    function: str
    column: str


@attrs.frozen
class Cast:
    """An expression read as another type (`json` compared as `jsonb`)."""

    expression: "Expression"
    sql_type: str


@attrs.frozen
class AggregateRef:
    """An aggregate of the rows of a group, where a group's condition (`having`) compares it."""

    aggregate: "Aggregate"


Expression = (
    ColumnRef | ComputedRef | RelatedColumn | RelatedCount | RelatedAggregate | KeyPosition | Cast | AggregateRef
)


# --- filters -----------------------------------------------------------------------------------------------------


class Operator(enum.Enum):
    """Comparisons the compiler knows; each names its SQL form in `svc/sql/_filters.py`."""

    EQ = "eq"
    NEQ = "neq"
    DISTINCT = "distinct"
    NOT_DISTINCT = "not_distinct"
    IN = "in"
    NOT_IN = "not_in"
    LT = "lt"
    LTE = "lte"
    GT = "gt"
    GTE = "gte"
    LT_ANY = "lt_any"
    LT_ALL = "lt_all"
    LTE_ANY = "lte_any"
    LTE_ALL = "lte_all"
    GT_ANY = "gt_any"
    GT_ALL = "gt_all"
    GTE_ANY = "gte_any"
    GTE_ALL = "gte_all"
    LIKE = "like"
    NOT_LIKE = "not_like"
    ILIKE = "ilike"
    NOT_ILIKE = "not_ilike"
    LIKE_ANY = "like_any"
    LIKE_ALL = "like_all"
    ILIKE_ANY = "ilike_any"
    ILIKE_ALL = "ilike_all"
    REGEX = "regex"
    NOT_REGEX = "not_regex"
    IREGEX = "iregex"
    NOT_IREGEX = "not_iregex"
    EQ_INSENSITIVE = "eq_insensitive"
    NEQ_INSENSITIVE = "neq_insensitive"
    IN_INSENSITIVE = "in_insensitive"
    NOT_IN_INSENSITIVE = "not_in_insensitive"
    CONTAINS = "contains"  # @> (arrays, ranges, JSON)
    CONTAINED_BY = "contained_by"  # <@
    OVERLAPS = "overlaps"  # &&
    CONTAINS_ELEMENT = "contains_element"  # range @> element
    STRICTLY_LEFT = "strictly_left"  # <<
    STRICTLY_RIGHT = "strictly_right"  # >>
    NOT_EXTENDS_LEFT = "not_extends_left"  # &>
    NOT_EXTENDS_RIGHT = "not_extends_right"  # &<
    ADJACENT = "adjacent"  # -|-
    HAS_KEY = "has_key"  # ?
    HAS_ANY_KEYS = "has_any_keys"  # ?|
    HAS_ALL_KEYS = "has_all_keys"  # ?&
    MATCHES_PATH = "matches_path"  # @@
    EXISTS_PATH = "exists_path"  # @?
    ANY_EQ = "any_eq"  # value = any(array column)
    ANY_NEQ = "any_neq"
    ANY_LT = "any_lt"
    ANY_LTE = "any_lte"
    ANY_GT = "any_gt"
    ANY_GTE = "any_gte"
    LQUERY = "lquery"  # ltree ~ lquery
    LTXTQUERY = "ltxtquery"  # ltree @ ltxtquery
    TEXT_SEARCH = "text_search"  # tsvector @@ a web-search query
    INTERSECTS = "intersects"  # PostGIS, the operand a GeoJSON geometry
    SPATIAL_CONTAINS = "spatial_contains"
    WITHIN = "within"
    DISTANCE_WITHIN = "distance_within"  # the operand {near, distance}
    GEOGRAPHY_INTERSECTS = "geography_intersects"
    GEOGRAPHY_COVERS = "geography_covers"
    GEOGRAPHY_COVERED_BY = "geography_covered_by"
    GEOGRAPHY_DISTANCE_WITHIN = "geography_distance_within"


@attrs.frozen
class Compare:
    expression: Expression
    operator: Operator
    value: Param


@attrs.frozen
class IsNull:
    expression: Expression
    is_null: bool


@attrs.frozen
class And:
    items: tuple["Filter", ...]


@attrs.frozen
class Or:
    items: tuple["Filter", ...]


@attrs.frozen
class Not:
    item: "Filter"


class Quantifier(enum.Enum):
    SOME = "some"
    EVERY = "every"
    NONE = "none"


@attrs.frozen
class Related:
    """A condition on related rows: the to-one row matches (`quantifier` SOME), or some/every/no to-many row does.

    `EVERY` treats a NULL condition as not matching (SPEC "Filter and condition inputs").
    """

    table: Table
    link: Link | JunctionLink
    quantifier: Quantifier
    filter: "Filter | None"


@attrs.frozen
class KeyIn:
    """The row's key is one of `keys`, a JSON array of key objects read as rows of `table` (rows a write touched,
    found by their key's index)."""

    table: Table
    columns: tuple[str, ...]
    keys: Param


@attrs.frozen
class Constant:
    """A condition known while planning (an empty `in` list, say)."""

    value: bool


Filter = Compare | IsNull | And | Or | Not | Related | KeyIn | Constant


# --- order and pages ---------------------------------------------------------------------------------------------


@attrs.frozen
class OrderItem:
    expression: Expression
    descending: bool = False
    nulls_first: bool = False
    #: The expression can be NULL (nullable column, related column, computed value): keyset comparisons need care.
    nullable: bool = True


@attrs.frozen
class Page:
    """Which rows of the ordered set: `limit` rows after skipping `offset`; keyset bounds from cursors.

    `backward` reads from the end (`last` without `first`): the order is reversed for reading and restored for the
    answer. `after`/`before` hold one parameter per order item (the cursor's values).
    """

    limit: Param | None = None
    offset: Param | None = None
    backward: bool = False
    after: tuple[Param, ...] | None = None
    before: tuple[Param, ...] | None = None
    #: `first` and `last` together: the last `tail` rows of the first `limit` rows.
    tail: Param | None = None
    #: Cursors hold the rows' positions (offset plus number on the page), not order values: the order is not total.
    positions: bool = False


# --- the JSON a row becomes --------------------------------------------------------------------------------------


class ValueMap(enum.Enum):
    """How a database value becomes JSON."""

    AS_IS = "as_is"  # to_json's own form (numbers, strings, booleans, JSON, ISO dates)
    TEXT = "text"  # bigint and numeric as strings
    TEXT_ARRAY = "text_array"  # arrays of those as arrays of strings
    # AS_IS too, for values whose text a CSV cell can take without to_json's round trip or without quoting:
    STRING = "string"  # text and varchar: to_json's string of the value's own text (which a CSV cell may quote)
    NUMBER = "number"  # integer and float: to_json's number, the value's own text (never quoted in CSV)
    PLAIN = "plain"  # booleans, UUIDs, dates and times: to_json's text holds no comma, quote or edge space


@attrs.frozen
class EnumMap:
    """Database labels to GraphQL values, where any differs (`PG-13` -> `PG_13`); arrays of such enums too."""

    labels: tuple[tuple[str, str], ...]
    array: bool = False


@attrs.frozen
class RangeMap:
    """A range as `{start: {value, inclusive}, end: {...}}` (members by key), its bounds mapped by `bound`."""

    start: str | None
    end: str | None
    value_key: str | None
    inclusive_key: str | None
    bound: "ValueMap | EnumMap"
    array: bool = False  # a multirange: a list of ranges


@attrs.frozen
class CompositeMap:
    """A composite value as an object of its attributes (or NULL)."""

    outputs: tuple["AttributeOutput", ...]


@attrs.frozen
class AttributeOutput:
    key: str
    attribute: str
    map: "ValueMapping"


ValueMapping = ValueMap | EnumMap | RangeMap | CompositeMap


@attrs.frozen
class ColumnOutput:
    key: str
    column: str
    map: ValueMapping = ValueMap.AS_IS


@attrs.frozen
class ComputedOutput:
    key: str
    call: FunctionCall
    map: ValueMapping = ValueMap.AS_IS
    returns_set: bool = False  # a set of scalars: a JSON array


@attrs.frozen
class ConstantOutput:
    """A value known while planning: `__typename`, or null (a node ID that matches nothing)."""

    key: str
    value: str | None


@attrs.frozen
class SubtypeJoin:
    """A table-per-type subtype's table, joined to the rows of its parent by key (at most one row each)."""

    table: Table
    link: Link
    type_name: str


@attrs.frozen
class TypeNameOutput:
    """The concrete type of a table-per-type parent's row: the first subtype having a row for it, else the parent."""

    key: str
    type_name: str  # the parent's
    subtypes: tuple[SubtypeJoin, ...]


@attrs.frozen
class SubtypeColumnOutput:
    """A subtype's column on its parent's row: null when the row is not of that subtype."""

    key: str
    subtype: SubtypeJoin
    column: str
    map: "ValueMapping" = ValueMap.AS_IS


@attrs.frozen
class GlobalIdOutput:
    """`base64("<Type>:<key>")` of the row's single-column key (SPEC "Fields present on generated types")."""

    key: str
    type_name: str
    column: str


@attrs.frozen
class RowVersionOutput:
    """The row's version: `version_column`, else the system transaction id (`xmin`); None for relations without one."""

    key: str
    column: str | None
    system: bool


@attrs.frozen
class NestedOutput:
    key: str
    read: "Read"


@attrs.frozen
class ArcOutput:
    """An exclusive arc's row: the one of `reads` (each kind ONE, by a to-one link, its shape carrying `__typename`
    when asked) that finds a row; the CHECK lets at most one of their keys be set."""

    key: str
    reads: tuple["Read", ...]


@attrs.frozen
class CursorOutput:
    """The row's cursor in the read it belongs to (REST `cursors=true`: each row's `_cursor`)."""

    key: str


class WindowFunction(enum.Enum):
    """A value of a row computed over every row its read selects, in the read's order (SPEC "Connection objects":
    edge window values; REST `window=`, `running=`)."""

    ROW_NUMBER = "row_number"
    RANK = "rank"  # ranks compare the orderBy values only
    DENSE_RANK = "dense_rank"
    PERCENT_RANK = "percent_rank"
    RUNNING_SUM = "running_sum"  # of `column`, in the whole order


@attrs.frozen
class Window:
    """One window value: `function` over the rows of the row's partition (`partition` keys; none: every row), in
    the read's order; ranks compare its first `ranked` order items (the orderBy's own, not the key appended)."""

    function: WindowFunction
    partition: tuple["GroupKey", ...] = ()
    column: str | None = None
    ranked: int = 0


@attrs.frozen
class WindowOutput:
    """A window value under `key` (`window` set), or an object of such members (`runningSum { amount }`, REST's
    `_window`)."""

    key: str
    window: Window | None = None
    map: ValueMapping = ValueMap.AS_IS
    members: tuple["WindowOutput", ...] = ()


@attrs.frozen
class JsonPathOutput:
    """The first item a JSON path selects in a JSON column (REST `path[column]=<path>`), or null."""

    key: str
    column: str
    path: Param


Output = (
    ColumnOutput
    | ComputedOutput
    | ConstantOutput
    | TypeNameOutput
    | SubtypeColumnOutput
    | GlobalIdOutput
    | RowVersionOutput
    | NestedOutput
    | ArcOutput
    | CursorOutput
    | JsonPathOutput
    | WindowOutput
)


@attrs.frozen
class Shape:
    outputs: tuple[Output, ...]


# --- reads -------------------------------------------------------------------------------------------------------


class ReadKind(enum.Enum):
    """What JSON a read gives."""

    ONE = "one"  # an object or null
    MANY = "many"  # an array
    PAGE = "page"  # a connection object (`PageMembers`)


class PageMember(enum.Enum):
    NODES = "nodes"
    AGGREGATES = "aggregates"  # `aggregates` or one `groupedAggregates` (`PageOutput.aggregates`)
    NODE_COUNT = "node_count"  # rows on the page
    EDGES = "edges"
    HAS_NEXT_PAGE = "has_next_page"
    HAS_PREVIOUS_PAGE = "has_previous_page"
    START_CURSOR = "start_cursor"
    END_CURSOR = "end_cursor"
    TOTAL_COUNT = "total_count"


class RowsFormat(enum.Enum):
    """How the rows of a page are written (REST lists: `Accept`; `/export`: `format`)."""

    JSON = "json"  # a JSON array
    NDJSON = "ndjson"  # one JSON object per line, each line ended by a newline
    CSV = "csv"  # one CSV record per row (RFC 4180, CRLF): values as text, null empty, objects and lists as JSON

    @property
    def content_type(self) -> str:
        return _ROWS_CONTENT_TYPES[self]

    @property
    def line_end(self) -> bytes:
        """What ends each row's line (NDJSON, CSV)."""
        return b"\r\n" if self is RowsFormat.CSV else b"\n"

    def header(self, keys: Sequence[str]) -> bytes:
        """What comes before the rows: for CSV, the header record of the rows' keys (quoted as a value would be);
        nothing otherwise."""
        if self is not RowsFormat.CSV:
            return b""
        cells: list[str] = []
        for key in keys:
            quoted = any(c in key for c in '",\r\n') or key != key.strip() or not key
            cells.append('"' + key.replace('"', '""') + '"' if quoted else key)
        return (",".join(cells) + "\r\n").encode()


_ROWS_CONTENT_TYPES = {
    RowsFormat.JSON: "application/json",
    RowsFormat.NDJSON: "application/x-ndjson",
    RowsFormat.CSV: "text/csv; charset=utf-8",
}


class CountMode(enum.Enum):
    EXACT = "exact"
    ESTIMATE = "estimate"  # the planner's estimate
    EXACT_BELOW = "exact_below"  # exact when the estimate is at most `exact_below`


@attrs.frozen
class EdgeShape:
    """An edge object: its cursor and its node under the keys asked for, and constants (`__typename`)."""

    cursor_keys: tuple[str, ...]
    node_keys: tuple[str, ...]
    constants: tuple[ConstantOutput, ...] = ()
    windows: tuple[WindowOutput, ...] = ()


@attrs.frozen
class PageOutput:
    """One member of a connection object, under `key`. `members` groups the page-info members under their keys."""

    key: str
    member: PageMember | None = None
    edge: EdgeShape | None = None
    members: tuple["PageOutput", ...] = ()  # a nested object (pageInfo)
    constant: str | None = None  # `__typename`
    count: CountMode = CountMode.EXACT
    exact_below: Param | None = None
    format: RowsFormat = RowsFormat.JSON  # of NODES
    aggregates: "Aggregates | None" = None  # of AGGREGATES


# --- aggregates (SPEC "Aggregates") ------------------------------------------------------------------------------


class AggregateFunction(enum.Enum):
    """How the values of a column (or the rows) of a set of rows become one value; each names its SQL form in
    `svc/sql/_aggregates.py`."""

    COUNT = "count"  # rows (no column)
    SUM = "sum"
    AVG = "avg"
    MIN = "min"  # types with their own min() and max()
    MAX = "max"
    FIRST = "first"  # the least value in the type's order, for the other orderable types (uuid, boolean, ranges...)
    LAST = "last"
    DISTINCT_COUNT = "distinct_count"
    STDDEV_SAMPLE = "stddev_sample"
    STDDEV_POPULATION = "stddev_population"
    VARIANCE_SAMPLE = "variance_sample"
    VARIANCE_POPULATION = "variance_population"
    MEDIAN = "median"  # continuous, as float8
    PERCENTILE = "percentile"  # continuous at `fraction`, as float8


@attrs.frozen
class Aggregate:
    """One aggregate over the rows an aggregate request selects: those of the read, and of `filter` when given."""

    function: AggregateFunction
    column: str | None = None
    fraction: Param | None = None
    filter: Filter | None = None


class KeyForm(enum.Enum):
    """How a group key is computed from its column."""

    VALUE = "value"  # the column as it is
    TRUNCATED = "truncated"  # a date or time truncated to `GroupKey.unit`
    BINNED = "binned"  # into bins of `GroupKey.width` from `GroupKey.origin` (date_bin semantics; numbers too)


class KeyType(enum.Enum):
    """The kind of column a truncated or binned key is computed from."""

    OTHER = "other"
    NUMBER = "number"
    DATE = "date"
    TIMESTAMP = "timestamp"  # without time zone
    TIMESTAMPTZ = "timestamptz"


@attrs.frozen
class GroupKey:
    """One key rows are grouped by: a column's value, truncated or binned. A truncated timestamptz follows
    `time_zone` when given (else the session's); `width` and `origin` are an interval and a timestamp for dates and
    times, numbers for numbers."""

    column: str
    map: ValueMapping
    form: KeyForm = KeyForm.VALUE
    type: KeyType = KeyType.OTHER
    unit: str | None = None  # date_trunc's unit (`month`)
    time_zone: Param | None = None
    width: Param | None = None
    origin: Param | None = None


@attrs.frozen
class Grouping:
    """Groups of rows by `keys`, in key order (NULLs last), each kept when `having` holds. With `fill_gaps`, the
    single truncated or binned key's empty steps between the first and last group are groups too. More groups than
    `limit` is TOO_MANY_GROUPS, found before their JSON is built."""

    keys: tuple[GroupKey, ...]
    having: Filter | None = None
    fill_gaps: bool = False
    limit: Param | None = None


@attrs.frozen
class AggregateOutput:
    """A member of an aggregates object: an aggregate's value, an object of members, the group's keys (a JSON array
    in key order; an object under `key_names` when given), or a constant (`__typename`)."""

    key: str
    aggregate: Aggregate | None = None
    map: ValueMapping = ValueMap.AS_IS
    members: tuple["AggregateOutput", ...] = ()
    keys: bool = False
    key_names: tuple[str, ...] = ()
    constant: str | None = None


@attrs.frozen
class Aggregates:
    """Aggregates of the rows a read selects before paging (and `filter`'s, when given): one object, or with
    `grouping` a list of one object per group. Every aggregate request of a read is computed in one scan."""

    outputs: tuple[AggregateOutput, ...]
    filter: Filter | None = None
    grouping: Grouping | None = None


@attrs.frozen
class Hierarchy:
    """Ancestors or descendants, nearest first, at most `max_depth` levels away: over a self-reference (`pairs`),
    ending at a cycle, or over an ltree column (`path`: the rows whose path is above or below the row's)."""

    pairs: tuple[tuple[str, str], ...]  # (child's key column, parent's key column); () for a path
    key: tuple[str, ...]  # the rows' own key, to notice cycles
    ancestors: bool
    max_depth: Param | None
    path: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        """The parent row's columns the walk starts from."""
        return (self.path,) if self.path is not None else tuple(c for pair in self.pairs for c in pair)


@attrs.frozen
class Read:
    """Rows from `source` (hanging from the parent row by `link`), filtered, ordered, paged and shaped."""

    source: Table | FunctionCall | JsonRows
    shape: Shape
    kind: ReadKind
    link: Link | JunctionLink | None = None
    filter: Filter | None = None
    order: tuple[OrderItem, ...] = ()
    page: Page = Page()
    #: Connection members (kind PAGE), and the order signature its cursors carry.
    page_outputs: tuple[PageOutput, ...] = ()
    cursor_signature: str = ""
    hierarchy: Hierarchy | None = None


@attrs.frozen
class EntityLookup:
    """The rows of one type a federation `_entities` field asks for (SPEC "Federation and subscriptions"): `keys`
    is a JSON array of the representations' keys as rows of the read's table (column names), each with
    `__position`, its place in the answer; `read` (kind ONE) finds the row of each by `link` (key to key)."""

    keys: Param
    read: Read
    #: Representations of this type (the rows the cost limit counts); not part of the statement's shape.
    count: int = attrs.field(default=1, eq=False)


# --- search (SPEC "Search fields") -------------------------------------------------------------------------------


@attrs.frozen
class Document:
    """What a search compares with its query: a column, or an index's expression over the row's columns (the
    catalog's SQL text, column names unqualified)."""

    column: str | None = None
    expression: str | None = None


class RankingKind(enum.Enum):
    """How a document ranks against a query; each names its SQL in `svc/sql/_search.py`."""

    TRIGRAM = "trigram"  # word similarity of a text query
    FULL_TEXT = "full_text"  # ts_rank of a web-search text query
    COSINE = "cosine"  # vector similarities, by the index's operator class
    INNER_PRODUCT = "inner_product"
    L2 = "l2"
    GEOMETRY = "geometry"  # spatial distance from a GeoJSON geometry
    GEOGRAPHY = "geography"  # the same in metres


@attrs.frozen
class Ranking:
    """Rows ranked best first by their score against `query` (a text, a vector's text, a GeoJSON text), only the
    rows that match: a trigram or full-text match, a score of at least `bound` (trigram: `minSimilarity`, vectors:
    `minScore`), or a distance of at most `bound` (spatial: `maxDistance`)."""

    kind: RankingKind
    document: Document
    query: Param
    #: Full text: the text-search configuration (None: the session's default).
    config: str | None = None
    bound: Param | None = None
    #: Vectors: the type the query is read as (`vector`); spatial: the geometry's SRID.
    sql_type: str | None = None
    srid: int | None = None


@attrs.frozen
class Fusion:
    """Reciprocal rank fusion of two rankings (SPEC "Search fields": hybrid): each ranks its best `candidates` rows
    (rows ranked 1, 2, ... with ties by key), and a row scores `weights[i] / (k + rank_i)` summed over the rankings
    it is in. Rows are joined on their single-column key."""

    weights: tuple[Param, Param]
    k: Param
    candidates: Param
    key: str


@attrs.frozen
class Highlight:
    """A full-text hit's headline: `source` (SQL of the document's text over the row's columns) with the query's
    words between `start` and `stop`, HTML-escaped but for those; `options` are ts_headline's other options."""

    source: str
    config: str | None
    query: Param
    start: Param
    stop: Param
    options: Param


class HitMember(enum.Enum):
    SCORE = "score"
    NODE = "node"  # the row (REST `row`)
    HIGHLIGHT = "highlight"
    DISTANCE = "distance"  # spatial: the distance from the query
    TYPE = "type"  # global search: the hit's resource (REST)


@attrs.frozen
class HitOutput:
    """A member of a hit object: a member, or a constant (`__typename`)."""

    key: str
    member: HitMember | None = None
    constant: str | None = None
    highlight: Highlight | None = None  # of HIGHLIGHT


@attrs.frozen
class SearchSource:
    """One table's best matches: `read` (kind MANY, from its table) gives the filter (condition and filter) and
    the node's shape; `rankings` rank its rows (two fused by `fusion`), ties broken by `key`. `hits` are the members
    of each of its hits; `type` names the resource (global search)."""

    read: Read
    rankings: tuple[Ranking, ...]
    key: tuple[str, ...]
    hits: tuple[HitOutput, ...]
    fusion: Fusion | None = None
    type: str | None = None


class ResultsMember(enum.Enum):
    HITS = "hits"
    HAS_MORE = "has_more"


@attrs.frozen
class ResultsOutput:
    key: str
    member: ResultsMember | None = None
    constant: str | None = None


@attrs.frozen
class Search:
    """A search's answer (SPEC "Search fields"): the best `first` hits of its sources merged by score (one source,
    or every searchable table's for global search), and whether more matched; not paginated."""

    sources: tuple[SearchSource, ...]
    first: Param
    outputs: tuple[ResultsOutput, ...]


@attrs.frozen
class RootField:
    """One root field of an operation: a read, or a constant (null for a node ID that matches nothing)."""

    key: str
    read: Read | None = None
    constant: str | None = None
    #: A scalar function call at the root (`plus(a: 1, b: 2)`).
    call: ComputedOutput | None = None
    #: `_entities`: one list of rows of several types, in the representations' order (null for a missing row).
    entities: tuple[EntityLookup, ...] = ()
    #: A search's results object.
    search: Search | None = None
    nullable: bool = True
    #: A connection's members as columns of their own, not one object (REST: the rows are the body, the other
    #: members become headers); only for the single root of a plan.
    split: bool = False


@attrs.frozen(cache_hash=True)  # hashed once: a kept plan is looked up in the statement cache per request
class ReadPlan:
    """A whole read operation: its root fields, answered by one statement, and the parameters' values."""

    roots: tuple[RootField, ...]
