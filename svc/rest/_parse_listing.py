"""What a REST read asks for, from URL parameters or a search body (SPEC "REST API" -> list query parameters,
embedding controls, `POST /rest/{resource}/search`): the filter, order and page of the rows, and which members each
row has: fields, included relations (each with its own fields, filter, order and page), arguments of computed
fields and JSON paths.

Names are checked against the entity here (unknown columns, relations and controls are 400 naming the parameter);
filters are validated against the GraphQL filter types (`_parse_inputs.py`); limits on includes (at most 10
relations, 3 levels) are checked here, before any planning.
"""

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from svc.errors import Code, SvcError
from svc.model import REST_TYPENAME, Cardinality, Entity, Field, Model, ReturnKind, upper_snake
from svc.plan import (
    TRUNCATION_UNITS,
    AggregateMember,
    EntityIndex,
    FieldKind,
    GroupValue,
    KeyForm,
    KeyType,
    group_values,
    instant,
    key_type,
    member_fields,
    parse_json,
    temporal_key,
)

from ._api_request import Include, Listing, ListWindows, Selection
from ._parse_inputs import QUANTIFIERS, InputTypes, Written, bad, url_value
from ._parse_query import Parameter, Parameters

_SEARCH_MEMBERS = (
    "filter", "order", "first", "after", "last", "before", "offset", "fields", "include", "embed", "inner", "anti",
    "cursors",
)  # fmt: skip
_EMBED_MEMBERS = ("filter", "order", "first", "offset", "fields")
#: SPEC "List query parameters": `_window` values of each row of a list.
_WINDOW_PARAMETERS = ("window", "partition", "running")
_WINDOW_FUNCTIONS = ("rowNumber", "rank", "denseRank", "percentRank")
MAX_INCLUDES = 10
MAX_INCLUDE_LEVELS = 3
_ORDER_ITEM = re.compile(r"^(-?)([^:]+)((?::(?:asc|desc|nullsfirst|nullslast))*)$", re.IGNORECASE)


