"""Functions as fields (SPEC "What the service does", rule 2): a function whose first argument is a table's row is a
computed field of that table's type; other STABLE and IMMUTABLE functions are query root fields, VOLATILE ones are
mutations. `functions.<name>` renames (`field_name`), hides (`omit`), deprecates, or mounts a function on a table
with arguments filled from the row's columns.

Served: plain functions (not procedures, aggregates or window functions) whose arguments and result have an API
type; `trigger` functions and functions over pseudo-types (`anyelement`, `internal`) are left out. Overloaded
functions (one name, several signatures) are left out with a warning: the API could not tell them apart.
"""

from collections.abc import Callable, Mapping

import attrs

from svc.catalog import Catalog, Function, TypeKind, Volatility
from svc.config import FunctionConfig

from ._config import find_relation
from ._entities import (
    Argument,
    ComputedField,
    Deprecation,
    EntityRef,
    Field,
    RecordType,
    ReturnKind,
    Returns,
    RootFunction,
)
from ._hints import read_hints
from ._naming import camel, pascal, singular
from ._values import TypeMapper, UnsupportedType

_RECORD = "record"
_VOID = "void"
_SKIPPED_RESULTS = frozenset({"trigger", "event_trigger", "internal", "language_handler", "fdw_handler"})


@attrs.frozen
class Functions:
    computed: Mapping[EntityRef, tuple[ComputedField, ...]]
    roots: tuple[RootFunction, ...]
    records: tuple[RecordType, ...]


def build_functions(
    catalog: Catalog,
    *,
    configs: Mapping[str, FunctionConfig],
    entity_of_type: Callable[[int], EntityRef | None],
    mapper: TypeMapper,
    exposed_extensions: Callable[[str | None], bool],
    warnings: list[str],
) -> Functions:
    """`entity_of_type` maps a row type's oid to its exposed entity (None when the table is not exposed)."""
    computed: dict[EntityRef, list[ComputedField]] = {}
    roots: list[RootFunction] = []
    records: dict[str, RecordType] = {}
    by_name: dict[tuple[str, str], list[Function]] = {}
    for function in catalog.functions:
        if function.kind == "f" and exposed_extensions(function.extension):
            by_name.setdefault((function.schema, function.name), []).append(function)

    for (schema, name), overloads in by_name.items():
        config = configs.get(f"{schema}.{name}") or configs.get(name) or FunctionConfig()
        if config.omit:
            continue
        if len(overloads) > 1:
            warnings.append(f"function {schema}.{name} is overloaded ({len(overloads)} signatures) and is not served")
            continue
        function = overloads[0]
        try:
            shaped = _Shaper(catalog, mapper, entity_of_type, records).shape(function, config)
        except UnsupportedType as exc:
            warnings.append(f"function {schema}.{name} is not served: it uses the type {exc}")
            continue
        if shaped is None:
            continue
        owner, field, root = shaped
        if owner is not None and field is not None:
            computed.setdefault(owner, []).append(field)
        if root is not None:
            roots.append(root)
        if config.mount is not None and root is not None:
            mounted = _mount(config, root, entity_of_type, catalog, function.schema)
            if mounted is not None:
                computed.setdefault(mounted[0], []).append(mounted[1])
    return Functions({ref: tuple(fields) for ref, fields in computed.items()}, tuple(roots), tuple(records.values()))


