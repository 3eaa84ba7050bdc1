"""Resolve the configuration sections keyed by database names (`entities`, `functions`, `types`) against the
catalog: each key must name something that exists, else the problem names it (SPEC "Configuration").

`entities.<table>` takes a table name, or `schema.table` where two exposed schemas hold the same name.
"""

from collections.abc import Mapping

from svc.catalog import Catalog, Relation, RelationKind
from svc.config import Config, EntityConfig, FunctionConfig


class ModelError(Exception):
    """The configuration does not fit the database; `problems` holds one line per problem, each naming its key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def resolve_entities(catalog: Catalog, config: Config, problems: list[str]) -> dict[tuple[str, str], EntityConfig]:
    """`entities.<key>` per (schema, table); unknown or ambiguous keys, columns and foreign keys are problems."""
    by_name: dict[str, list[Relation]] = {}
    for relation in catalog.relations:
        by_name.setdefault(relation.name, []).append(relation)
        by_name.setdefault(f"{relation.schema}.{relation.name}", []).append(relation)
    resolved: dict[tuple[str, str], EntityConfig] = {}
    for key, entity in config.entities.items():
        found = by_name.get(key, [])
        if not found:
            problems.append(f"entities.{key}: no table, view or foreign table {key!r} in {_schemas(catalog)}")
            continue
        if len(found) > 1:
            names = ", ".join(f"{r.schema}.{r.name}" for r in found)
            problems.append(f"entities.{key}: ambiguous ({names}); write it as schema.table")
            continue
        relation = found[0]
        _check_entity(relation, entity, f"entities.{key}", catalog, problems)
        resolved[relation.schema, relation.name] = entity
    return resolved


def _check_entity(relation: Relation, entity: EntityConfig, path: str, catalog: Catalog, problems: list[str]) -> None:
    columns = {column.name for column in relation.columns}
    for name in entity.columns:
        if name not in columns:
            problems.append(f"{path}.columns.{name}: no column {name!r} in {relation.schema}.{relation.name}")
    for name in entity.primary_key or ():
        if name not in columns:
            problems.append(f"{path}.primary_key: no column {name!r} in {relation.schema}.{relation.name}")
    if entity.events is not None and relation.kind not in (RelationKind.TABLE, RelationKind.PARTITIONED_TABLE):
        problems.append(f"{path}.events: {relation.schema}.{relation.name} is not a table: only tables have events")
    if entity.version_column is not None and entity.version_column not in columns:
        problems.append(f"{path}.version_column: no column {entity.version_column!r} in {relation.name}")
    declared = {fk.name for fk in relation.foreign_keys}
    for name, fk in entity.foreign_keys.items():
        if fk.columns is None and fk.references is None:
            if name not in declared:
                problems.append(f"{path}.foreign_keys.{name}: no foreign key {name!r} on {relation.name}")
            continue
        if fk.columns is None or fk.references is None:
            problems.append(f"{path}.foreign_keys.{name}: a virtual foreign key needs both columns and references")
            continue
        for column in fk.columns:
            if column not in columns:
                problems.append(f"{path}.foreign_keys.{name}.columns: no column {column!r} in {relation.name}")
        target = find_relation(catalog, fk.references.table, relation.schema)
        if target is None:
            problems.append(f"{path}.foreign_keys.{name}.references.table: no table {fk.references.table!r}")
            continue
        target_columns = fk.references.columns or (target.primary_key.columns if target.primary_key else ())
        if not target_columns:
            problems.append(
                f"{path}.foreign_keys.{name}.references.columns: {target.name} has no primary key; name the columns"
            )
        elif len(target_columns) != len(fk.columns):
            problems.append(f"{path}.foreign_keys.{name}: {len(fk.columns)} columns reference {len(target_columns)}")
        for column in target_columns:
            if target.column(column) is None:
                problems.append(f"{path}.foreign_keys.{name}.references.columns: no column {column!r} in {target.name}")


def resolve_functions(catalog: Catalog, config: Config, problems: list[str]) -> Mapping[str, FunctionConfig]:
    """`functions.<name>` (or `schema.name`); the mounted table and argument columns must exist too."""
    names = {f.name for f in catalog.functions} | {f"{f.schema}.{f.name}" for f in catalog.functions}
    for key, function in config.functions.items():
        if key not in names:
            problems.append(f"functions.{key}: no function {key!r} in {_schemas(catalog)}")
            continue
        if function.mount is not None:
            table = find_relation(catalog, function.mount.on, None)
            if table is None:
                problems.append(f"functions.{key}.mount.on: no table {function.mount.on!r}")
                continue
            for argument, column in function.mount.arguments.items():
                if table.column(column) is None:
                    problems.append(f"functions.{key}.mount.arguments.{argument}: no column {column!r} in {table.name}")
    return config.functions


def check_types(catalog: Catalog, config: Config, problems: list[str]) -> None:
    """`types.<name>` names a type of the exposed schemas, or `<table>.<column>` a column closed by a CHECK list."""
    type_names = {t.name for t in catalog.types.values() if t.schema in catalog.schemas}
    for key, type_config in config.types.items():
        table_name, dot, column_name = key.rpartition(".")
        if dot and table_name:
            table = find_relation(catalog, table_name, None)
            column = table.column(column_name) if table else None
            closed = table is not None and any(
                check.allowed_values and check.columns == (column_name,) for check in table.checks
            )
            if column is None or not closed:
                problems.append(f"types.{key}: no column {key!r} closed by a CHECK list of values")
            continue
        if key not in type_names:
            problems.append(f"types.{key}: no type {key!r} in {_schemas(catalog)}")
            continue
        pg = next(t for t in catalog.types.values() if t.name == key and t.schema in catalog.schemas)
        for label in type_config.values:
            if label not in pg.enum_labels:
                problems.append(f"types.{key}.values.{label}: {key} has no label {label!r}")
        attribute_names = {a.name for a in pg.attributes}
        for attribute in type_config.attributes:
            if attribute not in attribute_names:
                problems.append(f"types.{key}.attributes.{attribute}: {key} has no attribute {attribute!r}")


def find_relation(catalog: Catalog, key: str, default_schema: str | None) -> Relation | None:
    """The relation a configuration value names (`table` or `schema.table`), preferring `default_schema`."""
    schema, dot, name = key.rpartition(".")
    if dot:
        return catalog.relation(schema, name)
    if default_schema is not None and (found := catalog.relation(default_schema, key)):
        return found
    return next((r for r in catalog.relations if r.name == key), None)


def _schemas(catalog: Catalog) -> str:
    return ", ".join(catalog.schemas) or "the configured schemas"