class Listings:
    """Reads listings out of requests against one model and its GraphQL input types."""

    def __init__(self, model: Model, inputs: InputTypes, index: EntityIndex) -> None:
        self.model = model
        self.inputs = inputs
        self.index = index

    # --- from URL parameters -------------------------------------------------------------------------------------

    def from_query(self, entity: Entity, parameters: Parameters, *, rows: bool = True) -> Listing:
        """A list's parameters (`rows`), or a single row's (only members of the row: fields, include and the
        embedding controls)."""
        as_of = _as_of(entity, parameters.take_value("asOf"), "asOf")
        selection = self.selection_from_query(entity, parameters)
        if not rows:
            for name in _WINDOW_PARAMETERS:
                if parameters.peek(name) is not None:
                    raise bad(f"{name}: window values are given to the rows of a list", name)
            return Listing(selection, as_of=as_of)
        filter_ = parameters.take("filter")
        return Listing(
            selection,
            filter=self.filter(entity, filter_) if filter_ is not None else None,
            order=self.order(entity, _split(parameters.take_value("order")), "order"),
            first=_count(parameters.take_value("first"), "first"),
            last=_count(parameters.take_value("last"), "last"),
            offset=_count(parameters.take_value("offset"), "offset"),
            after=parameters.take_value("after"),
            before=parameters.take_value("before"),
            cursors=switch(parameters.take_value("cursors"), "cursors"),
            windows=_windows(entity, parameters),
            as_of=as_of,
        )

    def from_body(self, entity: Entity, body: Any) -> Listing:
        """A search body (SPEC route table, `POST /rest/{resource}/search`): the list parameters as members
        (`filter` a `<Type>Filter` object, `order`/`fields`/`include`/`inner`/`anti` strings or lists, `embed`
        per include path `{filter, order, first, offset, fields}`)."""
        if not isinstance(body, dict):
            raise bad("the search body must be a JSON object", "body")
        parameters: dict[str, Parameter] = {}
        for name, value in body.items():
            if name not in _SEARCH_MEMBERS:
                raise bad(f"unknown search member {name!r} (one of {', '.join(_SEARCH_MEMBERS)})", name)
            if value is None:
                continue
            if name == "embed":
                if not isinstance(value, dict):
                    raise bad("embed must be an object of include paths", name)
                for path, controls in value.items():
                    if not isinstance(controls, dict):
                        raise bad(f"embed.{path} must be an object", f"embed.{path}")
                    for control, member in controls.items():
                        if control not in _EMBED_MEMBERS:
                            raise bad(f"unknown embed member {control!r}", f"embed.{path}.{control}")
                        if member is not None:
                            top = parameters.setdefault(control, Parameter(control))
                            top.members[path] = Parameter(f"embed.{path}.{control}", body_text(member, control))
                continue
            parameter = parameters.setdefault(name, Parameter(name))
            parameter.value = body_text(value, name)
        return self.from_query(entity, Parameters(parameters))

    def selection_from_query(self, entity: Entity, parameters: Parameters) -> Selection:
        """`fields`, `include` and the embedding controls, `args[...]`, `path[...]`, `inner`, `anti`."""
        include = _split(parameters.take_value("include"))
        if parameters.take_value("asOf") is not None:
            raise bad("asOf applies to reads: a write answers with its rows as they are now", "asOf")
        controls = {
            name: parameters.take_members(name) for name in ("fields", "order", "first", "offset", "depth", "asOf")
        }
        filters = self._embedded_filters(entity, parameters, set(include))
        tree = self._include_tree(entity, include)
        inner = _split(parameters.take_value("inner"))
        anti = _split(parameters.take_value("anti"))
        arguments: dict[str, dict[str, dict[str, Parameter]]] = {}
        for name, member in parameters.take_members("args").items():
            prefix, _, field = name.rpartition(".")
            if member.value is not None or not member.members:
                raise bad(f"{member.name} takes arguments: {member.name}[<argument>]=...", member.name)
            arguments.setdefault(prefix, {})[field] = dict(member.members)
        paths: dict[str, dict[str, str]] = {}
        for name, member in parameters.take_members("path").items():
            prefix, _, column = name.rpartition(".")
            if member.value is None or member.members:
                raise bad(f"{member.name} takes a JSON path", member.name)
            paths.setdefault(prefix, {})[column] = member.value
        for path in (*inner, *anti):
            if path not in tree.paths:
                raise bad(
                    f"{path!r} must be included to be used in inner or anti", "inner" if path in inner else "anti"
                )
        taken = _Controls(parameters.take_value("fields"), controls, filters, arguments, paths, inner, anti)
        selection = self._selection(entity, tree, "", taken)
        taken.finish()
        return selection

    def _selection(self, entity: Entity, node: "_Node", prefix: str, taken: "_Controls") -> Selection:
        """The members of rows at the include path `prefix` (empty: the rows read)."""
        fields = _split(taken.value("fields", prefix) if prefix else taken.fields)
        includes = {
            name: self._include(child, f"{prefix}.{name}" if prefix else name, taken)
            for name, child in node.children.items()
        }
        own_arguments = taken.arguments.pop(prefix, {})
        own_paths = taken.paths.pop(prefix, {})
        return Selection(
            self._fields(entity, fields, prefix, own_arguments, own_paths) if fields else None,
            self._arguments(entity, own_arguments, prefix),
            self._paths(entity, own_paths, prefix),
            includes,
        )

    def _include(self, child: "_Node", path: str, taken: "_Controls") -> Include:
        """An included relation and its embedding controls (filter and order for to-many relations and
        hierarchies, first and offset for to-many relations, depth for hierarchies)."""
        target = child.entity
        if child.arc:
            return self._arc_include(path, taken)
        given_filter = taken.filters.pop(path, None)
        embedded_filter = None
        if given_filter is not None:
            if not (child.to_many or child.hierarchy):
                raise bad(f"only to-many relations take filter[{path}]", given_filter.name)
            embedded_filter = self.filter(target, given_filter)
        order = _split(taken.value("order", path))
        first, offset, depth = taken.value("first", path), taken.value("offset", path), taken.value("depth", path)
        as_of = taken.value("asOf", path)
        if as_of is not None and (child.hierarchy or child.history):
            raise bad(f"asOf[{path}]: only relations are read as of an instant", f"asOf[{path}]")
        if order and not (child.to_many or child.hierarchy):
            raise bad(f"only to-many relations and hierarchies take order ({path})", f"order[{path}]")
        for control, given in (("first", first), ("offset", offset)):
            if given is not None and not child.to_many:
                where = f"{control}[{path}]"
                raise bad(f"only to-many relations take {control} ({path}; hierarchies are not paged)", where)
        if depth is not None and not child.hierarchy:
            raise bad(f"only ancestors and descendants take depth ({path})", f"depth[{path}]")
        return Include(
            path,
            self._selection(target, child, path, taken),
            filter=embedded_filter,
            order=self.order(target, order, f"order[{path}]") if order else (),
            first=_count(first, f"first[{path}]"),
            offset=_count(offset, f"offset[{path}]"),
            depth=_count(depth, f"depth[{path}]"),
            inner=path in taken.inner,
            anti=path in taken.anti,
            as_of=_as_of(target, as_of, f"asOf[{path}]"),
        )

    @staticmethod
    def _arc_include(path: str, taken: "_Controls") -> Include:
        """An exclusive arc's row (`include=target`): every field of whichever type it is, with `__typename`; its
        rows are of several types, so it takes no `fields` and no control of to-many relations."""
        for control in ("fields", "order", "first", "offset", "depth"):
            if taken.value(control, path) is not None:
                where = f"{control}[{path}]"
                raise bad(f"{path} is an exclusive arc: its row comes whole, of whichever type it is", where)
        given_filter = taken.filters.pop(path, None)
        if given_filter is not None:
            raise bad(f"only to-many relations take filter[{path}]", given_filter.name)
        return Include(path, Selection(), inner=path in taken.inner, anti=path in taken.anti)

    def _embedded_filters(self, entity: Entity, parameters: Parameters, include: set[str]) -> dict[str, Parameter]:
        """`filter[rel][...]` members that are embedding controls, not conditions on the rows read: an included
        to-many relation's filter (its next member a field, not some/every/none/count), or a dotted path (but for a
        subtype's column named so on its parent's rows)."""
        parameter = parameters.peek("filter")
        if parameter is None:
            return {}
        embedded = {}
        relations = {relation.name: relation for relation in entity.relations}
        meanings = self.index.fields(entity)
        for name, member in list(parameter.members.items()):
            relation = relations.get(name)
            meaning = meanings.get(name)
            # Included rows a filter of the rows read cannot name: hierarchies and computed sets of rows.
            walked = meaning is not None and meaning.kind in (FieldKind.ANCESTORS, FieldKind.DESCENDANTS)
            computed = meaning is not None and meaning.kind is FieldKind.COMPUTED
            to_many = relation is not None and relation.kind is not Cardinality.TO_ONE
            quantified = bool(set(member.members) & QUANTIFIERS)
            dotted = "." in name and entity.subtype_column(name) is None  # `dog.name`: a subtype's column
            if dotted or (name in include and (walked or computed or (to_many and not quantified))):
                embedded[name] = parameter.members.pop(name)
        if parameter.value is None and not parameter.members:
            parameters.take("filter")
        return embedded

    def _include_tree(self, entity: Entity, paths: list[str]) -> "_Node":
        root = _Node(entity)
        paths = list(dict.fromkeys(paths))  # a path named twice is one relation
        if len(paths) > MAX_INCLUDES:
            raise SvcError(
                Code.DEPTH_LIMIT_EXCEEDED,
                f"include names {len(paths)} relations, more than {MAX_INCLUDES}",
                extensions={"field": "include", "limit": MAX_INCLUDES, "actual": len(paths)},
            )
        for path in paths:
            parts = path.split(".")
            if len(parts) > MAX_INCLUDE_LEVELS:
                raise SvcError(
                    Code.DEPTH_LIMIT_EXCEEDED,
                    f"include {path!r} is {len(parts)} levels deep, more than {MAX_INCLUDE_LEVELS}",
                    extensions={"field": "include", "limit": MAX_INCLUDE_LEVELS, "actual": len(parts)},
                )
            node = root
            for part in parts:
                node = node.child(part, self, path)
            root.paths.add(path)
        return root

    # --- filters and orders --------------------------------------------------------------------------------------

    def filter(self, entity: Entity, parameter: Parameter) -> Mapping[str, Any]:
        """`filter[...]` conditions and `filter={json}` (both: all must hold), of the rows read or (`filter[rel]`)
        of the included rows; errors name the parameter as written (`filter[title][like]`, `filter[nope]`)."""
        parts: list[Mapping[str, Any]] = []
        if parameter.value is not None:
            value = json_object(parameter.value, parameter.name)
            parts.append(self.inputs.coerce(value, entity.names.filter, Written(parameter.name, brackets=True)))
        if parameter.members:
            parts.append(self.inputs.bracket_filter(entity, Parameter(parameter.name, None, parameter.members)))
        return parts[0] if len(parts) == 1 else {"and": parts}

    def order(self, entity: Entity, items: list[str], name: str) -> tuple[str, ...]:
        """`name,-created_at,author.username:desc:nullsfirst,messagesCount` as `<Type>OrderBy` values."""
        orders = self.index.orders(entity)
        values = []
        for item in items:
            match = _ORDER_ITEM.match(item.strip())
            if match is None:
                raise bad(f"{name}: malformed order item {item!r}", name)
            minus, target, suffixes = match.groups()
            flags = [s.lower() for s in suffixes.split(":") if s]
            descending = bool(minus) or "desc" in flags
            base = self._order_base(entity, target)
            if base in ("NATURAL",):
                values.append("NATURAL")
                continue
            direction = "DESC" if descending else "ASC"
            nulls = "nullsfirst" in flags if not descending else "nullslast" not in flags
            value = f"{base}_{direction}"
            if nulls != descending and f"{value}_NULLS_{'FIRST' if nulls else 'LAST'}" in orders:
                value = f"{value}_NULLS_{'FIRST' if nulls else 'LAST'}"
            if value not in orders:
                raise bad(f"{name}: {entity.type_name} cannot be ordered by {target!r}", name)
            values.append(value)
        return tuple(values)

    def _order_base(self, entity: Entity, target: str) -> str:
        if target.lower() == "natural":
            return "NATURAL"
        if target.lower() in ("primary_key", "primarykey"):
            return "PRIMARY_KEY"
        if "." in target:
            relation_name, _, column = target.partition(".")
            relation = next((r for r in entity.relations if r.name == relation_name), None)
            if relation is not None and relation.kind is Cardinality.TO_ONE:
                field = self.model.entity(relation.target).rest_field(column)
                return f"{upper_snake(relation.name)}_{upper_snake(field.name if field else column)}"
            return upper_snake(target)
        field = entity.rest_field(target)
        if field is None and (found := entity.subtype_column(target)) is not None:
            subtype, column = found
            return f"{upper_snake(subtype.relation)}_{upper_snake(column.name)}"
        return upper_snake(field.name if field else target)

    # --- row members ---------------------------------------------------------------------------------------------

    def _fields(
        self,
        entity: Entity,
        names: list[str],
        prefix: str,
        arguments: Mapping[str, Any],
        paths: Mapping[str, str],
    ) -> tuple[str, ...]:
        """`fields=a,b`: columns (REST or database names), `rowVersion`, computed fields; as GraphQL field names."""
        meanings = self.index.fields(entity)
        chosen = []
        where = f"fields[{prefix}]" if prefix else "fields"
        for name in names:
            if (name == REST_TYPENAME and entity.subtypes) or entity.subtype_column(name) is not None:
                if name not in chosen:
                    chosen.append(name)
                continue
            field = entity.rest_field(name)
            graphql_name = field.name if field is not None else name
            meaning = meanings.get(graphql_name)
            if meaning is None or meaning.kind not in (FieldKind.COLUMN, FieldKind.ROW_VERSION, FieldKind.COMPUTED):
                raise bad(f"{entity.type_name} has no field {name!r}", where)
            if meaning.kind is FieldKind.COMPUTED:
                assert meaning.computed is not None
                if meaning.computed.returns.kind not in (ReturnKind.SCALAR, ReturnKind.SCALARS):
                    raise bad(f"{name} is a set of rows: include it instead", where)
            if graphql_name not in chosen:
                chosen.append(graphql_name)
        return tuple(chosen)

    def _arguments(self, entity: Entity, given: Mapping[str, Mapping[str, Parameter]], prefix: str) -> dict:
        """`args[field][arg]=v`: typed by the computed field's arguments in the GraphQL schema."""
        arguments: dict[str, dict[str, Any]] = {}
        object_type = self.inputs.schema.type_map.get(entity.type_name)
        for field_name, members in given.items():
            computed = next((c for c in entity.computed if c.name == field_name), None)
            where = f"args[{prefix + '.' if prefix else ''}{field_name}]"
            if computed is None or object_type is None:
                raise bad(f"{entity.type_name} has no computed field {field_name!r}", where)
            definition = object_type.fields[field_name]  # type: ignore[attr-defined]
            values: dict[str, Any] = {}
            for argument, leaf in members.items():
                if argument not in definition.args or leaf.value is None:
                    raise bad(f"{field_name} has no argument {argument!r}", leaf.name)
                values[argument] = url_value(leaf.value, definition.args[argument].type, leaf.name, self.inputs.schema)
            arguments[field_name] = values
        return arguments

    def _paths(self, entity: Entity, given: Mapping[str, str], prefix: str) -> dict[str, str]:
        paths = {}
        for column, path in given.items():
            field = entity.rest_field(column)
            where = f"path[{prefix + '.' if prefix else ''}{column}]"
            if field is None or field.type.name != "JSON":
                raise bad(f"{column!r} is not a JSON column of {entity.type_name}", where)
            paths[field.name] = path
        return paths


