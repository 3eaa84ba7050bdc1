"""REST writes parsed (SPEC "REST API" -> writes, media types): the rows and values a write's body gives, coerced
against the GraphQL input types (`<Type>Input`, `<Type>Patch`), and the write's own parameters.

1. The URL owns the key: a key in the body must match it (a global ID of the same row is fine); PATCH with nothing
   to set is 400. `?by=` addresses a row by another unique key, whose columns may then change (the primary key's
   may not).
2. Bodies are JSON (every write), CSV rows (`POST` and `PUT` of a collection) or form fields (one row); a JSON Patch
   or merge patch is of one row: on a collection it is 415.
3. Creates and bulk upserts take at most `limits.bulk_rows` rows (413); `missing=null` gives the columns some rows
   omit NULL in the others. A bulk upsert's `conflict` names a unique key (default the primary key), `resolution`
   is merge or ignore, `update` the columns a merge sets.
4. A collection PATCH or DELETE takes only `filter` and `unfiltered=true`: without a filter it is 400
   FILTER_REQUIRED.
5. A JSON Patch or merge patch is applied to the row as the API shows it (`patched`, once the endpoint has read it):
   the members that changed become the update, expecting the version read.
"""

import decimal
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs

from svc.config import LimitsConfig
from svc.errors import Code, SvcError
from svc.model import Entity, Field, Model, Scalar
from svc.plan import key_value, parse_json

from . import _parse_bodies as bodies
from ._api_request import ApiRequest, Changes, Conflict, Patch, Preconditions, RowKey, Rows
from ._messages import RestRequest
from ._parse_inputs import InputTypes, Written


