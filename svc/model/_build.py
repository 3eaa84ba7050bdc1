"""Build the API model from the catalog facts and the configuration (SPEC "Naming", "Root fields per table",
"Fields present on generated types", "Configuration sections that adjust the generated APIs").

Order of work: resolve the configuration against the catalog (unknown names are problems); choose each exposed
table's type name (configuration, then `@name` hint, then the English singular; schema-prefixed on collisions with
the service's own types or another schema's table, with a warning); map columns to fields; derive relations,
functions, error codes and operations; then check that no two generated types or root fields share a name.
"""

from collections import Counter
from collections.abc import Mapping

from svc.catalog import Catalog, ForeignKey, PgType, Relation, RelationKind, TypeKind
from svc.config import ColumnConfig, Config, EntityConfig, FunctionConfig

from ._config import ModelError, check_types, resolve_entities, resolve_functions
from ._entities import (
    Arc,
    ComputedField,
    Deprecation,
    Entity,
    EntityEvents,
    EntityRef,
    Field,
    Hierarchy,
    JsonSchemaCheck,
    Lookup,
    Model,
    Operation,
    RootNames,
    TemporalKey,
    TypeNames,
    ValueKind,
)
from ._entities import Relation as RelationField
from ._errors import error_codes
from ._functions import build_functions
from ._hints import read_hints
from ._json_schemas import json_schema_problem
from ._naming import camel, is_graphql_name, lower_first, pascal, plural_type_name, type_name
from ._relations import Side, build_relations, foreign_keys
from ._reserved import SERVICE_TYPE_NAMES, composite_type_names, enum_type_names, range_type_names
from ._search import entity_search
from ._subtypes import with_subtypes
from ._values import TypeMapper, UnsupportedType

#: Fields every entity type may carry besides its columns.
_BUILT_IN_FIELDS = ("id", "databaseId", "rowVersion")
_VIEW_KINDS = frozenset({RelationKind.VIEW, RelationKind.MATERIALIZED_VIEW})


def build_model(catalog: Catalog, config: Config) -> Model:
    """The model, or ModelError listing every problem (each naming the configuration key or the database object)."""
    problems: list[str] = []
    entity_configs = resolve_entities(catalog, config, problems)
    function_configs = resolve_functions(catalog, config, problems)
    check_types(catalog, config, problems)
    if problems:
        raise ModelError(problems)
    return _Builder(catalog, config, entity_configs, function_configs).build()


