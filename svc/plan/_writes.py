"""Write plans: what a mutation changes, for both front ends (SPEC "Mutations", "Nested writes").

A root field's write is a tree: a row to create, update or delete, with writes of related rows hanging from it
(to-one rows written first, since this row holds their keys; to-many and many-to-many rows after, since they hold
this row's key). The pipeline runs the tree as a sequence of statements in one transaction, each compiled by
`svc/sql`, feeding keys from earlier statements to later ones; the payload is read afterwards by key.

Values are given in their database form (enum labels, numbers as numbers), already checked by the planner. Every
write carries the input path it came from, so a constraint violation names the fields the client wrote
(`input.email`, `inputs[1].posts.create[0].title`).
"""

import enum
from typing import Any

import attrs

from ._ir import Filter, ReadPlan, Table

Path = tuple[str | int, ...]


@attrs.frozen
class Values:
    """Column values of one row as written (`column -> value`); `paths` maps each column to its input path."""

    values: tuple[tuple[str, Any], ...]
    paths: tuple[tuple[str, Path], ...] = ()

    def columns(self) -> tuple[str, ...]:
        return tuple(column for column, _ in self.values)

    def path_of(self, column: str) -> Path | None:
        return dict(self.paths).get(column)


@attrs.frozen
class KeyLookup:
    """A row named by a unique key (`{column: value}`): connect, update or delete targets; `path` is the input's."""

    values: tuple[tuple[str, Any], ...]
    path: Path


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
    relation: str  # the relation field's name (for error messages and codes)
    target: Table
    target_key: tuple[str, ...]  # the target's primary key
    cardinality: str  # "to_one", "to_many", "many_to_many"
    pairs: tuple[tuple[str, str], ...]
    rows: tuple["RowWrite", ...] = ()  # create, connectOrCreate's create, update's data, sync
    keys: tuple[KeyLookup, ...] = ()  # connect, disconnect, set, delete, connectOrCreate's where, update's where
    junction: Table | None = None
    junction_pairs: tuple[tuple[str, str], ...] = ()  # (junction column, target column)
    junction_parent_pairs: tuple[tuple[str, str], ...] = ()  # (this row's column, junction column)
    path: Path = ()


@attrs.frozen
class RowWrite:
    """Create, update (by key) or upsert one row, with the related writes that hang from it."""

    table: Table
    key: tuple[str, ...] | None  # the primary key (None: a table without one, create only)
    values: Values
    path: Path
    related: tuple[RelatedWrite, ...] = ()
    #: update: which row (a unique key); create: None
    where: KeyLookup | None = None
    on_conflict: OnConflict | None = None
    expected_version: Any = None
    version_column: str | None = None  # None: the system transaction id (xmin)
    #: Read the row as it was before the write (update payloads' `previous<Type>`).
    previous: bool = False
    #: A nested update must find its row (SPEC "Nested writes": an update needs an existing row).
    must_exist: bool = False


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
    filter_values: tuple[Any, ...] = ()


@attrs.frozen
class DeleteWrite:
    """`delete<Type>(<key>)`: one row by key, its version checked when `expected_version` is given."""

    table: Table
    key: tuple[str, ...]
    where: KeyLookup
    expected_version: Any = None
    version_column: str | None = None


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
