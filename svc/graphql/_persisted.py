"""Persisted queries and the allow-list (SPEC "Persisted queries", "States and transitions"): which document text a
request runs, decided from what it names (its text, `documentId`, or `extensions.persistedQuery`) before anything
is parsed.

- The manifest (`graphql.persisted_queries.manifest`, read with each snapshot): Apollo's format (`{"format":
  "apollo-persisted-query-manifest", "version": 1, "operations": [{id, name, type, body}]}`) or a map of id to
  text. An entry is named by its id (`documentId`) or by the SHA-256 of its text (`documentId: "sha256:<hex>"`, or
  the automatic protocol's `sha256Hash`).
- Automatic mode (Apollo's APQ, `extensions.persistedQuery {version: 1, sha256Hash}`): a hash alone runs the text
  registered under it, else PERSISTED_QUERY_NOT_FOUND (HTTP 200: the client resends it with its text); a hash with
  its text registers the text in this instance's memory (least recently used out past `REGISTRY_BYTES`); a hash
  that is not the text's is PERSISTED_QUERY_HASH_MISMATCH and registers nothing.
- Allow-list: only manifest entries run, whether named by id, by hash, or sent as text whose hash is listed;
  anything else (introspection included, unless listed) is OPERATION_NOT_ALLOWED, and nothing is registered.
- Off: a request naming a hash or a `documentId` is PERSISTED_QUERY_NOT_SUPPORTED.
"""

import collections
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import attrs
from graphql import OperationDefinitionNode

from svc.errors import Code, SvcError

from ._document_parser import DocumentParser

#: Apollo's manifest format identifier (the format with `operations`).
APOLLO_FORMAT = "apollo-persisted-query-manifest"
#: Text registered by automatic mode, per instance, at most (the least recently used goes first).
REGISTRY_BYTES = 16 * 1024 * 1024
_HASH = re.compile(r"[0-9a-fA-F]{64}")
_OPERATION_TYPES = ("query", "mutation", "subscription")


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ManifestError(Exception):
    """The manifest file cannot be used (unreadable, not JSON, not one of the two formats)."""


@attrs.frozen
class ManifestOperation:
    id: str
    body: str
    name: str | None = None
    #: The operation type the manifest declares (Apollo's format), checked against the document.
    type: str | None = None


@attrs.frozen
class Manifest:
    """A manifest's operations by id and by the SHA-256 of their text."""

    operations: tuple[ManifestOperation, ...]
    by_id: Mapping[str, str]
    by_hash: Mapping[str, str]

    @classmethod
    def of(cls, operations: tuple[ManifestOperation, ...]) -> "Manifest":
        by_id = {operation.id: operation.body for operation in operations}
        by_hash = {sha256_hex(operation.body): operation.body for operation in operations}
        return cls(operations, by_id, by_hash)