class WriteBodies:
    """Reads write bodies against one model and its GraphQL input types."""

    def __init__(self, model: Model, inputs: InputTypes, limits: LimitsConfig) -> None:
        self.model = model
        self.inputs = inputs
        self.limits = limits

    # --- bodies ------------------------------------------------------------------------------------------------

    def rows_body(
        self, entity: Entity, request: RestRequest, *, csv: bool, form: bool, input_type: str | None = None
    ) -> Any:
        """A create or upsert body (or, with `input_type`, an update's): JSON (object or array), CSV rows, or one
        row as form fields, typed by the input type they fill."""
        media = bodies.media_type(request.header("content-type"))
        type_ = self.inputs.get(input_type or entity.names.create_input)
        if type_ is None:
            done = "changed" if input_type else "created"
            raise SvcError(Code.PERMISSION_DENIED, f"{entity.table} rows cannot be {done}")
        if media == bodies.JSON or (media.endswith("+json") and media not in bodies.PATCHES):
            return parse_json(request.body)
        if media == bodies.CSV and csv:
            return bodies.csv_rows(request.body, entity, type_, self.inputs.schema)
        if media == bodies.MULTIPART and form:
            content_type = request.header("content-type") or ""
            return bodies.form_fields(request.body, content_type, entity, type_, self.inputs.schema)
        accepted = ", ".join([bodies.JSON, *([bodies.CSV] if csv else []), *([bodies.MULTIPART] if form else [])])
        raise bodies.unsupported(media, accepted)

    def coerce(self, entity: Entity, value: Any, type_name: str, root: str) -> Any:
        """A body object validated against an input type; errors name the path as written (`input.title`,
        `inputs[1].email`)."""
        if not isinstance(value, dict):
            raise SvcError(Code.BAD_USER_INPUT, f"{root} must be a JSON object", extensions={"field": root})
        return self.inputs.coerce(value, type_name, Written(root))

    # --- rows to create ----------------------------------------------------------------------------------------

    def created(self, entity: Entity, body: Any, missing: str) -> Rows:
        """POST: an object is one row; an array creates its rows (answered with an array)."""
        if isinstance(body, list):
            return Rows(self._many(entity, cast("list[Any]", body), missing), many=True)
        return Rows((self.coerce(entity, body, entity.names.create_input, "input"),), many=False)

    def upserted(
        self, entity: Entity, body: Any, *, missing: str, conflict: str | None, resolution: str, update: str | None
    ) -> Rows:
        """Bulk upsert of an array (SPEC "Writes" 6): its conflict key, merge or ignore, the columns to update."""
        if not isinstance(body, list):
            raise SvcError(Code.BAD_USER_INPUT, "a bulk upsert takes a JSON array (or CSV rows)")
        rows = self._many(entity, cast("list[Any]", body), missing)
        if not conflict:
            assert entity.primary_key is not None
            fields = [_field_of(entity, column) for column in entity.primary_key]
        else:
            fields = self.fields_named(entity, conflict, "conflict")
            if not any({f.column for f in fields} == set(lookup.columns) for lookup in entity.lookups):
                keys = "; ".join(
                    ",".join(_field_of(entity, c).rest_name for c in lookup.columns) for lookup in entity.lookups
                )
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"conflict={conflict} is not a unique key of {entity.table} (one of: {keys})",
                    extensions={"field": "conflict"},
                )
        updated = None
        if resolution != "ignore" and update is not None:
            updated = tuple(f.name for f in self.fields_named(entity, update, "update"))
        return Rows(rows, many=True, conflict=Conflict(tuple(f.name for f in fields), resolution == "ignore", updated))

    def _many(self, entity: Entity, body: list[Any], missing: str) -> tuple[Mapping[str, Any], ...]:
        limit = self.limits.bulk_rows
        if limit is not None and len(body) > limit:
            raise SvcError(
                Code.BULK_LIMIT_EXCEEDED,
                f"the body holds {len(body)} rows, more than {limit}",
                extensions={"limit": limit, "actual": len(body)},
            )
        rows: list[dict[str, Any]] = [
            self.coerce(entity, row, entity.names.create_input, f"inputs[{i}]") for i, row in enumerate(body)
        ]
        if missing == "null":
            every = dict.fromkeys(name for row in rows for name in row if entity.field(name) is not None)
            rows = [{**{name: None for name in every if name not in row}, **row} for row in rows]
        return tuple(rows)

    def fields_named(self, entity: Entity, text: str, name: str) -> list[Field]:
        """A parameter naming columns (`conflict=`, `update=`): REST or column names, comma-separated."""
        fields: list[Field] = []
        for item in text.split(","):
            field = entity.rest_field(item.strip())
            if field is None:
                raise SvcError(
                    Code.BAD_USER_INPUT, f"{name}: {entity.table} has no column {item.strip()!r}",
                    extensions={"field": name},
                )  # fmt: skip
            fields.append(field)
        return fields

    # --- one row by key ----------------------------------------------------------------------------------------

    def patch_body(self, entity: Entity, key: RowKey, request: RestRequest) -> Changes | Patch:
        """PATCH of a row: JSON, form fields, or a patch document (applied once the row is read)."""
        media = bodies.media_type(request.header("content-type"))
        if media in bodies.PATCHES:
            return Patch(media, parse_json(request.body))
        if media == bodies.MULTIPART:
            value = self.rows_body(entity, request, csv=False, form=True, input_type=entity.names.update_input)
        elif media == bodies.JSON or media.endswith("+json"):
            value = parse_json(request.body)
        else:
            raise bodies.unsupported(
                media, f"{bodies.JSON}, {bodies.MERGE_PATCH}, {bodies.JSON_PATCH}, {bodies.MULTIPART}"
            )
        rest, _ = self._owned_key(entity, key, _object(value, "input"), fill=False)
        if not rest:
            raise SvcError(Code.BAD_USER_INPUT, "PATCH with no fields to set")
        return Changes(self.coerce(entity, rest, entity.names.update_input, "input"))

    def put_body(self, entity: Entity, key: RowKey, must_exist: bool, request: RestRequest) -> Changes:
        """PUT of a row: the row to insert or update (with `If-Match`, an update of an existing row); the URL's key
        fills the key columns."""
        body = self.rows_body(entity, request, csv=False, form=True)
        if not isinstance(body, dict):
            raise SvcError(Code.BAD_USER_INPUT, "PUT takes one row: a JSON object")
        rest, owned = self._owned_key(entity, key, cast("dict[str, Any]", body), fill=True)
        if must_exist:
            return Changes(self.coerce(entity, rest, entity.names.update_input, "input") | owned)
        return Changes(self.coerce(entity, rest, entity.names.create_input, "input") | owned, create=True)

    def patched(self, api: ApiRequest, text: bytes | None, version: str | None) -> ApiRequest | None:
        """A JSON Patch or merge patch applied to the row as the API shows it (`text`, read at `version`): the
        update of the members that changed, expecting the version read (a change in between is STALE_VERSION);
        None when the patch changes nothing."""
        key, patch, entity = api.key, api.body, api.entity
        assert key is not None and isinstance(patch, Patch)
        if text is None:
            raise key.missing
        expected = api.preconditions.expected
        if expected is not None and expected != version:
            raise SvcError(
                Code.STALE_VERSION,
                "the row has changed since that version was read",
                extensions={"type": entity.names.error_code, "fields": ["If-Match"]},
            )
        row = json.loads(text, parse_float=decimal.Decimal)
        if patch.media == bodies.MERGE_PATCH:
            if not isinstance(patch.document, dict):
                raise SvcError(Code.BAD_USER_INPUT, "a merge patch of a row is a JSON object")
            result = bodies.merge_row(row, cast("dict[str, Any]", patch.document))
        else:
            result = bodies.json_patch(row, patch.document)
        changed = {name: value for name, value in result.items() if name not in row or row[name] != value}
        for name in row:
            if name not in result:
                changed[name] = None  # `remove` of a member: the column becomes NULL
        rest, _ = self._owned_key(entity, key, _plain(entity, changed), fill=False)
        if not rest:
            return None
        values = self.coerce(entity, rest, entity.names.update_input, "input")
        return attrs.evolve(api, body=Changes(values), preconditions=Preconditions(version, must_exist=True))

    def _owned_key(
        self, entity: Entity, key: RowKey, body: dict[str, Any], *, fill: bool
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """SPEC "Writes" 1: the URL owns the key. A key member of the body must name the URL's row (its raw value,
        or its global ID); another value is 400. With `?by=` a PATCH may change the unique key's columns, but not
        the primary key's. Answers the body without the members the URL owns, and (`fill`, for PUT) the URL's key
        by field name, to be added to the coerced row."""
        rest = dict(body)
        urls = dict(key.lookup.values)
        primary = set(entity.primary_key or ())
        changeable = key.by and not fill and set(urls) != primary  # PATCH by another unique key
        for name, member in body.items():
            field = entity.field(name)
            if field is None:
                field = entity.rest_field(name)  # as the input types accept them
            if field is None:
                continue  # an unknown member: the input type's validation names it
            at = f"input.{field.rest_name}"
            if key.by and field.column in primary and field.column not in urls:
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"{at}: the primary key cannot change in a write by another key",
                    extensions={"field": at},
                )
            if field.column not in urls or changeable:
                continue
            if key_value(self.model, entity, field, member, ["input", field.rest_name]) != urls[field.column]:
                raise SvcError(Code.BAD_USER_INPUT, f"{at} differs from the key in the URL", extensions={"field": at})
            del rest[name]
        owned = {_field_of(entity, column).name: value for column, value in key.lookup.values} if fill else {}
        return rest, owned


