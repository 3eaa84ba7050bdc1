"""A write as a program of data-modifying CTEs, cut into as few statements as the order of its effects allows
(layer 5; ARCHITECTURE.md "Writes").

The write compiler (`_write.py`) emits parts in the order the writes happen. Parts of one statement run on one
snapshot and cannot see each other's effects on their tables, only each other's RETURNING rows; so a part that must
see an earlier part's effect on its table starts the next statement. Relative to an earlier part Q of the same
statement that changed table X, a part P touching X conflicts when it

- reads X (a lookup would miss Q's rows or see them as they were),
- updates or deletes rows of X, unless the compiler knows the two touch different rows (`disjoint`),
- upserts into X after Q updated or deleted rows there.

Inserts after inserts do not conflict: new rows are new, and unique indexes see every row the statement inserted.
A later statement takes an earlier part's rows as a JSON text parameter (the earlier statement answers them as a
column), read back under the same CTE name, so the parts' SQL does not depend on where the cut falls. Each statement
answers a small status object first (counts and missing keys, which the pipeline checks), then the parts later
statements take, then the write's outputs (in the last statement).

Writes happen in plan order: the status object names every part that writes, in order (a part without a status
member of its own is counted), and PostgreSQL evaluates it left to right, running each data-modifying CTE to its
end when it is first read. Rows therefore land in the order a client wrote them (a list read without an order
shows them so), whatever order PostgreSQL would otherwise pick for CTEs the query does not read.
"""

import enum
from collections.abc import Sequence
from typing import LiteralString

import attrs
from psycopg import sql

from svc.plan import Table

from ._filters import qualified


class Effect(enum.Enum):
    READ = "read"
    INSERT = "insert"  # also ON CONFLICT DO NOTHING
    UPSERT = "upsert"  # ON CONFLICT DO UPDATE
    UPDATE = "update"
    DELETE = "delete"


_CHANGES = frozenset({Effect.INSERT, Effect.UPSERT, Effect.UPDATE, Effect.DELETE})


@attrs.frozen
class Part:
    """One CTE: `body` over the database and the parts it `uses`.

    Its rows have the columns of `row_type` (a table) plus `extras` (name, SQL type), so a later statement can take
    them back from JSON. `status` members (name, expression over its rows) are answered in its statement's status
    object under `<name>.<member>`.
    """

    name: str
    body: sql.Composable
    effect: Effect
    table: Table | None
    row_type: Table | None
    uses: tuple[str, ...] = ()
    extras: tuple[tuple[str, LiteralString], ...] = ()
    disjoint: tuple[str, ...] = ()
    status: tuple[tuple[str, sql.Composable], ...] = ()


@attrs.frozen
class Output:
    """A value the write answers (keys, rows, rows as they were...), computed in the last statement."""

    name: str
    expression: sql.Composable
    uses: tuple[str, ...]


@attrs.frozen
class WriteStatement:
    """One statement of a write: its text, and for each JSON parameter `x<j>` it takes, the (statement, column) of
    an earlier answer that fills it. Column 0 is the status object; `columns` names the others (part names taken by
    later statements, then output names)."""

    text: str
    imports: tuple[tuple[int, int], ...]
    columns: tuple[str, ...]
    status: tuple[str, ...]  # the status members it answers (`part.member`)


def assemble(parts: Sequence[Part], outputs: Sequence[Output]) -> tuple[WriteStatement, ...]:
    """The parts cut into statements (see the module's docstring), the outputs in the last one."""
    groups: list[list[Part]] = [[]]
    for part in parts:
        if _conflicts(part, groups[-1]):
            groups.append([])
        groups[-1].append(part)
    placed = {part.name: index for index, group in enumerate(groups) for part in group}
    by_name = {part.name: part for part in parts}
    # Which parts each statement needs from earlier ones, and so which parts each statement answers.
    needs: list[list[str]] = [[] for _ in groups]
    for index, group in enumerate(groups):
        wanted = [name for part in group for name in part.uses]
        if index == len(groups) - 1:
            wanted += [name for output in outputs for name in output.uses]
        for name in dict.fromkeys(wanted):
            if placed[name] < index:
                needs[index].append(name)
    exports: list[list[str]] = [[] for _ in groups]
    for names in needs:
        for name in names:
            source = placed[name]
            if name not in exports[source]:
                exports[source].append(name)
    statements: list[WriteStatement] = []
    for index, group in enumerate(groups):
        imports = [(placed[name], 1 + exports[placed[name]].index(name)) for name in needs[index]]
        ctes = [_imported(by_name[name], position) for position, name in enumerate(needs[index])]
        ctes += [sql.SQL("{} as ({})").format(sql.Identifier(part.name), part.body) for part in group]
        status = [(f"{part.name}.{member}", expression) for part in group for member, expression in _status(part)]
        columns: list[sql.Composable] = [
            sql.SQL("json_build_object({})::text").format(
                sql.SQL(", ").join(sql.SQL("{}, {}").format(sql.Literal(key), value) for key, value in status)
            )
        ]
        names = list(exports[index])
        columns += [
            sql.SQL("(select coalesce(json_agg(to_json(e.*)), '[]'::json) from {} e)::text").format(sql.Identifier(n))
            for n in names
        ]
        if index == len(groups) - 1:
            columns += [sql.SQL("({})::text").format(output.expression) for output in outputs]
            names += [output.name for output in outputs]
        text = sql.SQL("with {} select {}").format(sql.SQL(", ").join(ctes), sql.SQL(", ").join(columns))
        statements.append(
            WriteStatement(text.as_string(None), tuple(imports), tuple(names), tuple(key for key, _ in status))
        )
    return tuple(statements)


def _conflicts(part: Part, statement: Sequence[Part]) -> bool:
    if part.table is None:
        return False
    for earlier in statement:
        if earlier.table != part.table or earlier.effect not in _CHANGES:
            continue
        if part.effect is Effect.READ:
            return True
        if part.effect in (Effect.UPDATE, Effect.DELETE) and earlier.name not in part.disjoint:
            return True
        if part.effect is Effect.UPSERT and earlier.effect in (Effect.UPDATE, Effect.DELETE):
            return True
    return False


def _imported(part: Part, position: int) -> sql.Composable:
    """An earlier statement's rows of `part`, under its name: the row type's columns, then its extras."""
    assert part.row_type is not None, f"{part.name} cannot be taken by a later statement"
    extras = [
        sql.SQL("(e.v->>{})::{} as {}").format(sql.Literal(name), sql.SQL(sql_type), sql.Identifier(name))
        for name, sql_type in part.extras
    ]
    return sql.SQL(
        "{} as (select {}r.* from json_array_elements({}::json) e(v)"
        " cross join lateral json_populate_record(null::{}, e.v) r)"
    ).format(
        sql.Identifier(part.name),
        sql.SQL("").join(sql.SQL("{}, ").format(extra) for extra in extras),
        sql.Placeholder(f"x{position}"),
        qualified(part.row_type),
    )


def _status(part: Part) -> tuple[tuple[str, sql.Composable], ...]:
    """A part's status members; one that writes and has none is counted (so it runs in its turn)."""
    if part.status or part.effect not in _CHANGES:
        return part.status
    return (("rows", sql.SQL("(select count(*) from {})").format(sql.Identifier(part.name))),)
