"""Write statements (layer 5): each a single statement answering one JSON text (SPEC "Mutations").

Rows to insert arrive as one JSON parameter and are read with `json_populate_record` against the table's row type,
so the text depends on the columns written, not on how many rows. Rows to update or delete are locked first
(`FOR UPDATE` in a CTE), which gives the rows as they were before the write in the same statement on every supported
PostgreSQL version (no old-row RETURNING before 18), lets the version check see the row it will write, and lets a
write by filter count its rows and write none when they are more than the limit.
"""

from psycopg import sql

from svc.plan import (
    DeleteRows,
    Filter,
    InsertRows,
    LinkRows,
    SelectRows,
    Statement,
    SyncRows,
    Table,
    UpdateRows,
    Version,
)

from ._filters import Expressions, param, qualified
from ._read import _Compiler
from ._values import json_object


def compile_write(statement: Statement) -> str:
    """The text of one write statement (named placeholders `p0`, `p1`...)."""
    writer = _Writer()
    if isinstance(statement, InsertRows):
        composed = writer.insert(statement)
    elif isinstance(statement, UpdateRows):
        composed = writer.update(statement)
    elif isinstance(statement, DeleteRows):
        composed = writer.delete(statement)
    elif isinstance(statement, SelectRows):
        composed = writer.select(statement)
    elif isinstance(statement, LinkRows):
        composed = writer.link(statement)
    else:
        composed = writer.sync(statement)
    return composed.as_string(None)