@attrs.define
class _Controls:
    """The row members and embedding controls of one request, taken from its parameters and handed to the include
    paths they name (`fields[posts]`, `filter[posts]`, `args[posts.score]`); what is left names nothing included."""

    fields: str | None  # the rows read's own `fields`
    controls: dict[str, dict[str, Parameter]]  # fields, order, first, offset, depth by include path
    filters: dict[str, Parameter]
    arguments: dict[str, dict[str, dict[str, Parameter]]]  # by include path, then computed field
    paths: dict[str, dict[str, str]]  # by include path, then column
    inner: list[str]
    anti: list[str]

    def value(self, control: str, path: str) -> str | None:
        member = self.controls[control].pop(path, None)
        if member is None:
            return None
        if member.members or member.value is None:
            raise bad(f"{member.name} takes a value", member.name)
        return member.value

    def finish(self) -> None:
        named = (*self.controls.items(), ("filter", self.filters), ("args", self.arguments), ("path", self.paths))
        for control, members in named:
            for path in members:
                raise bad(f"{control}[{path}] names nothing included", f"{control}[{path}]")


@attrs.define
class _Node:
    """A node of the include tree: the entity whose rows are included, and their own includes."""

    entity: Entity
    to_many: bool = False
    hierarchy: bool = False
    history: bool = False  # the versions of a temporal row
    arc: bool = False  # an exclusive arc's row (of several types: nothing is included under it)
    children: dict[str, "_Node"] = attrs.field(factory=dict)
    paths: set[str] = attrs.field(factory=set)

    def child(self, name: str, listings: Listings, path: str) -> "_Node":
        if name in self.children:
            return self.children[name]
        if self.arc:
            raise bad(f"nothing can be included under an exclusive arc's row ({path})", "include")
        meaning = listings.index.fields(self.entity).get(name)
        kinds = (
            FieldKind.RELATION, FieldKind.ANCESTORS, FieldKind.DESCENDANTS, FieldKind.COMPUTED, FieldKind.HISTORY,
            FieldKind.ARC,
        )  # fmt: skip
        if meaning is None or meaning.kind not in kinds:
            raise bad(f"{self.entity.type_name} has no relation {name!r} to include ({path})", "include")
        if meaning.arc is not None:
            node = _Node(self.entity, arc=True)
        elif meaning.relation is not None:
            target = listings.model.entity(meaning.relation.target)
            node = _Node(target, to_many=meaning.relation.kind is not Cardinality.TO_ONE)
        elif meaning.hierarchy is not None:
            node = _Node(self.entity, hierarchy=True)
        elif meaning.kind is FieldKind.HISTORY:
            node = _Node(self.entity, history=True)
        else:
            computed = meaning.computed
            assert computed is not None
            if computed.returns.kind not in (ReturnKind.ROWS, ReturnKind.ROW) or any(
                a.required for a in computed.arguments
            ):
                raise bad(f"{name} is not a set of rows without arguments: it cannot be included ({path})", "include")
            assert computed.returns.entity is not None
            node = _Node(
                listings.model.entity(computed.returns.entity), to_many=computed.returns.kind is ReturnKind.ROWS
            )
        self.children[name] = node
        return node


