"""REST inputs in the GraphQL input shapes, validated against the GraphQL input types to any depth (SPEC "REST API"
-> strictness: bodies and filters are validated against the GraphQL input types; an error names the path).

Three jobs: URL texts become typed values by the input type they fill (`5` for an Int, `a,b` for a list, `[1,5)` for
a range); REST names become GraphQL names (`id` is `rowId` where GraphQL calls the key so; database column names
are accepted too); and the value is coerced by graphql-core against the input type, so unknown members, missing
required members and values that do not fit are 400 naming what the client wrote: each member converted is recorded
with the path it was written at (`Written`), and graphql-core's errors, which name GraphQL paths, are named by it.
Bracket filters (`filter[title][like]=x`) are translated to the `<Type>Filter` shape here, REST operator names to
GraphQL ones; their errors name the parameter.
"""

import json
from collections.abc import Sequence
from typing import Any, cast

from graphql import (
    GraphQLEnumType,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    coerce_input_value,
    is_required_input_field,
    validate_input_value,
)

from svc.errors import Code, SvcError
from svc.model import Cardinality, Entity, ErrorKind, Model
from svc.plan import NotJson, decode_global_id, parse_json, typed_error

from ._parse_query import Parameter

#: REST operator names (SPEC "List query parameters") to GraphQL filter operators; GraphQL names work as they are.
OPERATORS = {
    "eq": "equalTo", "neq": "notEqualTo", "gt": "greaterThan", "gte": "greaterThanOrEqualTo", "lt": "lessThan",
    "lte": "lessThanOrEqualTo", "in": "in", "nin": "notIn", "like": "like", "ilike": "likeInsensitive",
    "startsWith": "startsWith", "endsWith": "endsWith", "isNull": "isNull", "regex": "regex",
    "iregex": "regexInsensitive", "match": "regex", "imatch": "regexInsensitive", "isDistinctFrom": "distinctFrom",
    "gtAny": "greaterThanAny", "gtAll": "greaterThanAll", "gteAny": "greaterThanOrEqualToAny",
    "gteAll": "greaterThanOrEqualToAll", "ltAny": "lessThanAny", "ltAll": "lessThanAll",
    "lteAny": "lessThanOrEqualToAny", "lteAll": "lessThanOrEqualToAll", "likeAny": "likeAny", "likeAll": "likeAll",
    "ilikeAny": "likeInsensitiveAny", "ilikeAll": "likeInsensitiveAll",
}  # fmt: skip
#: Members of a to-many relation filter (SPEC "Filter and condition inputs").
QUANTIFIERS = frozenset({"some", "every", "none", "count", "sum", "avg", "min", "max"})

Path = tuple[str | int, ...]


class Written:
    """The paths a client wrote, by the GraphQL path of the member each became (SPEC "Strictness": an error names
    the path as the client wrote it). A JSON value's members are recorded as written, under `root` (a body's
    `input.id`, `inputs[1].tags[0]`; with `brackets`, a JSON filter's `filter[title][lessThan]`); a member read from
    a URL parameter is recorded as that parameter (`filter[or][0][title][ilike]`), below which nothing is named."""

    def __init__(self, root: str, *, brackets: bool = False) -> None:
        self._paths: dict[Path, str] = {(): root}
        self._brackets = brackets

    def add(self, parent: Path, graphql: str | int, written: str | int) -> Path:
        """A member of the value at `parent`: its GraphQL path, recorded as the client wrote it."""
        path = (*parent, graphql)
        above = self._paths[parent]
        brackets = self._brackets or isinstance(written, int)
        self._paths[path] = f"{above}[{written}]" if brackets else f"{above}.{written}"
        return path

    def parameter(self, path: Path, name: str) -> Path:
        """The member at `path` was read from the URL parameter `name`."""
        self._paths[path] = name
        return path

    def __call__(self, path: Sequence[str | int]) -> str:
        """How the member at `path` (GraphQL names) was written: its longest recorded part."""
        at = tuple(path)
        while at not in self._paths:
            at = at[:-1]
        return self._paths[at]


