"""Small SQL pieces the write compiler composes (layer 5): column lists, equalities between row aliases, rows of a
JSON array parameter, rows as JSON, upsert actions. Identifiers are quoted by psycopg; texts are literals."""

from collections.abc import Sequence

from psycopg import sql

from svc.plan import OnConflict, Table

from ._filters import qualified
from ._values import json_object


def names(columns: Sequence[str]) -> sql.Composable:
    """`"a", "b"`."""
    return sql.SQL(", ").join(map(sql.Identifier, columns))


def columns_of(alias: str, columns: Sequence[str]) -> sql.Composable:
    """`"x"."a", "x"."b"`."""
    return sql.SQL(", ").join(sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c)) for c in columns)


def selected(alias: str, columns: Sequence[str] | None) -> sql.Composable:
    """The columns `columns` names of the row `alias`, or all of them (`alias.*`) when None: a role with column
    grants may read only some, and a statement naming one more is refused whole."""
    if columns is None:
        return sql.SQL("{}.*").format(sql.Identifier(alias))
    return columns_of(alias, columns)


def row_json(alias: str, columns: Sequence[str] | None) -> sql.Composable:
    """A row as a JSON object: of the columns `columns` names, or every column when None."""
    if columns is None:
        return sql.SQL("to_json({}.*)").format(sql.Identifier(alias))
    return json_object([(c, sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c))) for c in columns])


def equal(columns: Sequence[str], left: str, right: str) -> sql.Composable:
    """`left.c = right.c` for each column."""
    return sql.SQL(" and ").join(
        sql.SQL("{}.{} = {}.{}").format(
            sql.Identifier(left), sql.Identifier(c), sql.Identifier(right), sql.Identifier(c)
        )
        for c in columns
    )


def paired(pairs: Sequence[tuple[str, str]], left: str, right: str) -> sql.Composable:
    """`left.a = right.b` for each pair (a, b)."""
    return sql.SQL(" and ").join(
        sql.SQL("{}.{} = {}.{}").format(
            sql.Identifier(left), sql.Identifier(a), sql.Identifier(right), sql.Identifier(b)
        )
        for a, b in pairs
    )


def assigned(columns: Sequence[str], alias: str) -> sql.Composable:
    """`c = alias.c` for each column (an UPDATE's SET list)."""
    return sql.SQL(", ").join(
        sql.SQL("{} = {}.{}").format(sql.Identifier(c), sql.Identifier(alias), sql.Identifier(c)) for c in columns
    )


def nulled(columns: Sequence[str]) -> sql.Composable:
    """`c = null` for each column."""
    return sql.SQL(", ").join(sql.SQL("{} = null").format(sql.Identifier(c)) for c in columns)


def rows_of(table: Table, rows: sql.Composable) -> sql.Composable:
    """The rows of a JSON array parameter, typed by the table's row type: each with its position `__n` (given in the
    array) and its JSON object `__v`, then the table's columns (NULL where the object has no member)."""
    return sql.SQL(
        "select (e.__v->>'__n')::bigint as __n, e.__v, r.* from json_array_elements({}) e(__v)"
        " cross join lateral json_populate_record(null::{}, e.__v) r"
    ).format(rows, qualified(table))


def on_conflict(conflict: OnConflict) -> sql.Composable:
    """An upsert's action: leave the existing row alone, or set the columns to update from the row given (nothing
    to change still updates a key column to itself, so the row is locked and answered)."""
    target = names(conflict.columns)
    if conflict.nothing:
        return sql.SQL(" on conflict ({}) do nothing").format(target)
    return sql.SQL(" on conflict ({}) do update set {}").format(
        target, assigned(conflict.update or conflict.columns[:1], "excluded")
    )


def union(queries: Sequence[sql.Composable]) -> sql.Composable:
    return sql.SQL(" union all ").join(queries)


def found_rows(found: str, columns: Sequence[str]) -> sql.Composable:
    """The rows a lookup found, their `columns`."""
    return sql.SQL("select {} from {} l where l.__found").format(columns_of("l", columns), sql.Identifier(found))


def listed(part: str, extras: Sequence[tuple[str, str]], columns: tuple[str, ...] | None) -> sql.Composable:
    """A part's rows with its columns named: a part an earlier statement answered, taken back from JSON, has every
    column of its row type, so uniting it with others needs the same list."""
    selection: list[sql.Composable] = [sql.Identifier(name) for name, _ in extras]
    if columns is None:
        selection.append(sql.SQL("{}.*").format(sql.Identifier(part)))
    else:
        selection += [sql.Identifier(c) for c in columns]
    return sql.SQL("select {} from {}").format(sql.SQL(", ").join(selection), sql.Identifier(part))
