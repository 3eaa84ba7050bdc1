"""The paths of each resource in the OpenAPI document (SPEC "REST API" -> route table; the REST design's "Routes per
resource"): only the operations the entity offers, as the GraphQL schema has them (`Entity.operations`, the primary
key, `Entity.upsertable`).

- `/rest/{r}`: GET `list<Types>` (list or connection), POST `create<Type>` (create), PUT `upsert<Types>` (create,
  update, upserts and a key), PATCH `update<Types>` and DELETE `delete<Types>` (update, delete; a key).
- `/rest/{r}/search`: POST `search<Types>` (list or connection).
- `/rest/{r}/search/{method}`: POST `<method>Search<Types>` per search method (list; `_openapi_search.py`).
- `/rest/{r}/aggregate`: GET `aggregate<Types>` and POST `aggregate<Types>ByBody` (list or connection), each member
  listing the columns it takes, `group` the items it may name.
- `/rest/{r}/{key}` (a primary key): GET `get<Type>` (read), PUT `upsert<Type>` (create and update), PATCH
  `update<Type>` (update), DELETE `delete<Type>` (delete). `{key}` is named after a single key column (`{filmId}`).
- `/rest/{r}/{key}/{column}` (a bytea column): GET `get<Type><Column>` (read), PUT `update<Type><Column>` (update).

`<Type>` and `<Types>` are the GraphQL type and its plural.
"""

from typing import Any

from svc.model import Field, Operation, pascal
from svc.plan import TRUNCATION_UNITS, AggregateMember, KeyType, group_values, key_type, member_fields

from ._openapi_operations import Operations, body, path_parameter, present
from ._openapi_search import search_paths
from ._openapi_values import Schema, described, is_bytea, is_json, nullable
from ._resources import Resource

_LIST_PARAMETERS = ("filter", "order", "first", "after", "last", "before", "offset", "fields", "include", "cursors",
                    "window", "partition", "running", "inner", "anti")  # fmt: skip
_LIST_HEADERS = ("Link", "Accept-Ranges", "Content-Range", "X-Total-Count", "X-Total-Count-Estimate",
                 "Preference-Applied")  # fmt: skip
_SEARCH_HEADERS = ("X-Next-Cursor", "X-Previous-Cursor", "Accept-Ranges", "Content-Range", "X-Total-Count",
                   "X-Total-Count-Estimate", "Preference-Applied")  # fmt: skip
#: Bytes of any media type: no schema to check them against.
_BINARY = None


def resource_tag(resource: Resource) -> tuple[str, str]:
    """The tag of a resource's operations (and its webhooks): its path under `/rest/`, and what it is."""
    entity = resource.entity
    kind = entity.kind.name.lower().replace("_", " ")
    return resource.path.removeprefix("/rest/"), entity.description or f"The {kind} `{entity.schema}.{entity.table}`."


