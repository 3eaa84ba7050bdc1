"""Request bodies of REST writes (SPEC "REST API" -> media types, writes): JSON, JSON merge patch (RFC 7396), JSON
Patch (RFC 6902), CSV rows and multipart/form-data fields, read into the JSON values of the GraphQL input shapes.

What is read here is only shaped, not validated: `_parse_writes.py` validates every value against the GraphQL input
types. CSV cells and form fields are texts, typed by the input field they fill (as URL parameters are); an empty CSV
cell is null; a file part fills a binary (bytea) column with its bytes.
"""

import copy
import csv
import email.parser
import email.policy
import io
from collections.abc import Mapping
from typing import Any

import jsonpatch
import jsonpointer
from graphql import GraphQLInputObjectType, GraphQLSchema

from svc.errors import Code, SvcError
from svc.model import Entity

from ._parse_inputs import bad, url_value

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
CSV = "text/csv"
MULTIPART = "multipart/form-data"
#: Documents that patch one row (merge patch, JSON Patch).
PATCHES = (MERGE_PATCH, JSON_PATCH)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def unsupported(media: str, accepted: str) -> SvcError:
    return SvcError(
        Code.UNSUPPORTED_MEDIA_TYPE,
        f"this request takes {accepted}; got {media or 'no Content-Type'}",
    )


def hex_bytes(data: bytes) -> str:
    """Bytes as the text PostgreSQL reads into bytea."""
    return "\\x" + data.hex()


def csv_rows(body: bytes, entity: Entity, input_type: GraphQLInputObjectType, schema: GraphQLSchema) -> list[dict]:
    """CSV rows (a header row of field names, then one record per row) as input objects; an empty cell is null; a
    cell that does not fit its field names its row and column (`inputs[2].pages`)."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SvcError(Code.BAD_USER_INPUT, "the CSV body is not UTF-8") from None
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise SvcError(Code.BAD_USER_INPUT, f"the CSV body is malformed: {exc}") from None
    if not records:
        raise SvcError(Code.BAD_USER_INPUT, "the CSV body has no header row")
    header, rows = records[0], [r for r in records[1:] if r]
    types = {}
    for name in header:
        field = entity.rest_field(name)
        definition = input_type.fields.get(field.name if field else name)
        if definition is None:
            raise bad(f"the CSV header names {name!r}, not a writable field of {entity.type_name}", "header")
        types[name] = definition.type
    values = []
    for i, record in enumerate(rows):
        if len(record) != len(header):
            raise bad(f"CSV record {i + 1} has {len(record)} fields; the header has {len(header)}", f"inputs[{i}]")
        row = {}
        for name, cell in zip(header, record, strict=True):
            where = f"inputs[{i}].{name}"
            row[name] = None if cell == "" else url_value(cell, types[name], where, schema)
        values.append(row)
    return values


def form_fields(
    body: bytes, content_type: str, entity: Entity, input_type: GraphQLInputObjectType, schema: GraphQLSchema
) -> dict[str, Any]:
    """multipart/form-data of one row: each part a field; a file part's bytes fill a binary column. Errors name a
    field's path as a JSON body's would (`input.title`)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise SvcError(Code.BAD_USER_INPUT, "the multipart body cannot be read (check its boundary)")
    values: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            raise SvcError(Code.BAD_USER_INPUT, "a form part has no name")
        at = f"input.{name}"
        if name in values:
            raise bad(f"the form field {name} is given twice", at)
        field = entity.rest_field(name)
        definition = input_type.fields.get(field.name if field else name)
        if definition is None:
            raise bad(f"{entity.type_name} has no writable field {name!r}", at)
        payload = part.get_payload(decode=True)  # the part's bytes: it is no multipart itself
        data = payload if isinstance(payload, bytes) else b""
        if field is not None and field.type.sql_type == "bytea":
            values[name] = hex_bytes(data)
            continue
        if part.get_filename() is not None:
            raise bad(f"{name} is not a binary column: it takes a value, not a file", at)
        try:
            text = data.decode(part.get_content_charset() or "utf-8")
        except (UnicodeDecodeError, LookupError):
            raise bad(f"the form field {name} is not UTF-8 text", at) from None
        values[name] = url_value(text, definition.type, at, schema)
    return values


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: objects merge member by member, null removes a member, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = merge_patch(merged.get(name), value)
    return merged


def merge_row(row: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch over a row: a null member sets its column NULL (a row keeps all its columns); objects merge
    into JSON and composite values."""
    merged = dict(row)
    for name, value in patch.items():
        merged[name] = None if value is None else merge_patch(row.get(name), value)
    return merged


def json_patch(row: Mapping[str, Any], operations: Any) -> dict[str, Any]:
    """RFC 6902 operations over the row as the API shows it; a malformed patch is 400, a failing operation (a
    `test` that fails, a path that does not exist) 422 PATCH_FAILED."""
    if not isinstance(operations, list):
        raise SvcError(Code.BAD_USER_INPUT, "a JSON Patch is an array of operations")
    try:
        patch = jsonpatch.JsonPatch(operations)
        patched = patch.apply(copy.deepcopy(dict(row)))
    except jsonpatch.InvalidJsonPatch as exc:
        raise SvcError(Code.BAD_USER_INPUT, f"invalid JSON Patch: {exc}") from None
    except (jsonpatch.JsonPatchConflict, jsonpatch.JsonPatchTestFailed, jsonpointer.JsonPointerException) as exc:
        raise SvcError(Code.PATCH_FAILED, f"the patch cannot be applied: {exc}") from None
    except (TypeError, KeyError, AttributeError) as exc:
        raise SvcError(Code.BAD_USER_INPUT, f"invalid JSON Patch operation: {exc}") from None
    if not isinstance(patched, dict):
        raise SvcError(Code.PATCH_FAILED, "the patch replaces the row with something that is not an object")
    return patched
