"""The statements of an import (`POST /import/{Type}`): the COPY of checked rows straight into the table, and for
rows that cannot take that way (their keys are asked for, a value has no COPY form, the COPY failed), a staging table
of the rows, the COPY filling it and the INSERT moving them into the table in line order.

The staging table is temporary and dropped at commit: `svc_line` (the row's line in the body) and `svc_row`, the row
as a mutation writes it: a JSON object of its columns' values that `json_populate_record` reads into the table's
types. Rows leaving different columns to their defaults are inserted (or copied) by one statement per run of lines
giving the same columns.
"""

import attrs
from psycopg import sql

from svc.plan import Table

from ._filters import qualified

STAGING = "svc_import"


@attrs.frozen
class ImportStatements:
    """The statements of an import into `table`, whose primary key is `key`."""

    table: Table
    key: tuple[str, ...]

    def copy_into(self, columns: tuple[str, ...]) -> str:
        """COPY of rows giving `columns` (each value in PostgreSQL's text form) into the table; none: every column its
        default."""
        return sql.SQL("copy {}{} from stdin").format(qualified(self.table), _targets(columns)).as_string(None)

    def staging(self) -> sql.Composed:
        return sql.SQL("create temporary table {} (svc_line integer, svc_row json) on commit drop").format(
            sql.Identifier(STAGING)
        )

    def copy(self) -> str:
        return sql.SQL("copy {} (svc_line, svc_row) from stdin").format(sql.Identifier(STAGING)).as_string(None)

    def insert(self, columns: tuple[str, ...], *, keys: bool) -> sql.Composed:
        """The staged rows (each giving `columns`) with a line from `%(first)s` to `%(last)s`, in line order; with
        `keys`, answering each row's key as a JSON object."""
        row = sql.Identifier("r")
        values = sql.SQL(", ").join(sql.SQL("{}.{}").format(row, sql.Identifier(column)) for column in columns)
        returning = sql.SQL("")
        if keys and self.key:
            pairs = sql.SQL(", ").join(sql.SQL("{}, {}").format(sql.Literal(c), sql.Identifier(c)) for c in self.key)
            returning = sql.SQL(" returning json_build_object({})::text").format(pairs)
        return sql.SQL(
            "insert into {table}{targets} select {values} from {staging} s"
            " cross join lateral json_populate_record(null::{table}, s.svc_row) {row}"
            " where s.svc_line between %(first)s and %(last)s order by s.svc_line{returning}"
        ).format(
            table=qualified(self.table),
            targets=_targets(columns),
            values=values,
            staging=sql.Identifier(STAGING),
            row=row,
            returning=returning,
        )


def _targets(columns: tuple[str, ...]) -> sql.Composable:
    """The columns a statement writes; none: every column its default."""
    if not columns:
        return sql.SQL("")
    return sql.SQL(" ({})").format(sql.SQL(", ").join(sql.Identifier(column) for column in columns))
