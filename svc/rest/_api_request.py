"""The parsed request (SPEC "REST API"): what one REST request asks for, read from its path, method, parameters,
headers and body before anything is planned, as PostgREST's `ApiRequest` is. The parse stage (`_parse*.py`) builds
it; the plan stage (`_plan*.py`) reads it; the response stage (`_respond.py`) reads it beside the plan's answer.

Names in it are already checked against the entity and its GraphQL input types (unknown columns, relations and
members are refused while parsing); filter values and bodies are the coerced GraphQL input values (GraphQL names),
ready for the shared planners of `svc/plan`.
"""

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from svc.errors import SvcError
from svc.model import Entity, Field, RootFunction
from svc.plan import AggregateMember, GroupValue, HighlightOptions, KeyLookup, RowsFormat, SearchRequest

from ._resources import Target


class Action(enum.Enum):
    """What a request does (SPEC "REST API" -> route table)."""

    INDEX = "index"  # GET /rest: resources and functions
    NODE = "node"  # GET /rest/node/{id}: 303 to the row's URL
    DESCRIBE = "describe"  # OPTIONS: the methods a route has
    READ_LIST = "read_list"  # GET /rest/{resource}, POST /rest/{resource}/search
    READ_ROW = "read_row"  # GET /rest/{resource}/{key}
    READ_COLUMN = "read_column"  # GET /rest/{resource}/{key}/{column}: a binary column's bytes
    AGGREGATE = "aggregate"  # GET or POST /rest/{resource}/aggregate
    SEARCH = "search"  # POST /rest/{resource}/search/{method}
    GLOBAL_SEARCH = "global_search"  # GET or POST /rest/search
    CALL = "call"  # GET or POST /rest/rpc/{function}
    CREATE = "create"  # POST /rest/{resource}
    UPSERT = "upsert"  # PUT /rest/{resource}: bulk upsert
    UPDATE_ROW = "update_row"  # PATCH /rest/{resource}/{key}
    PUT_ROW = "put_row"  # PUT /rest/{resource}/{key}: insert or update
    DELETE_ROW = "delete_row"  # DELETE /rest/{resource}/{key}
    UPDATE_WHERE = "update_where"  # PATCH /rest/{resource}?filter...
    DELETE_WHERE = "delete_where"  # DELETE /rest/{resource}?filter...
    WRITE_COLUMN = "write_column"  # PUT /rest/{resource}/{key}/{column}: a binary column's bytes


@attrs.frozen
class Preferences:
    """`Prefer` (RFC 7240) as far as the service applies it; unknown preferences are ignored, as the RFC says."""

    return_: str | None = None  # minimal | representation
    count: str | None = None  # exact | planned | estimated
    previous: bool = False


@attrs.frozen
class Range:
    """`Range: items=A-B` (or `items=A-`): rows A to B counting from 0 (SPEC "Ranges")."""

    first: int
    last: int | None

    @property
    def inverted(self) -> bool:
        """It ends before it starts: the list answers 416 for it."""
        return self.last is not None and self.last < self.first

    @property
    def size(self) -> int | None:
        """Rows the range covers (None: to the end)."""
        return None if self.last is None else max(0, self.last - self.first + 1)


@attrs.frozen
class Preconditions:
    """`If-Match` and `If-None-Match` against the row version (SPEC "Writes" 2, route table: `ETag`)."""

    #: `If-Match: "<version>"`: the version a write expects.
    expected: str | None = None
    #: Any `If-Match` (`*` too): the row must exist.
    must_exist: bool = False
    #: `If-None-Match`: versions that answer 304 (`*` any); None without the header.
    none_match: tuple[str, ...] | None = None


@attrs.frozen
class RowKey:
    """The row a row path names (its primary key, or `?by=` another unique key), and what answers its absence."""

    lookup: KeyLookup
    by: bool  # addressed by another unique key (`?by=`)
    #: A temporal table's row named by its key without the period: the version valid at `asOf` (else now).
    versions: bool = False

    @property
    def missing(self) -> SvcError:
        assert self.lookup.missing is not None
        return self.lookup.missing


@attrs.frozen
class Selection:
    """The members of each row of one read: `fields` (None: every column and the row version), computed fields'
    arguments, JSON paths, and the included relations by field name."""

    fields: tuple[str, ...] | None = None
    arguments: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict[str, Mapping[str, Any]])
    paths: Mapping[str, str] = attrs.field(factory=dict[str, str])
    includes: Mapping[str, "Include"] = attrs.field(factory=dict[str, "Include"])


@attrs.frozen
class Include:
    """An included relation (or hierarchy, or computed set of rows) and its embedding controls."""

    path: str  # the include path (`posts.comments`), as controls name it
    selection: Selection
    filter: Mapping[str, Any] | None = None
    order: tuple[str, ...] = ()
    first: int | None = None
    offset: int | None = None
    depth: int | None = None
    inner: bool = False
    anti: bool = False
    as_of: str | None = None  # `asOf[<path>]`: the instant a temporal relation is read at