class _Writer:
    def __init__(self) -> None:
        # The read compiler's expressions: a write by filter may compare related rows and computed values too.
        self.expressions: Expressions = _Compiler().expressions

    # --- insert ------------------------------------------------------------------------------------------------

    def insert(self, statement: InsertRows) -> sql.Composable:
        table = qualified(statement.table)
        columns = _columns(statement.columns)
        source = _source(statement.table, statement.rows)
        selected = sql.SQL(", ").join(sql.SQL("s.{}").format(sql.Identifier(c)) for c in statement.columns)
        conflict = statement.on_conflict
        if conflict is None:
            return sql.SQL(
                "with s as ({source}), i as (insert into {table} as t ({columns})"
                " select {selected} from s order by s.__n returning {row} as r) "
                "select json_build_object('rows', coalesce((select json_agg(i.r) from i), '[]'::json),"
                " 'inserted', coalesce((select json_agg(true) from i), '[]'::json))::text"
            ).format(source=source, table=table, columns=columns, selected=selected, row=_row("t", statement.returned))
        target = sql.SQL(", ").join(map(sql.Identifier, conflict.columns))
        if conflict.nothing:
            action = sql.SQL("do nothing")
        else:
            # Nothing to change still updates (a key column to itself): the row is locked and answered.
            updated = conflict.update or conflict.columns[:1]
            sets = sql.SQL(", ").join(
                sql.SQL("{} = excluded.{}").format(sql.Identifier(c), sql.Identifier(c)) for c in updated
            )
            action = sql.SQL("do update set {}").format(sets)
        returned = sql.SQL(", ").join(sql.SQL("t.{}").format(sql.Identifier(c)) for c in conflict.columns)
        matches_i = _equal_columns(conflict.columns, sql.Identifier("i"), sql.Identifier("s"))
        matches_e = _equal_columns(conflict.columns, sql.Identifier("e"), sql.Identifier("s"))
        previous = sql.SQL("")
        previous_member = sql.SQL("")
        lock = sql.SQL("")
        if statement.previous:
            # The insert reads the locked rows, so they are locked (and read as they were) before it writes.
            lock = sql.SQL(" cross join (select count(*) from p) as l")
            matches_p = _equal_columns(conflict.columns, sql.Identifier("p"), sql.Identifier("s"))
            previous = sql.SQL(", p as (select {} from {} p join s on {} for update of p)").format(
                _selected("p", statement.returned), table, matches_p
            )
            previous_member = sql.SQL(
                ", 'previous', (select json_agg(case when coalesce(i.x, false) then null else to_json(p.*) end"
                " order by s.__n) from s left join i on {} left join p on {})"
            ).format(matches_i, _equal_columns(conflict.columns, sql.Identifier("p"), sql.Identifier("s")))
        return sql.SQL(
            "with s as ({source}){previous}, i as (insert into {table} as t ({columns})"
            " select {selected} from s{lock} order by s.__n on conflict ({target}) {action}"
            " returning {row_t} as r, (t.xmax = 0) as x, {returned}) "
            "select json_build_object("
            "'rows', (select json_agg(coalesce(i.r, {row_e}) order by s.__n)"
            " from s left join i on {matches_i} left join {table} e on i.r is null and {matches_e}),"
            " 'inserted', (select json_agg(coalesce(i.x, false) order by s.__n) from s left join i on {matches_i})"
            "{previous_member})::text"
        ).format(
            source=source, previous=previous, table=table, columns=columns, selected=selected, target=target,
            action=action, returned=returned, matches_i=matches_i, matches_e=matches_e, previous_member=previous_member,
            lock=lock, row_t=_row("t", statement.returned), row_e=_row("e", statement.returned),
        )  # fmt: skip

    # --- update and delete -------------------------------------------------------------------------------------

    def _target(
        self,
        table: Table,
        where: Filter | None,
        version: Version | None,
        returned: tuple[str, ...] | None,
        *,
        lock: bool = True,
    ) -> sql.Composable:
        """The rows a write selects, locked: `target`, with their version as `__version` when one is checked.

        A delete that checks neither a version nor a limit needs no lock of its own (the DELETE locks what it
        deletes): `FOR UPDATE` needs the UPDATE privilege, which a role allowed only to delete lacks."""
        alias = sql.Identifier("t")
        condition = self.expressions.filter(where, alias) if where is not None else sql.SQL("true")
        version_column = sql.SQL("")
        if version is not None:
            expression = (
                sql.SQL("t.{}::text").format(sql.Identifier(version.column))
                if version.column
                else sql.SQL("t.xmin::text")
            )
            version_column = sql.SQL(", {} as __version").format(expression)
        return sql.SQL("select {}{} from {} t where {}{}").format(
            _selected("t", returned),
            version_column,
            qualified(table),
            condition,
            sql.SQL(" for update of t") if lock else sql.SQL(""),
        )

    def _allowed(self, version: Version | None, limit: object) -> sql.Composable:
        """The write happens only when the version matches and the rows are not more than the limit."""
        conditions = []
        if version is not None:
            conditions.append(sql.SQL(" and coalesce(target.__version = {}, false)").format(param(version.expected)))
        if limit is not None:
            conditions.append(sql.SQL(" and (select count(*) from target) <= {}").format(param(limit)))  # type: ignore[arg-type]
        return sql.SQL("").join(conditions)

    def update(self, statement: UpdateRows) -> sql.Composable:
        table = qualified(statement.table)
        sets = sql.SQL(", ").join(
            sql.SQL("{} = r.{}").format(sql.Identifier(column), sql.Identifier(column)) for column in statement.columns
        )
        match = _equal_columns(statement.key, sql.Identifier("u"), sql.Identifier("target"))
        previous = sql.SQL("")
        if statement.previous:
            join = _equal_columns(statement.key, sql.Identifier("p"), sql.Identifier("n"))
            previous = sql.SQL(
                ", 'previous', coalesce((select json_agg(to_json(p.*) order by n.__n)"
                " from (select c.*, row_number() over () as __n from c) n join target p on {}), '[]'::json)"
            ).format(join)
        return sql.SQL(
            "with target as ({target}), c as (update {table} u set {sets}"
            " from target, json_populate_record(null::{table}, {row}) r where {match}{allowed} returning {answered}) "
            "select json_build_object('matched', (select count(*) from target),"
            " 'rows', coalesce((select json_agg(to_json(c.*)) from c), '[]'::json){previous})::text"
        ).format(
            target=self._target(statement.table, statement.where, statement.version, statement.returned),
            table=table, sets=sets, row=param(statement.row), match=match,
            allowed=self._allowed(statement.version, statement.limit), previous=previous,
            answered=_selected("u", statement.returned),
        )  # fmt: skip

    def delete(self, statement: DeleteRows) -> sql.Composable:
        match = _equal_columns(statement.key, sql.Identifier("d"), sql.Identifier("target"))
        return sql.SQL(
            "with target as ({target}), g as (delete from {table} d using target where {match}{allowed}"
            " returning {answered}) "
            "select json_build_object('matched', (select count(*) from target),"
            " 'rows', coalesce((select json_agg(to_json(g.*)) from g), '[]'::json))::text"
        ).format(
            target=self._target(
                statement.table,
                statement.where,
                statement.version,
                statement.returned,
                lock=statement.version is not None or statement.limit is not None,
            ),
            table=qualified(statement.table),
            match=match,
            allowed=self._allowed(statement.version, statement.limit),
            answered=_selected("d", statement.returned),
        )

    # --- lookups, junction rows, sync ----------------------------------------------------------------------------

    def select(self, statement: SelectRows) -> sql.Composable:
        condition = self.expressions.filter(statement.where, sql.Identifier("t"))
        return sql.SQL(
            "select json_build_object('rows', coalesce(json_agg({}), '[]'::json))::text from {} t where {}"
        ).format(_row("t", statement.returned), qualified(statement.table), condition)

    def link(self, statement: LinkRows) -> sql.Composable:
        selected = sql.SQL(", ").join(sql.SQL("s.{}").format(sql.Identifier(c)) for c in statement.columns)
        return sql.SQL(
            "with s as ({source}), i as (insert into {table} ({columns}) select {selected} from s order by s.__n"
            " on conflict do nothing returning 1) "
            "select json_build_object('linked', (select count(*) from i))::text"
        ).format(
            source=_source(statement.table, statement.rows),
            table=qualified(statement.table),
            columns=_columns(statement.columns),
            selected=selected,
        )

    def sync(self, statement: SyncRows) -> sql.Composable:
        """One statement: update the children named, insert the new rows, delete the other children."""
        table = qualified(statement.table)

        parent = sql.SQL("json_populate_record(null::{}, {}) p").format(table, param(statement.parent))

        def of(alias: str) -> sql.Composable:
            """The children of this parent, under `alias`."""
            columns = sql.SQL(", ").join(
                sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c)) for c in statement.parent_columns
            )
            held = sql.SQL(", ").join(sql.SQL("p.{}").format(sql.Identifier(c)) for c in statement.parent_columns)
            return sql.SQL("({}) = (select {} from {})").format(columns, held, parent)

        def named(alias: str) -> sql.Composable:
            """A child of this parent is named by the row `alias`."""
            return sql.SQL("{} and {}").format(
                _equal_columns(statement.key, sql.Identifier("t"), sql.Identifier(alias)), of("t")
            )

        parts = [sql.SQL("s as ({})").format(_source(statement.table, statement.rows))]
        counts = []
        if statement.columns:
            targets = _columns(statement.columns)
            given = sql.SQL(", ").join(sql.SQL("r.{}").format(sql.Identifier(c)) for c in statement.columns)
            # A row's own values over the child's: what the row leaves out keeps its value.
            parts.append(
                sql.SQL(
                    "u as (update {t} t set ({targets}) = (select {given} from json_populate_record(t, s.__v) r)"
                    " from s where {named} returning 1)"
                ).format(t=table, targets=targets, given=given, named=named("s"))
            )
            counts.append(("updated", "u"))
        inserted = []
        for position, (columns, rows) in enumerate(statement.inserts):
            name = f"i{position}"
            parent_columns = [c for c in statement.parent_columns if c not in columns]
            values = [
                *(sql.SQL("r.{}").format(sql.Identifier(c)) for c in columns),
                *(sql.SQL("(select p.{} from {})").format(sql.Identifier(c), parent) for c in parent_columns),
            ]
            parts.append(
                sql.SQL(
                    "{name} as (insert into {t} ({columns}) select {values} from ({source}) r"
                    " where not exists (select from {t} t where {named}) order by r.__n returning 1)"
                ).format(
                    name=sql.Identifier(name),
                    t=table,
                    columns=_columns([*columns, *parent_columns]),
                    values=sql.SQL(", ").join(values),
                    source=_source(statement.table, rows),
                    named=named("r"),
                )  # fmt: skip
            )
            inserted.append(name)
        parts.append(
            sql.SQL(
                "d as (delete from {t} t where {parent} and not exists (select from s where {same}) returning 1)"
            ).format(
                t=table, parent=of("t"), same=_equal_columns(statement.key, sql.Identifier("t"), sql.Identifier("s"))
            )
        )
        members = [
            sql.SQL("'updated', (select count(*) from u)") if counts else sql.SQL("'updated', 0"),
            sql.SQL("'inserted', {}").format(
                sql.SQL(" + ").join(sql.SQL("(select count(*) from {})").format(sql.Identifier(n)) for n in inserted)
                if inserted
                else sql.SQL("0")
            ),
            sql.SQL("'deleted', (select count(*) from d)"),
        ]
        return sql.SQL("with {} select json_build_object({})::text").format(
            sql.SQL(", ").join(parts), sql.SQL(", ").join(members)
        )


