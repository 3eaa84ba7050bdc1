"""How database values become JSON values (SPEC "Scalars and value mapping"; "Fields present on generated types").

BigInt and Decimal are strings; enums are their GraphQL values (a CASE over the labels that differ); ranges are
objects with their bounds; composites are objects of their attributes; a global ID is base64 of `<Type>:<key>`,
single-line.
"""

from collections.abc import Sequence
from typing import LiteralString

from psycopg import sql

from svc.plan import ColumnOutput, CompositeMap, EnumMap, RangeMap, ValueMap, ValueMapping

#: json_build_object takes at most 100 arguments: objects with more keys are built from a row instead.
_OBJECT_KEYS_LIMIT = 50


def json_object(pairs: Sequence[tuple[str, sql.Composable]]) -> sql.Composable:
    """A JSON object with the keys in order: json_build_object, or a row for more keys than it takes."""
    if len(pairs) <= _OBJECT_KEYS_LIMIT:
        return sql.SQL("json_build_object({})").format(
            sql.SQL(", ").join(sql.SQL("{}, {}").format(sql.Literal(key), value) for key, value in pairs)
        )
    columns = sql.SQL(", ").join(sql.SQL("{} as {}").format(value, sql.Identifier(key)) for key, value in pairs)
    return sql.SQL("(select row_to_json(o) from (select {}) o)").format(columns)


#: The mappings under which a value is its own JSON (`to_json`'s form).
AS_IS = frozenset({ValueMap.AS_IS, ValueMap.STRING, ValueMap.NUMBER, ValueMap.PLAIN})


def mapped(value: sql.Composable, mapping: ValueMapping) -> sql.Composable:
    if mapping in AS_IS:
        return value
    if mapping is ValueMap.TEXT:
        return sql.SQL("{}::text").format(value)
    if mapping is ValueMap.TEXT_ARRAY:
        return sql.SQL("{}::text[]").format(value)
    if isinstance(mapping, EnumMap):
        return _enum(value, mapping)
    if isinstance(mapping, RangeMap):
        return _range(value, mapping)
    assert isinstance(mapping, CompositeMap)
    members = [
        (output.key, mapped(sql.SQL("({}).{}").format(value, sql.Identifier(output.attribute)), output.map))
        for output in mapping.outputs
    ]
    # A composite whose attributes are all NULL `is null` too: its text form tells a NULL value apart.
    return sql.SQL("(case when {}::text is null then null else {} end)").format(value, json_object(members))


def _enum(value: sql.Composable, mapping: EnumMap) -> sql.Composable:
    if mapping.array:
        element = sql.SQL("e")
        each = _enum(element, EnumMap(mapping.labels))
        return sql.SQL(
            "(case when {v} is null then null else coalesce((select array_agg({each} order by n)"
            " from unnest({v}) with ordinality u(e, n)), '{{}}') end)"
        ).format(v=value, each=each)
    cases = sql.SQL(" ").join(
        sql.SQL("when {} then {}").format(sql.Literal(label), sql.Literal(graphql)) for label, graphql in mapping.labels
    )
    return sql.SQL("(case {}::text {} else {}::text end)").format(value, cases, value)


def _range(value: sql.Composable, mapping: RangeMap) -> sql.Composable:
    if mapping.array:
        item = sql.SQL("r")
        each = _range(
            item, RangeMap(mapping.start, mapping.end, mapping.value_key, mapping.inclusive_key, mapping.bound)
        )
        return sql.SQL(
            "(case when {v} is null then null else coalesce((select json_agg({each} order by n)"
            " from unnest({v}) with ordinality u(r, n)), '[]'::json) end)"
        ).format(v=value, each=each)
    members: list[tuple[str, sql.Composable]] = []
    sides: tuple[tuple[str | None, LiteralString], ...] = ((mapping.start, "lower"), (mapping.end, "upper"))
    for key, side in sides:
        if key is None:
            continue
        bound: list[tuple[str, sql.Composable]] = []
        if mapping.value_key is not None:
            bound.append((mapping.value_key, mapped(sql.SQL("{}({})").format(sql.SQL(side), value), mapping.bound)))
        if mapping.inclusive_key is not None:
            bound.append((mapping.inclusive_key, sql.SQL("{}_inc({})").format(sql.SQL(side), value)))
        members.append(
            (
                key,
                sql.SQL("(case when {}_inf({}) or isempty({}) then null else {} end)").format(
                    sql.SQL(side), value, value, json_object(bound)
                ),
            )
        )
    return sql.SQL("(case when {} is null then null else {} end)").format(value, json_object(members))


def row_object(outputs: Sequence[ColumnOutput], row: sql.Identifier) -> sql.Composable:
    """The JSON object of `row`'s columns under their keys, each value mapped (a REST row of plain columns)."""
    return json_object(
        [(o.key, mapped(sql.SQL("{}.{}").format(row, sql.Identifier(o.column)), o.map)) for o in outputs]
    )


def global_id(type_name: str, key: sql.Composable) -> sql.Composable:
    """base64 of `<Type>:<key>`, without the line breaks base64 inserts every 76 characters."""
    prefix = sql.Literal(f"{type_name}:")
    return sql.SQL("translate(encode(convert_to({} || {}::text, 'UTF8'), 'base64'), E'\\n', '')").format(prefix, key)


def carried_setting(output: str) -> str:
    """The transaction's setting a write leaves its output `output` in (`keys`, `rows`, `previous`) for the
    payload read sent with it (`compile_write(carried=...)`, `compile_carried`)."""
    return f"svc.write_{output}"