class _Required(Exception):
    """A required member (non-null, no default) missing or null, at its GraphQL path."""

    def __init__(self, path: Path, type_name: str) -> None:
        super().__init__(type_name)
        self.path = path
        self.type_name = type_name


class _Unknown(Exception):
    """A member the input type does not have, at its path (graphql-core names only the object holding it)."""

    def __init__(self, path: Path, type_name: str) -> None:
        super().__init__(type_name)
        self.path = path
        self.type_name = type_name


def bad(message: str, name: str) -> SvcError:
    return SvcError(Code.BAD_USER_INPUT, message, extensions={"field": name})


def unwrap(type_: GraphQLInputType) -> GraphQLInputType:
    return type_.of_type if isinstance(type_, GraphQLNonNull) else type_


class InputTypes:
    """The GraphQL input types of one schema, and which entity each entity-shaped input type belongs to."""

    def __init__(self, schema: GraphQLSchema, model: Model) -> None:
        self.schema = schema
        self.model = model
        self.entities: dict[str, Entity] = {}
        for entity in model.entities:
            names = entity.names
            for name in (names.filter, names.condition, names.key_input, names.create_input, names.update_input,
                         names.aggregate_filter):  # fmt: skip
                self.entities[name] = entity

    def get(self, name: str) -> GraphQLInputObjectType | None:
        """An input type of the schema (None when pruned away or never generated)."""
        type_ = self.schema.type_map.get(name)
        return type_ if isinstance(type_, GraphQLInputObjectType) else None

    # --- validation ----------------------------------------------------------------------------------------------

    def coerce(self, value: Any, type_name: str, written: Written) -> Any:
        """`value` (REST names allowed) validated and coerced against the input type; SvcError naming the path as
        written: an unknown member by its own path, a required column missing or null as the typed
        `<FIELD>_REQUIRED` (422) the database would answer."""
        type_ = self.get(type_name)
        if type_ is None:
            raise bad(f"{type_name} takes no input here", written(()))
        try:
            renamed = self.graphql_names(value, type_, (), written)
        except _Unknown as unknown:
            at = written(unknown.path)
            raise bad(f"{at}: {unknown.type_name} has no field {unknown.path[-1]!r}", at) from None
        except _Required as missing:
            raise self._required(missing, written(missing.path)) from None
        return self.validated(renamed, type_, written)

    def validated(self, value: Any, type_: GraphQLInputType, written: Written) -> Any:
        """A value in GraphQL names validated and coerced by graphql-core, its errors named as written."""

        def on_error(error: GraphQLError, path: Sequence[str | int]) -> None:
            message = error.message.rstrip(".")
            where = written(path)
            raise bad(f"{where}: {message}" if path else message, where)

        validate_input_value(value, type_, on_error)
        return coerce_input_value(value, type_)

    def graphql_names(self, value: Any, type_: GraphQLInputType, path: Path, written: Written) -> Any:
        """The value with each member of an entity's input named as GraphQL names it (REST names, `id` for the key
        GraphQL calls `rowId`, and database column names are accepted), every member recorded as written."""
        type_ = unwrap(type_)
        if isinstance(type_, GraphQLList):
            item_type = cast(GraphQLInputType, type_.of_type)
            if not isinstance(value, list):
                return self.graphql_names(value, item_type, path, written)  # a single value where a list goes
            items = cast("list[Any]", value)
            return [
                self.graphql_names(item, item_type, written.add(path, i, i), written) for i, item in enumerate(items)
            ]
        if not isinstance(type_, GraphQLInputObjectType) or not isinstance(value, dict):
            return value
        entity = self.entities.get(type_.name)
        members: dict[str, Any] = {}
        for name, member in cast("dict[str, Any]", value).items():
            graphql_name = name
            if entity is not None and (name not in type_.fields or self._raw_key(entity, type_, name, member)):
                field = entity.rest_field(name)
                if field is not None:
                    graphql_name = field.name
            at = written.add(path, graphql_name, name)
            if graphql_name in members:
                raise bad(f"{name} is given twice (under two names)", written(at))
            definition = type_.fields.get(graphql_name)
            if definition is None:
                raise _Unknown(at, type_.name)
            members[graphql_name] = self.graphql_names(member, definition.type, at, written)
        for name, definition in type_.fields.items():
            if members.get(name) is None and is_required_input_field(definition):
                if name not in members:  # not written: named as REST names it
                    field = entity.field(name) if entity is not None else None
                    written.add(path, name, field.rest_name if field is not None else name)
                raise _Required((*path, name), type_.name)
        return members

    def _raw_key(self, entity: Entity, type_: GraphQLInputObjectType, name: str, member: Any) -> bool:
        """Whether `id` in a `<Type>KeyInput` is the raw key REST calls `id` (GraphQL's `rowId`), not the global ID
        GraphQL's `id` is: a key input takes either (SPEC "Filter and condition inputs")."""
        if name != "id" or type_.name != entity.names.key_input:
            return False
        field = entity.rest_field(name)
        if field is None or field.name == name:
            return False
        decoded = decode_global_id(member) if isinstance(member, str) else None
        return decoded is None or self.model.entity_named(decoded[0]) is None

    def _required(self, missing: _Required, at: str) -> SvcError:
        """A required member missing or null: the column's `<FIELD>_REQUIRED` where the input type is an entity's
        (SPEC "Errors": NOT NULL, REST 422), else a bad input naming the member."""
        entity = self.entities.get(missing.type_name)
        field = entity.field(str(missing.path[-1])) if entity else None
        code = None
        if entity is not None and field is not None:
            wanted = (field.column,)
            code = next((c for c in entity.error_codes if c.kind is ErrorKind.NOT_NULL and c.columns == wanted), None)
        if code is None or entity is None:
            return bad(f"{at} is required", at)
        return typed_error(code, entity, [at], f"{at} is required")

    # --- bracket filters -----------------------------------------------------------------------------------------

    def bracket_filter(self, entity: Entity, parameter: Parameter) -> Any:
        """`filter[...]` members (`filter[title][like]=x&filter[or][0][pages][gt]=100`) as a coerced `<Type>Filter`
        value: values typed by the inputs they fill, errors naming the parameter they were read from."""
        type_ = self.get(entity.names.filter)
        if type_ is None:
            raise bad(f"{entity.type_name} rows cannot be filtered", parameter.name)
        written = Written(parameter.name, brackets=True)
        return self.validated(self._filter(entity, type_, parameter, (), written), type_, written)

    def _filter(
        self, entity: Entity, type_: GraphQLInputObjectType, parameter: Parameter, path: Path, written: Written
    ) -> dict[str, Any]:
        if parameter.value is not None and parameter.members:
            raise bad(f"{parameter.name} takes a value or members, not both", parameter.name)
        value: dict[str, Any] = {}
        for name, member in parameter.members.items():
            at = written.parameter((*path, name), member.name)
            if name in ("and", "or"):
                if member.value is not None or not all(i.isdigit() for i in member.members):
                    raise bad(f"{member.name} takes numbered members: {member.name}[0][...]", member.name)
                ordered = sorted(member.members.items(), key=lambda item: int(item[0]))
                value[name] = [
                    self._filter(entity, type_, m, written.parameter((*at, i), m.name), written)
                    for i, (_, m) in enumerate(ordered)
                ]
            elif name == "not":
                value[name] = self._filter(entity, type_, member, at, written)
            elif name not in type_.fields and (found := entity.subtype_column(name)) is not None:
                # `filter[barkVolume][gt]=3`: the subtype's relation's filter (`filter[dog][barkVolume][gt]=3`)
                subtype, field = found
                relation = Parameter(member.name, None, {field.rest_name: member})
                graphql_name, inner = self._filter_field(
                    entity, type_, subtype.relation, relation, parent=path, written=written
                )
                _merge(value, graphql_name, inner)
            else:
                graphql_name, inner = self._filter_field(entity, type_, name, member, parent=path, written=written)
                _merge(value, graphql_name, inner)
        return value

    def _filter_field(
        self,
        entity: Entity,
        type_: GraphQLInputObjectType,
        name: str,
        member: Parameter,
        *,
        parent: Path,
        written: Written,
    ) -> tuple[str, Any]:
        field = entity.rest_field(name)
        graphql_name = field.name if field is not None and name not in type_.fields else name
        definition = type_.fields.get(graphql_name)
        if definition is None:
            raise bad(f"{entity.type_name} has no filterable field {name!r}", member.name)
        path = written.parameter((*parent, graphql_name), member.name)
        inner_type = unwrap(definition.type)
        assert isinstance(inner_type, GraphQLInputObjectType)
        relation = next((r for r in entity.relations if r.name == graphql_name), None)
        if relation is None:
            return graphql_name, self._operators(inner_type, member, path, written)
        target = self.model.entity(relation.target)
        if relation.kind is Cardinality.TO_ONE:
            return graphql_name, self._filter(target, inner_type, member, path, written)
        quantified: dict[str, Any] = {}
        for word, inner in member.members.items():
            definition = inner_type.fields.get(word)
            if word not in QUANTIFIERS or definition is None:
                raise bad(f"{member.name} takes some, every, none, count or an aggregate; got {word!r}", inner.name)
            word_type = unwrap(definition.type)
            assert isinstance(word_type, GraphQLInputObjectType)
            at = written.parameter((*path, word), inner.name)
            if word in ("some", "every", "none"):
                quantified[word] = self._filter(target, word_type, inner, at, written)
            elif word == "count":
                quantified[word] = self._operators(word_type, inner, at, written)
            else:
                quantified[word] = self._aggregate_columns(target, word, word_type, inner, path=at, written=written)
        return graphql_name, quantified

    def _aggregate_columns(
        self,
        entity: Entity,
        word: str,
        type_: GraphQLInputObjectType,
        parameter: Parameter,
        *,
        path: Path,
        written: Written,
    ) -> dict[str, Any]:
        """`[<column>][op]=value` members of an aggregate's conditions (`<Type>AggregateFilter`), by column."""
        columns: dict[str, Any] = {}
        for column, operators in parameter.members.items():
            column_field = entity.rest_field(column)
            column_name = column_field.name if column_field and column not in type_.fields else column
            column_definition = type_.fields.get(column_name)
            if column_definition is None:
                raise bad(f"{word} is not offered for {column!r} of {entity.type_name}", operators.name)
            column_type = unwrap(column_definition.type)
            assert isinstance(column_type, GraphQLInputObjectType)
            column_path = written.parameter((*path, column_name), operators.name)
            columns[column_name] = self._operators(column_type, operators, column_path, written)
        return columns

    def bracket_having(self, entity: Entity, parameter: Parameter) -> Any:
        """`having[count][gt]=n&having[sum][amount][gte]=n` as a coerced `<Type>HavingInput` value."""
        type_ = self.get(entity.names.having)
        if type_ is None:
            raise bad(f"{entity.type_name} rows cannot be grouped", parameter.name)
        written = Written(parameter.name, brackets=True)
        value: dict[str, Any] = {}
        for word, member in parameter.members.items():
            definition = type_.fields.get(word)
            if definition is None:
                offered = ", ".join(type_.fields)
                raise bad(f"{parameter.name} takes {offered}; got {word!r}", member.name)
            word_type = unwrap(definition.type)
            assert isinstance(word_type, GraphQLInputObjectType)
            at = written.parameter((word,), member.name)
            if word == "count":
                value[word] = self._operators(word_type, member, at, written)
            else:
                value[word] = self._aggregate_columns(entity, word, word_type, member, path=at, written=written)
        return self.validated(value, type_, written)

    def _operators(
        self, type_: GraphQLInputObjectType, parameter: Parameter, path: Path, written: Written
    ) -> dict[str, Any]:
        """`[op]=value` members of a value filter (`StringFilter`, `IntFilter`...), values typed."""
        if parameter.value is not None or not parameter.members:
            raise bad(f"{parameter.name} needs an operator: {parameter.name}[eq]=...", parameter.name)
        operators: dict[str, Any] = {}
        for name, operand in parameter.members.items():
            if operand.members or operand.value is None:
                raise bad(f"{operand.name} takes a value", operand.name)
            graphql_name = OPERATORS.get(name, name)
            if name == "contains" and "containsElement" in type_.fields and not _looks_like_range(operand.value):
                graphql_name = "containsElement"  # a range contains an element (SPEC: range `contains` (element))
            definition = type_.fields.get(graphql_name)
            if definition is None:
                raise bad(f"{name!r} is not an operator of {type_.name}", operand.name)
            written.parameter((*path, graphql_name), operand.name)
            operators[graphql_name] = url_value(operand.value, definition.type, operand.name, self.schema)
        return operators