def choice(value: str | None, name: str, allowed: Sequence[str], default: str) -> str:
    """A parameter taking one of a few words (`missing=default|null`)."""
    if value is None:
        return default
    if value not in allowed:
        raise SvcError(
            Code.BAD_USER_INPUT, f"{name} must be {' or '.join(allowed)}; got {value!r}", extensions={"field": name}
        )
    return value


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SvcError(Code.BAD_USER_INPUT, f"{name} must be a JSON object", extensions={"field": name})
    return cast("dict[str, Any]", value)


def _field_of(entity: Entity, column: str) -> Field:
    field = entity.field_of_column(column)
    assert field is not None
    return field


def _plain(entity: Entity, members: dict[str, Any]) -> dict[str, Any]:
    """A patched row's members for input coercion. Its numbers were read as Decimals (every digit kept): a JSON
    column keeps them so (they are written as the numbers they are); any other member takes JSON numbers' Python
    form, as a body's would (a Float is a float)."""
    plain: dict[str, Any] = {}
    for name, value in members.items():
        field = entity.field(name) or entity.rest_field(name)
        json_values = field is not None and field.type.name == Scalar.JSON.value  # a JSON column, or a list of JSON
        plain[name] = value if json_values else _number(value)
    return plain


def _number(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _number(v) for k, v in cast("dict[str, Any]", value).items()}
    if isinstance(value, list):
        return [_number(v) for v in cast("list[Any]", value)]
    return value
