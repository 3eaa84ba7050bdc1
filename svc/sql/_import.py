"""The statements of an import (`POST /import/{Type}`): a staging table of the rows, the COPY filling it, and the
INSERT moving them into the table in line order.

The staging table is temporary and dropped at commit: `svc_line` (the row's line in the body), `svc_set` (which
columns the row gives: rows leaving different columns to their defaults are inserted by one statement per set) and
`svc_row`, the row as a mutation writes it: a JSON object of its columns' values that `json_populate_record` reads
into the table's types.
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

    def staging(self) -> sql.Composed:
        return sql.SQL(
            "create temporary table {} (svc_line integer, svc_set integer, svc_row json) on commit drop"
        ).format(sql.Identifier(STAGING))

    def copy(self) -> str:
        return (
            sql.SQL("copy {} (svc_line, svc_set, svc_row) from stdin").format(sql.Identifier(STAGING)).as_string(None)
        )

    def insert(self, columns: tuple[str, ...], *, keys: bool) -> sql.Composed:
        """The rows of the set giving `columns` (`%(set)s`) with a line up to `%(last)s`, in line order; with `keys`,
        answering each row's key as a JSON object."""
        row = sql.Identifier("r")
        names = sql.SQL(", ").join(sql.Identifier(column) for column in columns)
        targets = sql.SQL(" ({})").format(names) if columns else sql.SQL("")  # none: every column its default
        values = sql.SQL(", ").join(sql.SQL("{}.{}").format(row, sql.Identifier(column)) for column in columns)
        returning = sql.SQL("")
        if keys and self.key:
            pairs = sql.SQL(", ").join(sql.SQL("{}, {}").format(sql.Literal(c), sql.Identifier(c)) for c in self.key)
            returning = sql.SQL(" returning json_build_object({})::text").format(pairs)
        return sql.SQL(
            "insert into {table}{targets} select {values} from {staging} s"
            " cross join lateral json_populate_record(null::{table}, s.svc_row) {row}"
            " where s.svc_set = %(set)s and s.svc_line <= %(last)s order by s.svc_line{returning}"
        ).format(
            table=qualified(self.table),
            targets=targets,
            values=values,
            staging=sql.Identifier(STAGING),
            row=row,
            returning=returning,
        )