def url_value(text: str, type_: GraphQLInputType, name: str, schema: GraphQLSchema) -> Any:
    """A URL parameter's text as the value of an input type: numbers and booleans parsed, lists comma-separated
    (or a JSON array), ranges as `[lower,upper)` text (or a JSON object), JSON as JSON text."""
    type_ = unwrap(type_)
    if isinstance(type_, GraphQLList):
        return [url_value(item, type_.of_type, name, schema) for item in list_items(text, name)]
    if isinstance(type_, GraphQLInputObjectType):
        return range_value(text, type_, name, schema)
    if isinstance(type_, GraphQLEnumType):
        return text
    assert isinstance(type_, GraphQLScalarType)
    kind = type_.name
    if kind == "Int":
        try:
            return int(text)
        except ValueError:
            raise bad(f"{name}: expected a whole number; got {text!r}", name) from None
    if kind == "Float":
        try:
            return float(text)
        except ValueError:
            raise bad(f"{name}: expected a number; got {text!r}", name) from None
    if kind == "Boolean":
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise bad(f"{name}: expected true or false; got {text!r}", name)
    if kind == "JSON":
        return parse_json(text.encode(), name, invalid=f"{name}: expected JSON; got {text!r}", field=name)
    return text


def list_items(text: str, name: str) -> list[str]:
    """`a,b,"c,d"` or a JSON array of strings and numbers; an empty text is an empty list."""
    if text.startswith("["):
        try:
            items = parse_json(text.encode(), name, field=name)
        except NotJson:
            items = None  # `[1,5)`: a range, or text that starts with a bracket
        if isinstance(items, list):
            return [item if isinstance(item, str) else json.dumps(item) for item in items]
    if text == "":
        return []
    items, current, quoted, i = [], [], False, 0
    while i < len(text):
        char = text[i]
        if char == '"' and (not current or quoted):
            if quoted and i + 1 < len(text) and text[i + 1] == '"':
                current.append('"')
                i += 1
            else:
                quoted = not quoted
        elif char == "," and not quoted:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quoted:
        raise bad(f"{name}: a quoted list item is not closed", name)
    items.append("".join(current))
    return items


