"""`<Type>ErrorCode`: every code a table's writes can fail with, derived from its constraints (SPEC "Errors" ->
constraint violations).

| constraint | code |
|---|---|
| primary key, unique constraint or unique index (partial, expression) | `<COLUMNS>_TAKEN` |
| foreign key, referencing row | `<RELATION>_NOT_FOUND` |
| foreign key, referenced row deleted or re-keyed | `REFERENCED_BY_<RELATION>` (on the referenced table) |
| CHECK | its name when chosen, else `<COLUMNS>_INVALID` |
| exclusion | its name when chosen, else `<COLUMNS>_CONFLICT` |
| NOT NULL | `<FIELD>_REQUIRED` |
| a domain's CHECK | `<COLUMN>_INVALID` |
| version mismatch | `STALE_VERSION` (tables with a key) |
| varchar/char length, numeric precision (checked before SQL) | `<FIELD>_TOO_LONG`, `<FIELD>_OUT_OF_RANGE` |

COLUMNS are the column names in upper snake case joined by `_` (`EMAIL_TAKEN`, `ORG_ID_SLUG_TAKEN`); FIELD is the
API field name (`DISPLAY_NAME_REQUIRED`). Identity-always and generated columns are never written, so they give no
`_REQUIRED`. Two constraints giving the same code share it; the database may report either name
(`ErrorCode.aliases`).
"""

from collections.abc import Iterable

from svc.catalog import Catalog, ForeignKey, Relation, TypeKind

from ._entities import EntityRef, ErrorCode, ErrorKind, Field
from ._entities import Relation as RelationField
from ._naming import camel, upper_snake


class ErrorCodes:
    """Collects codes in order, merging constraints that give the same code."""

    def __init__(self) -> None:
        self._codes: dict[str, ErrorCode] = {}

    def add(
        self, code: str, kind: ErrorKind, constraint: str | None, columns: Iterable[str], aliases: Iterable[str] = ()
    ) -> None:
        existing = self._codes.get(code)
        if existing is None:
            self._codes[code] = ErrorCode(code, kind, constraint, tuple(columns), tuple(aliases))
            return
        more = tuple(name for name in (constraint, *aliases) if name and name != existing.constraint)
        self._codes[code] = ErrorCode(
            code, existing.kind, existing.constraint, existing.columns, existing.aliases + more
        )

    def result(self) -> tuple[ErrorCode, ...]:
        return tuple(self._codes.values())


def error_codes(
    relation: Relation,
    *,
    fields: tuple[Field, ...],
    relations: tuple[RelationField, ...],
    incoming: Iterable[tuple[ForeignKey, EntityRef, RelationField | None]],
    keys: Iterable[ForeignKey],
    catalog: Catalog,
    has_key: bool,
) -> tuple[ErrorCode, ...]:
    """The codes of one table. `incoming` are the keys of other tables referring here, with the reverse relation
    field when one is exposed; `keys` are this table's own foreign keys (virtual ones included)."""
    names = {field.column: field.name for field in fields}

    def columns_code(columns: Iterable[str]) -> str:
        return "_".join(upper_snake(column) for column in columns)

    codes = ErrorCodes()
    unique = [key for key in (relation.primary_key, *relation.unique_keys) if key is not None]
    for key in unique:
        codes.add(f"{columns_code(key.columns)}_TAKEN", ErrorKind.UNIQUE, key.name, key.columns)
    to_one = {r.foreign_key: r for r in relations if r.holds_key}
    for fk in keys:
        relation_field = to_one.get(fk.name)
        subject = upper_snake(relation_field.name) if relation_field else columns_code(fk.columns)
        codes.add(f"{subject}_NOT_FOUND", ErrorKind.FOREIGN_KEY, fk.name, fk.columns, fk.partition_constraints)
    for fk, child, reverse in incoming:
        subject = upper_snake(reverse.name) if reverse else f"{upper_snake(child.table)}_{columns_code(fk.columns)}"
        codes.add(f"REFERENCED_BY_{subject}", ErrorKind.REFERENCED_BY, fk.name, fk.columns, fk.partition_constraints)
    for check in relation.checks:
        code = upper_snake(check.name) if check.name_chosen else f"{columns_code(check.columns)}_INVALID"
        codes.add(code, ErrorKind.CHECK, check.name, check.columns)
    for exclusion in relation.exclusions:
        code = upper_snake(exclusion.name) if exclusion.name_chosen else f"{columns_code(exclusion.columns)}_CONFLICT"
        codes.add(code, ErrorKind.EXCLUSION, exclusion.name, exclusion.columns)
    for column in relation.columns:
        field = names.get(column.name) or camel(column.name)
        if column.not_null and not column.generated and column.identity != "a":
            codes.add(f"{upper_snake(field)}_REQUIRED", ErrorKind.NOT_NULL, None, (column.name,))
        pg = catalog.types.get(column.type_oid)
        if pg is not None and pg.kind is TypeKind.DOMAIN and _domain_checks(pg.oid, catalog):
            codes.add(f"{upper_snake(field)}_INVALID", ErrorKind.DOMAIN_CHECK, None, (column.name,))
    if has_key:
        codes.add("STALE_VERSION", ErrorKind.STALE_VERSION, None, ())
    for column in relation.columns:
        field = names.get(column.name) or camel(column.name)
        if column.max_length is not None:
            codes.add(f"{upper_snake(field)}_TOO_LONG", ErrorKind.TOO_LONG, None, (column.name,))
        if column.numeric_precision is not None:
            codes.add(f"{upper_snake(field)}_OUT_OF_RANGE", ErrorKind.OUT_OF_RANGE, None, (column.name,))
    return codes.result()


def _domain_checks(oid: int, catalog: Catalog) -> bool:
    """A domain has checks of its own or through the domain it is based on."""
    pg = catalog.types.get(oid)
    while pg is not None and pg.kind is TypeKind.DOMAIN:
        if pg.domain_checks:
            return True
        pg = catalog.types.get(pg.base_oid) if pg.base_oid is not None else None
    return False