def _as_of(entity: Entity, value: str | None, name: str) -> str | None:
    """`asOf` or `asOf[<path>]`: an ISO 8601 instant, for a table with a temporal key (else 400 naming `name`)."""
    if value is None:
        return None
    temporal_key(entity, [name])
    return instant(value, [name])


def _windows(entity: Entity, parameters: Parameters) -> ListWindows | None:
    """`window=rowNumber,rank,...`, `partition=<col>[,<col>:<unit>]`, `running=<numeric columns>`."""
    functions = _split(parameters.take_value("window"))
    partition = _split(parameters.take_value("partition"))
    running = _split(parameters.take_value("running"))
    if not (functions or partition or running):
        return None
    for function in functions:
        if function not in _WINDOW_FUNCTIONS:
            raise bad(f"window takes {', '.join(_WINDOW_FUNCTIONS)}; got {function!r}", "window")
    if partition and not (functions or running):
        raise bad("partition applies to window or running values: give one of them", "partition")
    keys = [group_item(entity, item, "partition", binned=False) for item in partition]
    numeric = {field.name for field in member_fields(entity, AggregateMember.SUM)}
    sums: list[Field] = []
    for column in running:
        field = entity.rest_field(column)
        if field is None or field.name not in numeric:
            raise bad(f"running sums are of numeric columns; {column!r} is none of {entity.type_name}'s", "running")
        sums.append(field)
    return ListWindows(tuple(functions), tuple(keys), tuple(sums))