class ResourcePaths:
    """The paths of one resource: its collection, search, row and binary-column paths."""

    def __init__(self, operations: Operations, resource: Resource) -> None:
        self.operations = operations
        self.shared = operations.shared
        self.schemas = operations.schemas
        self.entity = entity = resource.entity
        self.base = resource.path
        self.tag = resource_tag(resource)
        self.ops = entity.operations
        self.keyed = entity.primary_key is not None
        self.row = self.schemas.row(entity)
        self.type = entity.type_name
        self.types = entity.plural_name

    def paths(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        listed = Operation.LIST in self.ops or Operation.CONNECTION in self.ops
        collection = {
            "get": self._list() if listed else None,
            "post": self._create() if Operation.CREATE in self.ops else None,
            "put": self._bulk_upsert() if self._upserts() else None,
            "patch": self._bulk_write("update") if Operation.UPDATE in self.ops and self.keyed else None,
            "delete": self._bulk_write("delete") if Operation.DELETE in self.ops and self.keyed else None,
        }
        if any(collection.values()):
            found[self.base] = present(collection)
        if listed:
            found[f"{self.base}/search"] = {"post": self._search()}
        if Operation.LIST in self.ops:
            found.update(search_paths(self.operations, self.entity, self.base, self.tag))
            found[f"{self.base}/aggregate"] = {"get": self._aggregate(), "post": self._aggregate_by_body()}
        if self.keyed:
            found.update(self._row_paths())
        return found

    def _upserts(self) -> bool:
        """PUT on the collection and the key routes: foreign tables offer no upserts."""
        return Operation.CREATE in self.ops and Operation.UPDATE in self.ops and self.keyed and self.entity.upsertable

    def _operation(
        self, name: str, summary: str, responses: dict[str, Schema], errors: tuple[str, ...] = (), **kwargs: Any
    ) -> Schema:
        deprecated = self.entity.deprecation is not None
        return self.operations.operation(name, summary, self.tag, responses, errors, deprecated=deprecated, **kwargs)

    # --- lists -------------------------------------------------------------------------------------------------

    def _list_content(self) -> dict[str, Schema]:
        return {
            "application/json": {"type": "array", "items": self.row},
            "application/x-ndjson": {"type": "string", "description": "One row (a JSON object) per line."},
            "text/csv": {
                "type": "string",
                "description": "A header row of the selected fields, then one record per row; null is empty, objects"
                " and lists are JSON text.",
            },
        }

    def _list_responses(self, headers: tuple[str, ...]) -> dict[str, Schema]:
        content = self._list_content()
        return {
            "200": self.shared.success(f"`{self.type}` rows.", content, headers),
            "206": self.shared.success(f"A range of the `{self.type}` rows (`Range`).", content, headers),
        }

    def _list(self) -> Schema:
        names: list[str] = list(_LIST_PARAMETERS)
        if any(is_json(f.type) for f in self.entity.fields):
            names.append("path")
        if any(computed.arguments for computed in self.entity.computed):
            names.append("args")
        if self.entity.temporal is not None:
            names.append("asOf")
        return self._operation(
            f"list{self.types}",
            f"List `{self.type}` rows",
            self._list_responses(_LIST_HEADERS),
            ("406", "416"),
            description="A page of rows in keyset order (`first`/`after`, `last`/`before`, `offset`) or a `Range` of"
            " them, as JSON, NDJSON (`Accept: application/x-ndjson`) or CSV (`Accept: text/csv`).",
            parameters=self.shared.parameters([*names, "PreferCount", "Range"]),
        )

    def _search(self) -> Schema:
        return self._operation(
            f"search{self.types}",
            f"List `{self.type}` rows, with the parameters in a JSON body",
            self._list_responses(_SEARCH_HEADERS),
            ("406", "413", "415", "416"),
            description="As `GET` with its list parameters as body members; the query string must be empty. The"
            " next page's cursor is in `X-Next-Cursor`.",
            parameters=self.shared.parameters(["PreferCount", "Range"]),
            body=body({"application/json": self.schemas.search_request()}, required=False),
        )

    # --- aggregates ----------------------------------------------------------------------------------------------

    def _aggregate_members(self) -> dict[str, Schema]:
        """Each aggregate request member the table offers, as a schema (column lists with their columns' names)."""
        members: dict[str, Schema] = {}
        for member in AggregateMember:
            columns = [field.rest_name for field in member_fields(self.entity, member)]
            if columns:
                members[member.value] = {"type": "array", "items": {"type": "string", "enum": columns}}
        if "percentile" in members:
            members["fraction"] = {"type": "number", "minimum": 0, "maximum": 1, "description": "For `percentile`."}
        items: list[str] = []
        for value in group_values(self.entity).values():
            if value.unit is not None or value.name.endswith("_BINNED"):
                continue
            name, type_ = value.field.rest_name, key_type(value.field)
            items.append(name)
            if type_ in (KeyType.DATE, KeyType.TIMESTAMP, KeyType.TIMESTAMPTZ):
                date = type_ is KeyType.DATE
                items += [f"{name}:{unit}" for unit in TRUNCATION_UNITS if not (date and unit in ("minute", "hour"))]
            if type_ is not KeyType.OTHER:
                items.append(f"{name}:binned")
        if items:
            members["group"] = {
                "type": "array",
                "items": {"type": "string", "enum": items},
                "maxItems": 4,
                "description": "Group keys: a column, `column:<unit>` truncated (in `timeZone`), or `column:binned`.",
            }
            members["having"] = {
                "type": "object",
                "description": "Conditions on groups, all must hold: `having[count][gt]=n`,"
                " `having[sum|avg|min|max][<column>][gte]=n`.",
                "additionalProperties": True,
            }
            members["timeZone"] = {"type": "string", "description": "An IANA zone truncated keys follow."}
            members["binWidth"] = {
                "type": "string",
                "description": "Binned keys' width: an ISO 8601 duration without months or years (`PT15M`), or a"
                " number for numeric columns.",
            }
            members["binOrigin"] = {"type": "string", "description": "Where bins start (default 2001-01-01 or 0)."}
            members["fillGaps"] = {
                "type": "boolean",
                "description": "With one truncated or binned key: the empty groups between the first and last.",
            }
        return members

    def _aggregate_responses(self) -> dict[str, Schema]:
        one = self.schemas.aggregate(self.entity, grouped=False)
        group = self.schemas.aggregate(self.entity, grouped=True)
        result: Schema = {"oneOf": [one, {"type": "array", "items": group}]}
        content = {
            "application/json": {"oneOf": [*result["oneOf"], {"type": "object", "additionalProperties": result}]}
        }
        return {
            "200": self.shared.success(
                f"Aggregates of `{self.type}` rows: one set, its groups, or named sets.", content
            )
        }

    def _aggregate(self) -> Schema:
        parameters = [self.shared.parameter("filter")]
        for name, schema in self._aggregate_members().items():
            parameter: Schema = {"name": name, "in": "query", "schema": schema}
            if schema.get("type") == "array":
                parameter.update(style="form", explode=False)
            if name == "having":
                parameter.update(style="deepObject", explode=True)
            parameters.append(parameter)
        return self._operation(
            f"aggregate{self.types}",
            f"Aggregate `{self.type}` rows",
            self._aggregate_responses(),
            ("422",),
            description="Aggregates of the rows `filter` selects: `count`, and each member asked for by column;"
            " grouped by `group`, a list of groups ordered by their keys. More than `limits.groups` groups is 422"
            " `TOO_MANY_GROUPS`.",
            parameters=parameters,
        )

    def _aggregate_by_body(self) -> Schema:
        return self._operation(
            f"aggregate{self.types}ByBody",
            f"Aggregate `{self.type}` rows, with the members (or named sets of them) in a JSON body",
            self._aggregate_responses(),
            ("413", "415", "422"),
            description="As `GET` with its members in the body; `sets` answers an object of the sets by name. The"
            " query string must be empty.",
            body=body(
                {"application/json": self.schemas.aggregate_request(self.entity, self._aggregate_members())},
                required=False,
            ),
        )

    # --- writes to the collection ------------------------------------------------------------------------------

    def _rows(self) -> Schema:
        return {"type": "array", "items": self.row}

    def _create(self) -> Schema:
        create = self.schemas.create(self.entity)
        many: Schema = {"type": "array", "items": create}
        if self.operations.config.limits.bulk_rows is not None:
            many["maxItems"] = self.operations.config.limits.bulk_rows
        created = ["Location", "ETag"] if self.keyed else []
        return self._operation(
            f"create{self.type}",
            f"Create `{self.type}` rows",
            {
                "201": self.shared.success(
                    "The row created (for an object), or the rows (for an array)"
                    + ("; `Location` and `ETag` name the row created from an object." if self.keyed else "."),
                    {"application/json": {"oneOf": [self.row, self._rows()]}},
                    created,
                    written=True,
                ),
                "204": self.shared.success(
                    "Created (`Prefer: return=minimal`).", headers=["Preference-Applied"], written=True
                ),
            },
            ("404", "409", "413", "415", "422"),
            description="One row from an object (or a multipart form), many from an array or CSV, in one statement."
            " A nested write naming a row that does not exist (`connect`, `update`) is 404.",
            parameters=self.shared.parameters(["PreferReturn", "missing"]),
            body=body(
                {
                    "application/json": {"oneOf": [create, many]},
                    "text/csv": {"type": "string", "description": "A header row naming fields, one record per row."},
                    "multipart/form-data": described(create, "One part per field; a file part fills a binary column."),
                }
            ),
        )

    def _bulk_upsert(self) -> Schema:
        return self._operation(
            f"upsert{self.types}",
            f"Insert or update `{self.type}` rows",
            {
                "200": self.shared.success(
                    "The rows as they are now.", {"application/json": self._rows()}, written=True
                ),
                "204": self.shared.success(
                    "Written (`Prefer: return=minimal`).", headers=["Preference-Applied"], written=True
                ),
            },
            ("404", "409", "413", "415", "422"),
            description="Rows that conflict on the `conflict` key are merged or left (`resolution`); others are"
            " inserted. A nested write naming a row that does not exist is 404.",
            parameters=self.shared.parameters(["conflict", "resolution", "update", "missing", "PreferReturn"]),
            body=body(
                {
                    "application/json": {"type": "array", "items": self.schemas.create(self.entity)},
                    "text/csv": {"type": "string", "description": "A header row naming fields, one record per row."},
                }
            ),
        )

    def _bulk_write(self, verb: str) -> Schema:
        updating = verb == "update"
        counted = ["X-Affected-Count"]
        return self._operation(
            f"{verb}{self.types}",
            f"{verb.capitalize()} the `{self.type}` rows a filter matches",
            {
                "200": self.shared.success(
                    f"The rows {verb}d.", {"application/json": self._rows()}, counted, written=True
                ),
                "204": self.shared.success(
                    f"{verb.capitalize()}d (`Prefer: return=minimal`).",
                    headers=[*counted, "Preference-Applied"],
                    written=True,
                ),
            },
            ("409", "413", "415", "422") if updating else ("409", "413"),
            description="Needs a `filter`, or `unfiltered=true` (else 400 `FILTER_REQUIRED`); more matching rows than"
            " `limits.bulk_rows` roll back with 413."
            + (" The body sets columns only (no relation members)." if updating else ""),
            parameters=self.shared.parameters(["filter", "unfiltered", "PreferReturn"]),
            body=body({"application/json": self.schemas.update(self.entity)}) if updating else None,
        )

    # --- rows ------------------------------------------------------------------------------------------------------

    def _row_paths(self) -> dict[str, Any]:
        key_name, key = self._key_parameter()
        path = f"{self.base}/{{{key_name}}}"
        row = {
            "get": self._get() if Operation.READ in self.ops else None,
            "put": self._upsert() if self._upserts() else None,
            "patch": self._update() if Operation.UPDATE in self.ops else None,
            "delete": self._delete() if Operation.DELETE in self.ops else None,
        }
        found: dict[str, Any] = {}
        if any(row.values()):
            found[path] = {"parameters": [key], **present(row)}
        for field in self.entity.fields:
            if is_bytea(field):
                column = {
                    "get": self._bytes(field) if Operation.READ in self.ops else None,
                    "put": self._put_bytes(field) if Operation.UPDATE in self.ops and field.updatable else None,
                }
                if any(column.values()):
                    found[f"{path}/{field.rest_name}"] = {"parameters": [key], **present(column)}
        return found

    def _key_parameter(self) -> tuple[str, Schema]:
        """`{<key field>}` for a single-column key (also a global ID where the type has them), else `{key}`: the values
        comma-separated in key order."""
        assert self.entity.primary_key is not None
        fields = [self.entity.field_of_column(column) for column in self.entity.primary_key]
        if len(fields) == 1 and fields[0] is not None:
            field = fields[0]
            text = f"The primary key (`{field.column}`)" + (", or the row's global ID." if self.entity.node else ".")
            return field.rest_name, path_parameter(field.rest_name, text, self.schemas.value(field.type))
        columns = ",".join(f.rest_name for f in fields if f is not None)
        text = f"The primary key's values, comma-separated in key order (`{columns}`); a comma in a value is `%2C`."
        if self.entity.temporal is not None:
            text += " A GET names a row by the key without its period: the version valid at `asOf` (default now)."
        return "key", path_parameter("key", text, {"type": "string"})

    def _written(self, description: str) -> dict[str, Schema]:
        """200 with the row (or `{row, previous}`), 204 for `return=minimal`."""
        previous = {
            "type": "object",
            "properties": {"row": self.row, "previous": nullable(self.row)},
            "required": ["row", "previous"],
        }
        return {
            "200": self.shared.success(
                f"{description} (`{{row, previous}}` with `Prefer: previous`).",
                {"application/json": {"anyOf": [self.row, previous]}},
                ["ETag"],
                written=True,
            ),
            "204": self.shared.success(
                "Written (`Prefer: return=minimal`).", headers=["Preference-Applied"], written=True
            ),
        }

    def _get(self) -> Schema:
        return self._operation(
            f"get{self.type}",
            f"Read one `{self.type}` row",
            {
                "200": self.shared.success(f"The `{self.type}` row.", {"application/json": self.row}, ["ETag"]),
                "304": self.shared.not_modified(),
            },
            ("404",),
            description="The row with this key (or, with `by`, with these values of another unique key); `fields`,"
            " `include` and the embedding controls shape it.",
            parameters=self.shared.parameters(
                ["fields", "include", "by", *(["asOf"] if self.entity.temporal is not None else []), "IfNoneMatch"]
            ),
        )

    def _upsert(self) -> Schema:
        create = self.schemas.create(self.entity)
        return self._operation(
            f"upsert{self.type}",
            f"Insert or update one `{self.type}` row",
            self._written("The row as written"),
            ("404", "409", "412", "413", "415", "422"),
            description="The URL owns the key: a key in the body must match it. With `If-Match` the row must exist"
            " (else 404).",
            parameters=self.shared.parameters(["IfMatch", "PreferPrevious"]),
            body=body({"application/json": create, "multipart/form-data": create}),
        )

    def _update(self) -> Schema:
        update = self.schemas.update(self.entity)
        return self._operation(
            f"update{self.type}",
            f"Update one `{self.type}` row",
            self._written("The row as updated"),
            ("404", "409", "412", "413", "415", "422"),
            description="A JSON object, a JSON merge patch or a JSON Patch (RFC 6902, against the row as the API"
            " shows it).",
            parameters=self.shared.parameters(["by", "IfMatch", "PreferPrevious"]),
            body=body(
                {
                    "application/json": update,
                    "application/merge-patch+json": update,
                    "application/json-patch+json": self.schemas.json_patch(),
                    "multipart/form-data": update,
                }
            ),
        )

    def _delete(self) -> Schema:
        return self._operation(
            f"delete{self.type}",
            f"Delete one `{self.type}` row",
            {
                "200": self.shared.success(
                    "The row as it was.", {"application/json": self.row}, ["ETag"], written=True
                ),
                "204": self.shared.success(
                    "Deleted (`Prefer: return=minimal`).", headers=["Preference-Applied"], written=True
                ),
            },
            ("404", "409", "412"),
            description="Answers the row as it was; with `If-Match`, only while the row has that version.",
            parameters=self.shared.parameters(["by", "IfMatch", "PreferReturn"]),
        )

    def _bytes(self, field: Field) -> Schema:
        return self._operation(
            f"get{self.type}{pascal(field.name)}",
            f"Read the bytes of `{field.rest_name}`",
            {
                "200": self.shared.success(
                    "The bytes, with a media type sniffed from the first bytes (else application/octet-stream).",
                    {"*/*": _BINARY},
                )
            },
            ("404",),
            description=f"The value of the binary column `{field.column}` as bytes, not as hex text.",
        )

    def _put_bytes(self, field: Field) -> Schema:
        return self._operation(
            f"update{self.type}{pascal(field.name)}",
            f"Replace the bytes of `{field.rest_name}`",
            {"200": self.shared.success("The row as updated.", {"application/json": self.row}, ["ETag"], written=True)},
            ("404", "412", "413"),
            description="The body, of any media type, becomes the column's value; its name and type are not stored.",
            parameters=self.shared.parameters(["IfMatch"]),
            body=body({"*/*": _BINARY}),
        )