class _Builder:
    def __init__(
        self,
        catalog: Catalog,
        config: Config,
        entity_configs: Mapping[tuple[str, str], EntityConfig],
        function_configs: Mapping[str, FunctionConfig],
    ) -> None:
        self.catalog = catalog
        self.config = config
        self.entity_configs = entity_configs
        self.function_configs = function_configs
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.mapper = TypeMapper(catalog, config.types, self._database_type_name)
        expose = config.extensions.expose
        self.exposed_extensions = lambda extension: extension is None or "*" in expose or extension in expose
        self.relations = [
            r
            for r in catalog.relations
            if not self._config(r).omit and self.exposed_extensions(r.extension) and r.schema in catalog.schemas
        ]

    def _config(self, relation: Relation) -> EntityConfig:
        return self.entity_configs.get((relation.schema, relation.name), EntityConfig())

    def _events(self, relation: Relation, config: EntityConfig) -> EntityEvents | None:
        if config.events is None:
            return None
        first = relation.schema == self.config.database.schemas[0]
        return EntityEvents(
            name=relation.name if first else f"{relation.schema}.{relation.name}",
            operations=tuple(op for op in ("insert", "update", "delete") if op in config.events.operations),
            target=config.events.target,
            description=config.events.description,
        )

    # --- the whole model ---------------------------------------------------------------------------------------

    def build(self) -> Model:
        names = self._type_names()
        fields = {self._ref(r): self._fields(r, names[self._ref(r)][0]) for r in self.relations}
        keys = {self._ref(r): self._primary_key(r) for r in self.relations}
        sides = {
            self._ref(r): Side(
                r, self._config(r), *names[self._ref(r)], frozenset(f.name for f in fields[self._ref(r)])
            )
            for r in self.relations
        }
        relations = build_relations(sides, self.problems)
        oid_to_ref = {r.type_oid: self._ref(r) for r in self.relations}
        functions = build_functions(
            self.catalog,
            configs=self.function_configs,
            entity_of_type=oid_to_ref.get,
            mapper=self.mapper,
            exposed_extensions=self.exposed_extensions,
            warnings=self.warnings,
        )
        incoming: dict[EntityRef, list[tuple[ForeignKey, EntityRef, RelationField | None]]] = {ref: [] for ref in sides}
        for ref, side in sides.items():
            for fk in foreign_keys(side, sides):
                target = EntityRef(fk.target_schema, fk.target_name)
                reverse = next((r for r in relations.fields[target] if r.foreign_key == fk.name and r.target == ref
                                and r.junction is None), None)  # fmt: skip
                incoming[target].append((fk, ref, reverse))
        entities = []
        for relation in self.relations:
            ref = self._ref(relation)
            type_name_, plural = names[ref]
            entity_fields = fields[ref]
            computed = functions.computed.get(ref, ())
            hierarchies = (*relations.hierarchies[ref], *_path_hierarchies(entity_fields))
            self._check_field_names(
                type_name_, entity_fields, (*relations.fields[ref], *relations.arcs[ref]), computed, hierarchies
            )
            primary_key = keys[ref]
            config = self._config(relation)
            hints = read_hints(relation.comment)
            entities.append(
                Entity(
                    schema=relation.schema,
                    table=relation.name,
                    kind=relation.kind,
                    type_name=type_name_,
                    plural_name=plural,
                    roots=self._roots(type_name_, plural, config),
                    fields=entity_fields,
                    primary_key=primary_key,
                    lookups=self._lookups(relation, type_name_, primary_key, entity_fields, config),
                    relations=relations.fields[ref],
                    hierarchies=hierarchies,
                    arcs=relations.arcs[ref],
                    computed=computed,
                    operations=self._operations(relation, primary_key, config),
                    withheld=self._operations(relation, primary_key, EntityConfig())
                    & frozenset(Operation(name) for name in config.omit_operations),
                    error_codes=error_codes(
                        relation,
                        fields=entity_fields,
                        relations=relations.fields[ref],
                        incoming=incoming[ref],
                        keys=foreign_keys(sides[ref], sides),
                        catalog=self.catalog,
                        has_key=primary_key is not None,
                    ),
                    description=config.description or hints.description,
                    deprecation=Deprecation(config.deprecated) if config.deprecated else hints.deprecation,
                    version_column=config.version_column,
                    upsertable=relation.kind is not RelationKind.FOREIGN_TABLE,
                    copy_inserts=relation.kind in (RelationKind.TABLE, RelationKind.PARTITIONED_TABLE)
                    and not relation.has_rules
                    and not relation.rls_enabled,
                    events=self._events(relation, config),
                    search=entity_search(relation, self.catalog, entity_fields, primary_key),
                    temporal=self._temporal_key(relation, entity_fields, relations.fields[ref], computed),
                )
            )
        model = Model(
            entities=with_subtypes(entities, {ref: foreign_keys(side, sides) for ref, side in sides.items()}),
            functions=functions.roots,
            enums=tuple(self.mapper.enums.values()),
            composites=tuple(self.mapper.composites.values()),
            ranges=tuple(self.mapper.ranges.values()),
            records=functions.records,
            warnings=tuple(self.warnings),
        )
        self._check_type_names(model)
        self._check_root_fields(model)
        if self.problems:
            raise ModelError(self.problems)
        return model

    @staticmethod
    def _ref(relation: Relation) -> EntityRef:
        return EntityRef(relation.schema, relation.name)

    # --- type names --------------------------------------------------------------------------------------------

    def _type_names(self) -> dict[EntityRef, tuple[str, str]]:
        """(type name, plural name) per exposed table, prefixed with the schema where SPEC "Naming" says so."""
        chosen: dict[EntityRef, tuple[str, str]] = {}
        derived: dict[EntityRef, tuple[str, str]] = {}
        for relation in self.relations:
            ref = self._ref(relation)
            name = self._config(relation).type_name or read_hints(relation.comment).name
            if name is not None:
                if name in SERVICE_TYPE_NAMES:
                    self.problems.append(
                        f"entities.{relation.name}.type_name: {name!r} is one of the service's own types"
                    )
                elif not is_graphql_name(name):
                    self.problems.append(f"entities.{relation.name}.type_name: {name!r} is not a GraphQL name")
                chosen[ref] = (name, plural_type_name(name))
            else:
                derived[ref] = (type_name(relation.name), plural_type_name(relation.name))
        schemas_of: dict[str, set[str]] = {}
        for ref, (name, _) in derived.items():
            schemas_of.setdefault(name, set()).add(ref.schema)
        chosen_names = {name for name, _ in chosen.values()}
        names = dict(chosen)
        for ref, (name, plural) in derived.items():
            other_schema = len(schemas_of[name]) > 1
            if name in SERVICE_TYPE_NAMES or other_schema or name in chosen_names:
                prefix = pascal(ref.schema)
                names[ref] = (prefix + name, prefix + plural)
                why = "another schema's table" if other_schema else "one of the service's own types"
                self.warnings.append(
                    f"table {ref.schema}.{ref.table} is served as type {prefix + name}: its name {name} collides with"
                    f" {why}; set entities.{ref.schema}.{ref.table}.type_name to choose another"
                )
            else:
                names[ref] = (name, plural)
        # An entity whose type name is another entity's generated name (a table named `post_filters` next to
        # `posts`) takes its schema's prefix too.
        generated = {n for ref, (t, p) in names.items() for n in TypeNames.of(t, p).all() if n != t}
        for ref, (name, plural) in list(names.items()):
            if name in generated and ref in derived:
                prefix = pascal(ref.schema)
                names[ref] = (prefix + name, prefix + plural)
                self.warnings.append(
                    f"table {ref.schema}.{ref.table} is served as type {prefix + name}: {name} is a type generated for"
                    f" another table; set entities.{ref.schema}.{ref.table}.type_name to choose another"
                )
        return names

    def _database_type_name(self, pg: PgType) -> str:
        """A database type's GraphQL name (enums, composites, ranges): `types.<name>.type_name`, hint, PascalCase."""
        config = self.config.types.get(pg.name)
        name = (config.type_name if config else None) or read_hints(pg.comment).name or pascal(pg.name)
        if name in SERVICE_TYPE_NAMES:
            prefix = pascal(pg.schema)
            self.warnings.append(
                f"type {pg.schema}.{pg.name} is served as {prefix + name}: {name} is one of the service's own types;"
                f" set types.{pg.name}.type_name to choose another"
            )
            return prefix + name
        return name

    def _json_schema(self, relation: Relation, column: str, type_oid: int) -> JsonSchemaCheck | None:
        """The JSON Schema a column's CHECK, or its domain's (through the domains it is based on), holds it to;
        none while `extensions.integrations.pg_jsonschema` is off."""
        if self.config.extensions.integrations.pg_jsonschema == "off":
            return None
        found = next(
            (
                JsonSchemaCheck(check.json_schema, f"Json.{relation.name}.{column}", constraint=check.name)
                for check in relation.checks
                if check.json_schema is not None and check.columns == (column,)
            ),
            None,
        )
        pg = self.catalog.types.get(type_oid)
        while found is None and pg is not None and pg.kind is TypeKind.DOMAIN:
            schema = next((c.json_schema for c in pg.domain_checks if c.json_schema is not None), None)
            if schema is not None:
                found = JsonSchemaCheck(schema, f"Json.{self._database_type_name(pg)}", domain=True)
            pg = self.catalog.types.get(pg.base_oid) if pg.base_oid is not None else None
        problem = json_schema_problem(found.schema) if found is not None else None
        if problem is not None:
            self.warnings.append(
                f"column {relation.name}.{column}: its JSON Schema check is not checked before writes ({problem})"
            )
            return None
        return found

    # --- fields, keys, lookups, operations, root names ---------------------------------------------------------

    def _fields(self, relation: Relation, entity_type: str) -> tuple[Field, ...]:
        config = self._config(relation)
        fields: list[Field] = []
        key = self._primary_key(relation)
        single_key = key is not None and len(key) == 1
        for column in relation.columns:
            column_config = config.columns.get(column.name, ColumnConfig())
            if column_config.omit:
                continue
            hints = read_hints(column.comment)
            name = rest_name = column_config.field_name or hints.name or camel(column.name)
            if name == "id" and single_key and not column_config.field_name:
                name = "rowId"  # `id` is the global ID of a type with a single-column key
            elif name in _BUILT_IN_FIELDS and name != "id" and not column_config.field_name:
                name = f"{name}Column"
            try:
                value = self.mapper.value_type(column.type_oid)
            except UnsupportedType as exc:
                self.warnings.append(
                    f"column {relation.name}.{column.name} is not served: its type {exc} has no API type"
                )
                continue
            closed = next(
                (c.allowed_values for c in relation.checks if c.allowed_values and c.columns == (column.name,)), None
            )
            if closed and value.kind is ValueKind.SCALAR and value.name == "String":
                value = self.mapper.check_enum(entity_type, relation.name, name, column.name, closed)
            bounds = [c.bounds for c in relation.checks if c.bounds is not None and c.columns == (column.name,)]
            json_schema = self._json_schema(relation, column.name, column.type_oid)
            written = not column.generated and column.identity != "a"
            fields.append(
                Field(
                    name=name,
                    column=column.name,
                    type=value,
                    nullable=not column.not_null,
                    description=column_config.description or hints.description,
                    deprecation=hints.deprecation,
                    insertable=written,
                    updatable=written,
                    optional_on_create=not column.not_null or column.has_default or column.identity is not None
                    or column.generated,
                    max_length=column.max_length,
                    numeric_precision=column.numeric_precision,
                    numeric_scale=column.numeric_scale,
                    bounds=bounds[0] if len(bounds) == 1 else None,
                    json_schema=json_schema,
                    orderable=self.mapper.orderable(value),
                    rest_name=rest_name if name == "rowId" else name,
                )
            )  # fmt: skip
        return tuple(fields)

    def _primary_key(self, relation: Relation) -> tuple[str, ...] | None:
        configured = self._config(relation).primary_key
        if configured:
            return configured
        return relation.primary_key.columns if relation.primary_key else None

    def _temporal_key(
        self,
        relation: Relation,
        fields: tuple[Field, ...],
        relations: tuple[RelationField, ...],
        computed: tuple[ComputedField, ...],
    ) -> TemporalKey | None:
        """The primary key (else a unique key) declared `WITHOUT OVERLAPS`, when its columns are exposed and its
        period's element type is known; `history` unless a field already has that name."""
        keys = [relation.primary_key, *relation.unique_keys]
        key = next((k for k in keys if k is not None and k.without_overlaps), None)
        exposed = {field.column for field in fields}
        if key is None or not set(key.columns) <= exposed:
            return None
        *columns, period = key.columns
        column = relation.column(period)
        assert column is not None
        instant = _instant_type(self.catalog, column.type_oid)
        if instant is None:
            return None
        taken = {f.name for f in fields} | {r.name for r in relations} | {c.name for c in computed}
        return TemporalKey(tuple(columns), period, instant, None if "history" in taken else "history")

    def _lookups(
        self,
        relation: Relation,
        entity_type: str,
        primary_key: tuple[str, ...] | None,
        fields: tuple[Field, ...],
        config: EntityConfig,
    ) -> tuple[Lookup, ...]:
        exposed = {field.column: field.name for field in fields}
        single = config.single_field or lower_first(entity_type)
        lookups = []
        if primary_key and all(c in exposed for c in primary_key):
            constraint = relation.primary_key.name if relation.primary_key else f"{relation.name}_declared_key"
            lookups.append(Lookup(single, primary_key, True, constraint))
        for key in relation.unique_keys:
            if key.is_plain and all(c in exposed for c in key.columns) and key.columns != primary_key:
                name = f"{single}By{'And'.join(pascal(exposed[c]) for c in key.columns)}"
                if name not in {lookup.name for lookup in lookups}:
                    lookups.append(Lookup(name, key.columns, False, key.name))
        return tuple(lookups)

    def _operations(
        self, relation: Relation, primary_key: tuple[str, ...] | None, config: EntityConfig
    ) -> frozenset[Operation]:
        operations = set(Operation)
        if relation.kind in _VIEW_KINDS or relation.kind is RelationKind.FOREIGN_TABLE:
            writable_view = relation.kind is not RelationKind.MATERIALIZED_VIEW and (
                relation.kind is RelationKind.FOREIGN_TABLE or primary_key is not None
            )
            if not (writable_view and relation.insertable):
                operations.discard(Operation.CREATE)
            if not (writable_view and relation.updatable):
                operations.discard(Operation.UPDATE)
            if not (writable_view and relation.deletable):
                operations.discard(Operation.DELETE)
        if primary_key is None:
            operations -= {Operation.UPDATE, Operation.DELETE}
            if not any(key.is_plain for key in relation.unique_keys):
                operations.discard(Operation.READ)
        return frozenset(operations - {Operation(name) for name in config.omit_operations})

    def _roots(self, entity_type: str, plural: str, config: EntityConfig) -> RootNames:
        many = lower_first(plural)
        listed = config.list_field or many
        return RootNames(
            single=config.single_field or lower_first(entity_type),
            list=listed,
            connection=config.connection_field or f"{many}Connection",
            create=f"create{entity_type}",
            create_many=f"create{plural}",
            update=f"update{entity_type}",
            update_by_node_id=f"update{entity_type}ByNodeId",
            update_many=f"update{plural}",
            delete=f"delete{entity_type}",
            delete_by_node_id=f"delete{entity_type}ByNodeId",
            delete_many=f"delete{plural}",
        )

    # --- checks ------------------------------------------------------------------------------------------------

    def _check_field_names(
        self,
        entity_type: str,
        fields: tuple[Field, ...],
        relations: tuple[RelationField | Arc, ...],
        computed: tuple[ComputedField, ...],
        hierarchies: tuple[Hierarchy, ...],
    ) -> None:
        seen: Counter[str] = Counter()
        for item in (*fields, *relations, *computed):
            seen[item.name] += 1
        for hierarchy in hierarchies:
            seen[hierarchy.ancestors] += 1
            seen[hierarchy.descendants] += 1
        for name, count in seen.items():
            if count > 1:
                self.problems.append(
                    f"{entity_type}.{name}: {count} fields share this name; rename one with a field_name setting"
                )

    def _check_type_names(self, model: Model) -> None:
        owners: dict[str, list[str]] = {}
        for entity in model.entities:
            for name in entity.names.all():
                owners.setdefault(name, []).append(f"table {entity.schema}.{entity.table}")
            for arc in entity.arcs:
                for name in (arc.type_name, arc.input_name, arc.connect_name):
                    owners.setdefault(name, []).append(f"exclusive arc {entity.table}.{arc.check}")
        for enum in model.enums:
            for name in enum_type_names(enum.name):
                owners.setdefault(name, []).append(f"enum {enum.sql_type}")
        for composite in model.composites:
            for name in composite_type_names(composite.name):
                owners.setdefault(name, []).append(f"type {composite.sql_type}")
        for range_type in model.ranges:
            for name in range_type_names(range_type.name):
                owners.setdefault(name, []).append(f"range {range_type.sql_type}")
        for record in model.records:
            owners.setdefault(record.name, []).append(f"the result of a function ({record.name})")
        for name, found in owners.items():
            distinct = sorted(set(found))
            if len(distinct) > 1:
                self.problems.append(
                    f"type {name} would be generated for {' and '.join(distinct)}; set a type_name"
                    " (entities.<table>.type_name or types.<name>.type_name) for one of them"
                )

    def _check_root_fields(self, model: Model) -> None:
        query: dict[str, list[str]] = {"node": ["the node field"], "globalSearch": ["the global search field"]}
        mutation: dict[str, list[str]] = {}
        for entity in model.entities:
            what = f"table {entity.schema}.{entity.table}"
            for name in entity.query_fields():
                query.setdefault(name, []).append(what)
            for name in entity.mutation_fields():
                mutation.setdefault(name, []).append(what)
        for function in model.functions:
            target = mutation if function.mutation else query
            target.setdefault(function.name, []).append(f"function {function.schema}.{function.function}")
        for root, fields in (("Query", query), ("Mutation", mutation)):
            for name, found in fields.items():
                if len(set(found)) > 1:
                    self.problems.append(
                        f"{root}.{name} would be generated for {' and '.join(sorted(set(found)))}; rename one"
                        " (functions.<name>.field_name, or entities.<table>.single_field/list_field/type_name)"
                    )


def _path_hierarchies(fields: tuple[Field, ...]) -> tuple[Hierarchy, ...]:
    """`<field>Ancestors`/`<field>Descendants` of every ltree column (SPEC "Fields present on generated types")."""
    return tuple(
        Hierarchy(f"{f.name}Ancestors", f"{f.name}Descendants", pairs=(), foreign_key=None, path=f.column)
        for f in fields
        if f.type.kind is ValueKind.SCALAR and f.type.sql_name == "ltree"
    )


def _instant_type(catalog: Catalog, type_oid: int) -> str | None:
    """An instant of a period column's type (a range or multirange, or a domain over one): the range's element."""
    pg = catalog.types.get(type_oid)
    while pg is not None and pg.kind is TypeKind.DOMAIN and pg.base_oid is not None:
        pg = catalog.types.get(pg.base_oid)
    if pg is not None and pg.kind is TypeKind.MULTIRANGE and pg.multirange_range_oid is not None:
        pg = catalog.types.get(pg.multirange_range_oid)
    if pg is None or pg.kind is not TypeKind.RANGE or pg.range_subtype_oid is None:
        return None
    element = catalog.types.get(pg.range_subtype_oid)
    return element.sql_name if element is not None else None