class _Shaper:
    def __init__(
        self,
        catalog: Catalog,
        mapper: TypeMapper,
        entity_of_type: Callable[[int], EntityRef | None],
        records: dict[str, RecordType],
    ) -> None:
        self._catalog = catalog
        self._mapper = mapper
        self._entity_of_type = entity_of_type
        self._records = records

    def shape(
        self, function: Function, config: FunctionConfig
    ) -> tuple[EntityRef | None, ComputedField | None, RootFunction | None] | None:
        result = self._catalog.type(function.return_type_oid)
        if result.name in _SKIPPED_RESULTS:
            return None
        hints = read_hints(function.comment)
        deprecation = hints.deprecation if config.deprecated is None else Deprecation(config.deprecated)
        inputs = function.input_arguments
        owner = self._entity_of_type(inputs[0].type_oid) if inputs else None
        if owner is not None and function.volatility is not Volatility.VOLATILE:
            name = config.field_name or hints.name or _computed_name(function.name, owner.table)
            field = ComputedField(
                name=name,
                schema=function.schema,
                function=function.name,
                arguments=self._arguments(function, skip=1),
                returns=self._returns(function),
                description=hints.description,
                deprecation=deprecation,
            )
            return owner, field, None
        root = RootFunction(
            name=config.field_name or hints.name or camel(function.name),
            schema=function.schema,
            function=function.name,
            arguments=self._arguments(function, skip=0),
            returns=self._returns(function),
            mutation=function.volatility is Volatility.VOLATILE,
            strict=function.strict,
            description=hints.description,
            deprecation=deprecation,
        )
        return None, None, root

    def _arguments(self, function: Function, *, skip: int) -> tuple[Argument, ...]:
        arguments = []
        for position, argument in enumerate(function.input_arguments):
            if position < skip:
                continue
            value = self._mapper.value_type(argument.type_oid)
            name = camel(argument.name) if argument.name else f"arg{position}"
            arguments.append(Argument(name, argument.name or None, value, not argument.has_default, position))
        return tuple(arguments)

    def _returns(self, function: Function) -> Returns:
        result = self._catalog.type(function.return_type_oid)
        if result.name == _VOID:
            return Returns(ReturnKind.VOID)
        entity = self._entity_of_type(result.oid) if result.relation_oid is not None else None
        if entity is not None:
            return Returns(ReturnKind.ROWS if function.returns_set else ReturnKind.ROW, entity=entity)
        if result.name == _RECORD and function.output_columns:
            record = self._record(function)
            return Returns(ReturnKind.RECORDS if function.returns_set else ReturnKind.RECORD, record=record)
        if result.kind is TypeKind.PSEUDO or result.relation_oid is not None:
            raise UnsupportedType(result.sql_name)
        value = self._mapper.value_type(result.oid)
        return Returns(ReturnKind.SCALARS if function.returns_set else ReturnKind.SCALAR, type=value)

    def _record(self, function: Function) -> RecordType:
        name = f"{pascal(function.name)}Record"
        if name not in self._records:
            fields = []
            for column in function.output_columns:
                value = self._mapper.value_type(column.type_oid)
                column_name = column.name or f"column{len(fields) + 1}"
                fields.append(
                    Field(camel(column_name), column_name, value, nullable=True, insertable=False, updatable=False)
                )
            self._records[name] = RecordType(name, tuple(fields))
        return self._records[name]


def _computed_name(function: str, table: str) -> str:
    """`posts_excerpt` on posts -> `excerpt` (the table's name, plural or singular, as a prefix is dropped)."""
    for prefix in (f"{table}_", f"{singular(table)}_"):
        if function.startswith(prefix) and len(function) > len(prefix):
            return camel(function[len(prefix) :])
    return camel(function)


def _mount(
    config: FunctionConfig,
    root: RootFunction,
    entity_of_type: Callable[[int], EntityRef | None],
    catalog: Catalog,
    schema: str,
) -> tuple[EntityRef, ComputedField] | None:
    """`functions.<name>.mount`: the function also as a field of a table, some arguments filled from its columns."""
    assert config.mount is not None
    relation = find_relation(catalog, config.mount.on, schema)
    if relation is None:
        return None
    owner = entity_of_type(relation.type_oid)
    if owner is None:
        return None
    filled = {camel(argument): column for argument, column in config.mount.arguments.items()}
    field = ComputedField(
        name=config.mount.field_name or root.name,
        schema=root.schema,
        function=root.function,
        arguments=tuple(a for a in root.arguments if a.name not in filled),
        returns=root.returns,
        description=root.description,
        deprecation=root.deprecation,
        from_columns=filled,
    )
    return owner, field