def group_item(entity: Entity, item: str, name: str, *, binned: bool = True) -> GroupValue:
    """A group key as REST names it (`group`, `partition`): a column, `column:<unit>` truncating a date or
    timestamp, or (where bins are given a width) `column:binned`; named as the response names it (`staffId`,
    `paymentDate:month`)."""
    column, _, form = item.partition(":")
    field = entity.rest_field(column)
    if field is None or field.name not in {value.field.name for value in group_values(entity).values()}:
        raise bad(f"{item!r}: {entity.type_name} rows cannot be grouped by {column!r}", name)
    if not form:
        return GroupValue(field.rest_name, field)
    key, type_ = f"{field.rest_name}:{form}", key_type(field)
    if form == "binned" and binned:
        if type_ is KeyType.OTHER:
            raise bad(f"{item!r}: only dates, timestamps and numbers are binned", name)
        return GroupValue(key, field, KeyForm.BINNED)
    if form not in TRUNCATION_UNITS:
        raise bad(f"{item!r}: a unit is one of {', '.join(TRUNCATION_UNITS)}{', or binned' if binned else ''}", name)
    if type_ not in (KeyType.DATE, KeyType.TIMESTAMP, KeyType.TIMESTAMPTZ):
        raise bad(f"{item!r}: only dates and timestamps are truncated", name)
    if type_ is KeyType.DATE and form in ("minute", "hour"):
        raise bad(f"{item!r}: a date has no {form}s", name)
    return GroupValue(key, field, KeyForm.TRUNCATED, form)


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()] if text else []


def split_items(value: Any, name: str) -> list[str]:
    """A body member naming fields or paths: a comma-separated string or a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return _split(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value]
    raise bad(f"{name} must be a string or a list of strings", name)


def body_text(value: Any, name: str) -> str:
    """A body member (search, aggregate) as the URL parameter text it stands for."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    return ",".join(split_items(value, name))


def _count(text: str | None, name: str) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit():
        raise bad(f"{name} must be a whole number of at least 0; got {text!r}", name)
    return int(text)


def switch(text: str | None, name: str) -> bool:
    if text is None:
        return False
    if text.lower() not in ("true", "false"):
        raise bad(f"{name} must be true or false", name)
    return text.lower() == "true"


def json_object(text: str, name: str) -> Any:
    value = parse_json(text.encode(), name, field=name)
    if not isinstance(value, dict):
        raise bad(f"{name} must be a JSON object", name)
    return value
