"""The write statements the pipeline asks the compiler for, one per step of a write plan (layer 4).

Each is a shape: values are parameters (`Param`), rows to insert are one JSON parameter, and which rows a statement
touches is a `Filter` (the read compiler's), so equal shapes compile to equal text and are cached. Every statement
answers with one JSON text: the rows it wrote as they are now (`rows`), and where asked the rows as they were
before (`previous`) and how many rows matched (`matched`). Rows are answered with the columns `returned` names (None:
every column): a role with column grants may read only some, and a statement touching one more is refused whole.
"""

import attrs

from ._ir import Filter, Param, Table
from ._writes import OnConflict


@attrs.frozen
class Version:
    """A row version check (SPEC "Mutations" 5): the row's version must equal `expected` (`column`, else xmin)."""

    column: str | None
    expected: Param


@attrs.frozen
class InsertRows:
    """INSERT rows (a JSON array of objects in `rows`) of `columns`; upsert with `on_conflict`.

    Answers `{"rows": [...written rows in input order...], "inserted": [true|false...], "previous": [...]}`; with
    `on_conflict` doing nothing, a row left alone is answered as it is.
    """

    table: Table
    columns: tuple[str, ...]
    rows: Param
    on_conflict: OnConflict | None = None
    previous: bool = False
    returned: tuple[str, ...] | None = None


@attrs.frozen
class UpdateRows:
    """UPDATE the rows `where` selects (locked first), setting `columns` from `row` (a JSON object parameter).

    Answers `{"matched": n, "rows": [...], "previous": [...]}`; nothing is written when `version` does not match or
    more rows than `limit` match.
    """

    table: Table
    key: tuple[str, ...]
    where: Filter | None
    columns: tuple[str, ...]
    row: Param
    version: Version | None = None
    limit: Param | None = None
    previous: bool = False
    returned: tuple[str, ...] | None = None


@attrs.frozen
class DeleteRows:
    """DELETE the rows `where` selects (locked first). Answers `{"matched": n, "rows": [...deleted rows...]}`."""

    table: Table
    key: tuple[str, ...]
    where: Filter | None
    version: Version | None = None
    limit: Param | None = None
    returned: tuple[str, ...] | None = None


@attrs.frozen
class SelectRows:
    """The rows `where` selects, as they are (a lookup before connecting, a row's current keys)."""

    table: Table
    where: Filter
    returned: tuple[str, ...] | None = None


@attrs.frozen
class LinkRows:
    """Junction rows: INSERT (ON CONFLICT DO NOTHING) the pairs in `rows`, a JSON array of objects."""

    table: Table
    columns: tuple[str, ...]
    rows: Param


@attrs.frozen
class SyncRows:
    """Make the children of a parent exactly the rows given (SPEC "Nested writes": sync, one merge statement).

    `rows` (a JSON array of every row given) decides: a row whose key names a child of this parent updates it
    (`columns`, the non-key columns any row gives; a column a row leaves out keeps its value), children no row names
    are deleted, and the other rows are inserted from `inserts`: the same rows grouped by the columns they give
    (`(columns, JSON array)` each), so a column left out takes its default. `parent` (a JSON object) holds the
    children's foreign key columns `parent_columns`.

    Answers `{"updated": n, "inserted": n, "deleted": n}`.
    """

    table: Table
    key: tuple[str, ...]
    columns: tuple[str, ...]
    parent_columns: tuple[str, ...]
    parent: Param
    rows: Param
    inserts: tuple[tuple[tuple[str, ...], Param], ...]


Statement = InsertRows | UpdateRows | DeleteRows | SelectRows | LinkRows | SyncRows