def _source(table: Table, rows: object) -> sql.Composable:
    """The rows of a JSON array parameter, typed by the table's row type, numbered `n` in input order."""
    return sql.SQL(
        "select e.__n, e.__v, r.* from json_array_elements({}) with ordinality e(__v, __n)"
        " cross join lateral json_populate_record(null::{}, e.__v) r"
    ).format(param(rows), qualified(table))  # type: ignore[arg-type]


def _selected(alias: str, returned: tuple[str, ...] | None) -> sql.Composable:
    """`alias.*`, or the columns `returned` names (a role with column grants reads only those)."""
    if returned is None:
        return sql.SQL("{}.*").format(sql.Identifier(alias))
    return sql.SQL(", ").join(sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c)) for c in returned)


def _row(alias: str, returned: tuple[str, ...] | None) -> sql.Composable:
    """A row as JSON: `to_json(alias.*)`, or an object of the columns `returned` names."""
    if returned is None:
        return sql.SQL("to_json({}.*)").format(sql.Identifier(alias))
    return json_object([(c, sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c))) for c in returned])


def _columns(columns: tuple[str, ...] | list[str]) -> sql.Composable:
    return sql.SQL(", ").join(map(sql.Identifier, columns))


def _equal_columns(columns: tuple[str, ...], left: sql.Composable, right: sql.Composable) -> sql.Composable:
    return sql.SQL(" and ").join(
        sql.SQL("{}.{} = {}.{}").format(left, sql.Identifier(c), right, sql.Identifier(c)) for c in columns
    )
