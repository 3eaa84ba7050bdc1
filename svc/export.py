"""The exported schema files (SPEC "Command line" and "Versioning"): what `svc schema export` writes, what
`--check` compares, and what the dev watcher re-writes after a schema change.

Files (paths from `export.*`): the GraphQL SDL and the configuration's JSON Schema; the OpenAPI document and the
federation subgraph join with their issues. `--check` writes nothing and reports each file that is missing or
differs, with the SDL items that changed.
"""

import json
from collections.abc import Sequence
from pathlib import Path

import attrs

from svc.config import Config, config_json_schema
from svc.graphql import GraphqlSchema, diff_sdl


@attrs.frozen
class ExportFile:
    path: Path
    text: str
    #: "graphql" or "config_schema": how differences are described.
    kind: str


def config_schema_text() -> str:
    return json.dumps(config_json_schema(), indent=2, ensure_ascii=False) + "\n"


def export_files(config: Config, graphql: GraphqlSchema) -> list[ExportFile]:
    """The files `export.*` names (the loader made their paths absolute)."""
    return [
        ExportFile(Path(config.export.graphql), graphql.sdl, "graphql"),
        ExportFile(Path(config.export.config_schema), config_schema_text(), "config_schema"),
    ]


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
    """One line per file that is missing or differs (with the SDL items that changed); empty when all match."""
    problems = []
    for file in files:
        if not file.path.is_file():
            problems.append(f"{file.path}: missing")
            continue
        current = file.path.read_text(encoding="utf-8")
        if current == file.text:
            continue
        items = diff_sdl(current, file.text) if file.kind == "graphql" else []
        detail = f" ({', '.join(items[:20])}{', ...' if len(items) > 20 else ''})" if items else ""
        problems.append(f"{file.path}: differs from the generated {file.kind}{detail}")
    return problems