@attrs.frozen
class ListWindows:
    """`window=`, `partition=`, `running=` of a list (SPEC "List query parameters"): each row's `_window`."""

    functions: tuple[str, ...] = ()  # rowNumber, rank, denseRank, percentRank
    partition: tuple[GroupValue, ...] = ()
    running: tuple[Field, ...] = ()


@attrs.frozen
class Listing:
    """A read of an entity's rows: its filter (coerced `<Type>Filter` value), order (`<Type>OrderBy` values), page
    and row members."""

    selection: Selection = Selection()
    filter: Mapping[str, Any] | None = None
    order: tuple[str, ...] = ()
    first: int | None = None
    last: int | None = None
    offset: int | None = None
    after: str | None = None
    before: str | None = None
    cursors: bool = False
    windows: ListWindows | None = None
    as_of: str | None = None  # `asOf`: the instant a temporal table is read at


@attrs.frozen
class AggregateSet:
    """One set of an aggregate request (SPEC "Aggregate request members"): its members' columns, its groups (each
    under the key the response names it by), and the options; `filter` and `having` are coerced GraphQL input
    values (`<Type>Filter`, `<Type>HavingInput`); `prefix` is how its parameters are named (`sets.monthly.`)."""

    members: tuple[tuple[AggregateMember, tuple[Field, ...]], ...] = ()
    fraction: float | None = None
    filter: Mapping[str, Any] | None = None
    group: tuple[tuple[str, GroupValue], ...] = ()
    having: Mapping[str, Any] | None = None
    time_zone: str | None = None
    bin_width: str | None = None
    bin_origin: str | None = None
    fill_gaps: bool = False
    prefix: str = ""


@attrs.frozen
class AggregateRequest:
    """An aggregate request: its sets by name (one unnamed set without `sets`), and the filter every set reads."""

    sets: tuple[tuple[str, AggregateSet], ...]
    filter: Mapping[str, Any] | None = None
    #: The response is an object keyed by set name (the request gave `sets`).
    named: bool = False


@attrs.frozen
class SearchBody:
    """A search method's body, or a global search's query (SPEC "Search methods"): the request the shared search
    planner reads, `first`, and the highlight asked for (full text). The rows' members and filter are the
    request's `listing`."""

    request: SearchRequest
    first: Any = None
    highlight: HighlightOptions | None = None
    #: Global search: the resources searched, each with its name in the hits' `type`.
    sources: tuple[tuple[Entity, str], ...] = ()


@attrs.frozen
class Conflict:
    """A bulk upsert's conflict handling (SPEC "Writes" 6): the unique key's fields, and what a conflict does."""

    fields: tuple[str, ...]
    ignore: bool = False  # resolution=ignore
    update: tuple[str, ...] | None = None  # the fields a merge updates (None: those the rows set)


@attrs.frozen
class Rows:
    """Rows to create (`<Type>Input` values): one object, or an array answered with an array; `conflict` makes it
    a bulk upsert."""

    rows: tuple[Mapping[str, Any], ...]
    many: bool
    conflict: Conflict | None = None


@attrs.frozen
class Changes:
    """Values to write to the addressed rows (`<Type>Patch` values); `create`: a PUT without `If-Match`, which
    inserts the row (a `<Type>Input` value, the URL's key filled in) or updates it."""

    values: Mapping[str, Any]
    create: bool = False


@attrs.frozen
class Patch:
    """A JSON Patch or merge patch document of one row (SPEC "Writes" 8): applied to the row as the API shows it."""

    media: str
    document: Any


Body = Rows | Changes | Patch


@attrs.frozen
class Call:
    """A function call (SPEC "Functions"): its coerced arguments, given as query parameters (GET) or as members of
    the body's `args` (POST)."""

    function: RootFunction
    arguments: Mapping[str, Any]
    in_body: bool


@attrs.frozen
class ApiRequest:
    """One REST request, parsed."""

    action: Action
    target: Target
    method: str  # as sent (HEAD is answered as GET)
    #: The path as sent, decoded, and the query string's pairs: a list's `Link` keeps them.
    path: str = ""
    query: tuple[tuple[str, str], ...] = ()
    preferences: Preferences = Preferences()
    range: Range | None = None
    preconditions: Preconditions = Preconditions()
    #: `Accept` of a list: JSON, NDJSON or CSV rows.
    list_format: RowsFormat = RowsFormat.JSON
    listing: Listing = Listing()
    key: RowKey | None = None
    body: Body | None = None
    call: Call | None = None
    aggregate: AggregateRequest | None = None
    search: SearchBody | None = None
    #: A binary column (READ_COLUMN, WRITE_COLUMN).
    column: Field | None = None
    #: DESCRIBE: the methods the route has; NODE: the row's URL.
    allowed: frozenset[str] = frozenset()
    location: str | None = None

    @property
    def entity(self) -> Entity:
        """The entity of a request on a resource (a collection, a row, a column, a search)."""
        assert self.target.entity is not None
        return self.target.entity
