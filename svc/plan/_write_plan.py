"""Write plans: what a mutation changes, for both front ends (SPEC "Mutations", "Nested writes").

A root field's write is a tree: a row to create, update or delete, with writes of related rows hanging from it
(to-one rows written first, since this row holds their keys; to-many and many-to-many rows after, since they hold
this row's key). The compiler (`svc/sql`) turns a tree into as few statements as the order of its effects allows;
the payload is read afterwards by key.

A tree is its own shape: the values a client gave (column values, keys, expected versions) are left out of its
equality and hash, so equal shapes compile to equal SQL and the compiled statements are cached by the tree. What the
SQL depends on is kept in: which columns are given, which of them are NULL, which key columns name a row.

Values are given in their database form (enum labels, numbers as numbers), already checked by the planner. Every
write carries the input path it came from, so a constraint violation names the fields the client wrote
(`input.email`, `inputs[1].posts.create[0].title`).
"""

import enum
from typing import Any

import attrs

from svc.errors import SvcError
from svc.model import Cardinality

from ._ir import Filter, ReadPlan, Table

Path = tuple[str | int, ...]


def _columns(pairs: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    return tuple(column for column, _ in pairs)


def _nulls(pairs: tuple[tuple[str, Any], ...]) -> frozenset[str]:
    return frozenset(column for column, value in pairs if value is None)


@attrs.frozen
class Values:
    """Column values of one row as written (`column -> value`); `paths` maps each column to its input path.

    Its shape: the columns given, and which of them are NULL."""

    values: tuple[tuple[str, Any], ...] = attrs.field(eq=False)
    paths: tuple[tuple[str, Path], ...] = attrs.field(default=(), eq=False)
    given: tuple[str, ...] = attrs.field(
        init=False, default=attrs.Factory(lambda self: _columns(self.values), takes_self=True)
    )
    nulls: frozenset[str] = attrs.field(
        init=False, default=attrs.Factory(lambda self: _nulls(self.values), takes_self=True)
    )

    def columns(self) -> tuple[str, ...]:
        return self.given

    def row(self) -> dict[str, Any]:
        return dict(self.values)

    def path_of(self, column: str) -> Path | None:
        return dict(self.paths).get(column)


@attrs.frozen
class KeyLookup:
    """A row named by a unique key (`{column: value}`): connect, update or delete targets; `path` is the input's.

    `missing` is the error a write answers when no row matches (None: NOT_FOUND naming `path`): a front end that
    names the row otherwise (REST: by its URL) says so here."""

    values: tuple[tuple[str, Any], ...] = attrs.field(eq=False)
    path: Path = attrs.field(eq=False)
    missing: SvcError | None = attrs.field(default=None, eq=False)
    #: Its shape: the key's columns.
    columns: tuple[str, ...] = attrs.field(
        init=False, default=attrs.Factory(lambda self: _columns(self.values), takes_self=True)
    )

    def key(self) -> dict[str, Any]:
        return dict(self.values)


@attrs.frozen
class OnConflict:
    """Upsert: on a conflict over the unique key `columns`, set `update` from the row given (`nothing`: leave the
    existing row alone; an empty `update` still locks and answers it)."""

    columns: tuple[str, ...]
    update: tuple[str, ...]
    nothing: bool = False


class RelationWriteKind(enum.Enum):
    CONNECT = "connect"
    CREATE = "create"
    CONNECT_OR_CREATE = "connect_or_create"
    DISCONNECT = "disconnect"
    SET = "set"
    UPDATE = "update"
    DELETE = "delete"
    SYNC = "sync"


@attrs.frozen
class RelatedWrite:
    """One operation on related rows of a row being written (SPEC "Nested writes" table).

    For a to-one relation (this row holds the key) `pairs` are (this row's column, the target's column); for a
    to-many relation (the target holds the key) they are (this row's column, the target's column) too, read the
    other way; for many-to-many, `junction` and `junction_pairs` describe the junction rows.
    """

    kind: RelationWriteKind
    relation: str = attrs.field(eq=False)  # the relation field's name (for error messages and codes)
    target: Table
    target_key: tuple[str, ...]  # the target's primary key
    cardinality: Cardinality
    pairs: tuple[tuple[str, str], ...]
    rows: tuple["RowWrite", ...] = ()  # create, connectOrCreate's create, update's data, sync
    keys: tuple[KeyLookup, ...] = ()  # connect, disconnect, set, delete, connectOrCreate's where, update's where
    junction: Table | None = None
    junction_pairs: tuple[tuple[str, str], ...] = ()  # (junction column, target column)
    junction_parent_pairs: tuple[tuple[str, str], ...] = ()  # (this row's column, junction column)
    path: Path = attrs.field(default=(), eq=False)


@attrs.frozen
class RowWrite:
    """Create, update (by key) or upsert one row, with the related writes that hang from it."""

    table: Table
    key: tuple[str, ...] | None  # the primary key (None: a table without one, create only)
    values: Values
    path: Path = attrs.field(eq=False)
    related: tuple[RelatedWrite, ...] = ()
    #: update: which row (a unique key); create: None
    where: KeyLookup | None = None
    on_conflict: OnConflict | None = None
    expected_version: Any = attrs.field(default=None, eq=False)
    version_column: str | None = None  # None: the system transaction id (xmin)
    #: Where the expected version was given (a STALE_VERSION error names it): GraphQL's argument, REST's header.
    version_field: str = attrs.field(default="expectedVersion", eq=False)
    #: Read the row as it was before the write (update payloads' `previous<Type>`).
    previous: bool = False
    #: A nested update must find its row (SPEC "Nested writes": an update needs an existing row).
    must_exist: bool = False
    #: Its shape: whether a version is checked.
    versioned: bool = attrs.field(
        init=False, default=attrs.Factory(lambda self: self.expected_version is not None, takes_self=True)
    )

    @property
    def upsert(self) -> OnConflict | None:
        """The upsert's conflict key when the row names it: a row that leaves a column of it to its default (an
        identity) or NULL cannot name an existing row, so it is a plain insert."""
        conflict = self.on_conflict
        if conflict is None or any(c not in self.values.given or c in self.values.nulls for c in conflict.columns):
            return None
        return conflict


@attrs.frozen
class BulkWrite:
    """`update<Types>(where, set)` / `delete<Types>(where)`: rows by filter, at most `limit` (else rolled back)."""

    table: Table
    key: tuple[str, ...] | None
    filter: Filter | None
    values: Values | None  # None: delete
    limit: int | None
    previous: bool = False
    #: The values of the filter's parameters (numbered from 0: the write statement's first parameters).
    filter_values: tuple[Any, ...] = attrs.field(default=(), eq=False)
    #: Its shape: how many parameters the filter has.
    filter_params: int = attrs.field(
        init=False, default=attrs.Factory(lambda self: len(self.filter_values), takes_self=True)
    )


@attrs.frozen
class DeleteWrite:
    """`delete<Type>(<key>)`: one row by key, its version checked when `expected_version` is given."""

    table: Table
    key: tuple[str, ...]
    where: KeyLookup
    expected_version: Any = attrs.field(default=None, eq=False)
    version_column: str | None = None
    version_field: str = attrs.field(default="expectedVersion", eq=False)
    versioned: bool = attrs.field(
        init=False, default=attrs.Factory(lambda self: self.expected_version is not None, takes_self=True)
    )


Write = RowWrite | BulkWrite | DeleteWrite


class PayloadKind(enum.Enum):
    """A member of a mutation payload object (SPEC "Mutations": payloads)."""

    READ = "read"  # a root of the payload read: the rows written, as they were, or as they were deleted
    AFFECTED_COUNT = "affected_count"
    DELETED_ID = "deleted_id"  # the global ID of the deleted row
    CONSTANT = "constant"  # __typename


@attrs.frozen
class PayloadMember:
    key: str
    kind: PayloadKind
    constant: str | None = None


@attrs.frozen
class Slots:
    """Parameters of the payload read, filled once the write has run (their positions in its values): the touched
    rows' keys (a JSON array of key objects, in written order), the rows themselves (written, or deleted; a JSON
    array), and the rows as they were before (a JSON array)."""

    keys: int | None = None
    rows: int | None = None
    previous: int | None = None


@attrs.frozen
class MutationStep:
    """One root field of a mutation: its write (or a VOLATILE function's call), then its payload read by key.

    `payload` reads the payload's row members (one root each), its parameters `payload_values` with the `slots`
    left to fill; `members` are the payload object's members in the selection's order.
    """

    key: str
    write: "Write | tuple[RowWrite, ...] | None" = None
    call: ReadPlan | None = None
    call_values: tuple[Any, ...] = ()
    payload: ReadPlan | None = None
    payload_values: tuple[Any, ...] = ()
    slots: Slots = Slots()
    members: tuple[PayloadMember, ...] = ()
    key_columns: tuple[str, ...] = ()
    type_name: str = ""  # of the rows (global IDs of deleted rows)


@attrs.frozen
class MutationPlan:
    steps: tuple[MutationStep, ...]