def read_manifest(text: str) -> Manifest:
    """The manifest a file holds; ManifestError when it is not one."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ManifestError(f"not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ManifestError("must be a JSON object")
    if "operations" in document or "format" in document:
        return Manifest.of(_apollo_operations(document))
    operations = []
    for key, body in document.items():
        if not isinstance(body, str):
            raise ManifestError(f"entry {key!r}: a map of id to text must have text values")
        operations.append(ManifestOperation(key, body))
    return Manifest.of(tuple(operations))


def _apollo_operations(document: Mapping[str, Any]) -> tuple[ManifestOperation, ...]:
    if document.get("format") != APOLLO_FORMAT:
        raise ManifestError(f"format must be {APOLLO_FORMAT!r} (or give a map of id to text)")
    if document.get("version") != 1:
        raise ManifestError("version must be 1 (the manifest format version this service reads)")
    entries = document.get("operations")
    if not isinstance(entries, list):
        raise ManifestError("operations must be a list")
    operations = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManifestError(f"operations[{i}] must be an object")
        id_, body, name, kind = entry.get("id"), entry.get("body"), entry.get("name"), entry.get("type")
        if not isinstance(id_, str) or not id_ or not isinstance(body, str):
            raise ManifestError(f"operations[{i}] needs a string id and body")
        if not isinstance(name, str | None) or kind not in (None, *_OPERATION_TYPES):
            raise ManifestError(f"operations[{i}] ({id_}): name must be a string and type one of {_OPERATION_TYPES}")
        operations.append(ManifestOperation(id_, body, name, kind))
    ids = [operation.id for operation in operations]
    duplicates = sorted({id_ for id_ in ids if ids.count(id_) > 1})
    if duplicates:
        raise ManifestError(f"ids given more than once: {', '.join(duplicates)}")
    return tuple(operations)


def manifest_problems(manifest: Manifest, documents: DocumentParser) -> list[str]:
    """Each manifest operation that does not validate against the schema (or is not the type it says), named."""
    problems = []
    for operation in manifest.operations:
        named = f"{operation.id} ({operation.name})" if operation.name else operation.id
        try:
            document = documents.parse(operation.body)
        except SvcError as error:
            problems.append(f"persisted-query manifest operation {named} does not validate: {error.message}")
            continue
        kinds = {d.operation.value for d in document.definitions if isinstance(d, OperationDefinitionNode)}
        if operation.type is not None and kinds != {operation.type}:
            found = ", ".join(sorted(kinds)) or "no operation"
            problems.append(f"persisted-query manifest operation {named} is a {operation.type} but holds {found}")
    return problems


class Registry:
    """Texts registered by automatic mode by their hash, in this instance's memory, least recently used out past
    `limit` bytes of text. Registering is a plain dict update: Trio runs one task at a time, so no lock."""

    def __init__(self, limit: int = REGISTRY_BYTES) -> None:
        self._texts: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._size = 0
        self._limit = limit

    def __len__(self) -> int:
        return len(self._texts)

    def get(self, digest: str) -> str | None:
        text = self._texts.get(digest)
        if text is not None:
            self._texts.move_to_end(digest)
        return text

    def register(self, digest: str, text: str) -> None:
        if digest in self._texts:
            self._texts.move_to_end(digest)
            return
        self._texts[digest] = text
        self._size += len(text)
        while self._size > self._limit and len(self._texts) > 1:
            _, dropped = self._texts.popitem(last=False)
            self._size -= len(dropped)


@attrs.frozen
class PersistedQueries:
    """What one snapshot's configuration says about persisted queries, its manifest, and the instance's registry."""

    enabled: bool = False
    automatic: bool = True
    allow_list: bool = False
    manifest: Manifest | None = None
    registry: Registry = attrs.field(factory=Registry, eq=False)

    def text(self, query: str | None, document_id: str | None, extensions: Mapping[str, Any] | None) -> str:
        """The document text a request runs; raises the SvcError that refuses it. Nothing here parses the text."""
        persisted = (extensions or {}).get("persistedQuery")
        if persisted is None and document_id is None:
            if self.allow_list and (query is None or self._listed(sha256_hex(query)) is None):
                raise _not_allowed()
            return _text(query)
        if not self.enabled:
            raise SvcError(
                Code.PERSISTED_QUERY_NOT_SUPPORTED, "persisted queries are not supported here: send the query text"
            )
        if document_id is not None:
            if query is not None or persisted is not None:
                raise SvcError(Code.BAD_USER_INPUT, "give documentId alone, without query or persistedQuery")
            return self._document(document_id)
        return self._automatic(query, _digest(persisted))

    def _document(self, document_id: str) -> str:
        found = self.manifest.by_id.get(document_id) if self.manifest is not None else None
        if found is None and document_id.startswith("sha256:") and _HASH.fullmatch(document_id[7:]):
            found = self._listed(document_id[7:].lower())
        if found is None:
            if self.allow_list:
                raise _not_allowed()
            raise SvcError(Code.PERSISTED_QUERY_NOT_FOUND, f"no persisted document {document_id!r}")
        return found

    def _automatic(self, query: str | None, digest: str) -> str:
        if query is not None:
            if sha256_hex(query) != digest:
                raise SvcError(
                    Code.PERSISTED_QUERY_HASH_MISMATCH, "persistedQuery.sha256Hash is not the SHA-256 of the query"
                )
            if self.allow_list:
                if self._listed(digest) is None:
                    raise _not_allowed()
            elif self.automatic:
                self.registry.register(digest, query)
            return query
        found = self._listed(digest)
        if found is None and self.automatic and not self.allow_list:
            found = self.registry.get(digest)
        if found is None:
            if self.allow_list:
                raise _not_allowed()
            raise SvcError(Code.PERSISTED_QUERY_NOT_FOUND, "PersistedQueryNotFound")
        return found

    def _listed(self, digest: str) -> str | None:
        return self.manifest.by_hash.get(digest) if self.manifest is not None else None


def _digest(persisted: Any) -> str:
    """The hash `extensions.persistedQuery` names (version 1 of the automatic protocol)."""
    if not isinstance(persisted, Mapping):
        raise SvcError(Code.BAD_USER_INPUT, "extensions.persistedQuery must be an object")
    if persisted.get("version") != 1:
        raise SvcError(Code.BAD_USER_INPUT, "extensions.persistedQuery.version must be 1")
    digest = persisted.get("sha256Hash")
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        raise SvcError(Code.BAD_USER_INPUT, "extensions.persistedQuery.sha256Hash must be 64 hexadecimal digits")
    return digest.lower()


def _text(query: str | None) -> str:
    if query is None or not query.strip():
        raise SvcError(Code.BAD_USER_INPUT, "the request has no query")
    return query


def _not_allowed() -> SvcError:
    return SvcError(Code.OPERATION_NOT_ALLOWED, "only the operations of the persisted-query manifest may run here")