def range_value(text: str, type_: GraphQLInputObjectType, name: str, schema: GraphQLSchema) -> Any:
    """A range input from `[lower,upper)` (an empty bound is unbounded) or a JSON object in the input's shape."""
    if text.startswith("{"):
        return parse_json(text.encode(), name, invalid=f"{name}: expected a range as JSON or [lower,upper)", field=name)
    if len(text) < 3 or text[0] not in "[(" or text[-1] not in "])" or "," not in text:
        raise bad(f"{name}: expected a range such as [1,5) or a JSON object with start and end", name)
    lower, upper = text[1:-1].split(",", 1)
    bound_type = unwrap(type_.fields["start"].type)
    assert isinstance(bound_type, GraphQLInputObjectType)
    value_type = bound_type.fields["value"].type

    def bound(item: str, inclusive: bool) -> Any:
        item = item.strip().strip('"')
        return None if item == "" else {"value": url_value(item, value_type, name, schema), "inclusive": inclusive}

    return {"start": bound(lower, text[0] == "["), "end": bound(upper, text[-1] == "]")}


def _looks_like_range(text: str) -> bool:
    return text[:1] in ("[", "(", "{")


def _merge(value: dict[str, Any], name: str, inner: Any) -> None:
    """One member of a filter; a relation's conditions given twice (`filter[dog][name]` and, for a subtype's column,
    `filter[barkVolume]`) all hold."""
    value[name] = _merged(value[name], inner) if name in value else inner


def _merged(earlier: Any, later: Any) -> Any:
    if not (isinstance(earlier, dict) and isinstance(later, dict)):
        return later
    return {**earlier, **{k: _merged(earlier[k], v) if k in earlier else v for k, v in later.items()}}
