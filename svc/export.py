"""The exported schema files (SPEC "Command line" and "Versioning"): what `svc schema export` writes, what
`--check` compares, and what the dev watcher re-writes after a schema change.

Files (paths from `export.*`): the GraphQL SDL, the OpenAPI document (YAML for a `.yaml`/`.yml` path, JSON otherwise;
left out while `openapi.enabled` is off), the federation subgraph SDL (while `graphql.federation.enabled` is on) and
the configuration's JSON Schema. `--check` writes nothing and reports each file that is missing or differs, with the
SDL items or OpenAPI JSON Pointers that changed. The OpenAPI file is compared as a document: "the OpenAPI comparison
ignores formatting and key order", so a re-indented or re-ordered file is not drift.
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from svc.config import Config, config_json_schema
from svc.graphql import GraphqlSchema, diff_sdl
from svc.model import Model
from svc.rest import RestIndex, build_openapi, diff_openapi, openapi_json, openapi_yaml, read_openapi
from svc.version import VERSION

_YAML_SUFFIXES = (".yaml", ".yml")


@attrs.frozen
class ExportFile:
    path: Path
    text: str
    #: "graphql", "openapi" or "config_schema": how differences are described.
    kind: str
    #: The OpenAPI document `text` renders: `--check` compares documents, not texts.
    document: Mapping[str, Any] | None = None


def config_schema_text() -> str:
    return json.dumps(config_json_schema(), indent=2, ensure_ascii=False) + "\n"


def openapi_document(config: Config, model: Model) -> dict[str, Any]:
    """The OpenAPI document of the model, as the REST front end serves it (the service's version in `info`)."""
    return build_openapi(model, RestIndex(model, config.database.schemas), config, version=VERSION)


def openapi_text(path: str | Path, document: Mapping[str, Any]) -> str:
    """The document as YAML for a `.yaml`/`.yml` path, else as JSON (SPEC "Command line")."""
    if Path(path).suffix.lower() in _YAML_SUFFIXES:
        return openapi_yaml(dict(document))
    return openapi_json(dict(document))


def export_files(config: Config, graphql: GraphqlSchema, openapi: Mapping[str, Any] | None = None) -> list[ExportFile]:
    """The files `export.*` names (the loader made their paths absolute); the OpenAPI file when a document is given
    and the REST API is on."""
    files = [ExportFile(Path(config.export.graphql), graphql.sdl, "graphql")]
    if graphql.subgraph_sdl is not None:
        files.append(ExportFile(Path(config.export.subgraph), graphql.subgraph_sdl, "graphql"))
    if openapi is not None and config.openapi.enabled:
        path = Path(config.export.openapi)
        files.append(ExportFile(path, openapi_text(path, openapi), "openapi", openapi))
    files.append(ExportFile(Path(config.export.config_schema), config_schema_text(), "config_schema"))
    return files


def write_exports(files: Sequence[ExportFile]) -> list[Path]:
    """Write the files whose text changed; return the paths written."""
    written = []
    for file in files:
        if not file.path.is_file() or file.path.read_text(encoding="utf-8") != file.text:
            file.path.parent.mkdir(parents=True, exist_ok=True)
            file.path.write_text(file.text, encoding="utf-8")
            written.append(file.path)
    return written


def check_exports(files: Sequence[ExportFile]) -> list[str]:
    """One line per file that is missing or differs (with the items that changed); empty when all match."""
    problems = []
    for file in files:
        if not file.path.is_file():
            problems.append(f"{file.path}: missing")
            continue
        current = file.path.read_text(encoding="utf-8")
        if current == file.text:
            continue
        if file.kind == "openapi":
            items = _openapi_differences(file, current)
            if not items:
                continue  # formatting and key order only
        else:
            items = diff_sdl(current, file.text) if file.kind == "graphql" else []
        detail = f" ({', '.join(items[:20])}{', ...' if len(items) > 20 else ''})" if items else ""
        problems.append(f"{file.path}: differs from the generated {file.kind}{detail}")
    return problems


def _openapi_differences(file: ExportFile, current: str) -> list[str]:
    try:
        pinned = read_openapi(str(file.path), current)
    except ValueError as exc:
        return [f"unreadable: {exc}"]
    return diff_openapi(pinned, file.document)
