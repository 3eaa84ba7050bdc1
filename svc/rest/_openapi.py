"""The OpenAPI 3.1 document of the REST API (SPEC "What the service does": "a REST API under `{base_url}/rest`,
described by a generated OpenAPI 3.1 document"; "Versioning": "described by OpenAPI 3.1 (JSON Schema 2020-12)").

`build_openapi` writes it from the model and the resource index, as the REST front end serves them: `GET /rest`
(`getIndex`), `GET /rest/node/{id}` (`getNode`, when some resource has global IDs), every resource and function at
its canonical path (the per-schema aliases of default-schema resources are served but not listed), each operation the
entity offers, with its parameters, bodies, statuses and headers. `_openapi_resources.py` and
`_openapi_functions.py` write the operations, `_openapi_webhooks.py` the webhooks of tables with change events,
`_openapi_schemas.py` the JSON Schemas, `_openapi_shared.py` the reusable parameters, headers and error responses.
The bearer scheme applies to every operation (webhooks aside: they are signed): optional while `auth.anonymous` is
on, required otherwise.

The same model and configuration give the same document, key for key in the same order: the HTTP route, the exported
file and the pin comparison all rely on it. `openapi_json` and `openapi_yaml` render it (`svc export-openapi`, the
`export.openapi` file, `GET /openapi.json` with or without `Accept: application/yaml`).
"""

import json
from typing import Any

import yaml

from svc.config import Config
from svc.model import Model

from ._openapi_functions import FunctionPaths
from ._openapi_operations import Operations, path_parameter
from ._openapi_resources import ResourcePaths
from ._openapi_schemas import Schemas
from ._openapi_search import global_search_path
from ._openapi_shared import Shared
from ._openapi_values import Schema
from ._openapi_webhooks import Webhooks
from ._resources import RestIndex

OPENAPI_VERSION = "3.1.0"
#: OpenAPI 3.1's own dialect: JSON Schema 2020-12 with the OpenAPI vocabulary.
JSON_SCHEMA_DIALECT = "https://spec.openapis.org/oas/3.1/dialect/base"


def build_openapi(model: Model, index: RestIndex, config: Config, *, version: str) -> dict[str, Any]:
    """The document of the REST API that `index` routes; `version` is the service's (`info.version`)."""
    schemas = Schemas(model, config)
    shared = Shared(config, schemas)
    operations = Operations(model, config, schemas, shared)
    built_paths = _paths(index, operations)
    # After the paths (their operationIds come first), before the components (webhooks refer to header parameters).
    webhooks = Webhooks(operations, index).all()
    parts = shared.components()  # before the schemas: the error responses refer to `Problem`
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "svc REST API", "version": version, "description": _description(index, config)},
        "jsonSchemaDialect": JSON_SCHEMA_DIALECT,
        # Paths are absolute (`/rest/...`) on the host that serves this document.
        "servers": [{"url": "/"}],
        "paths": built_paths,
        # Only when some table has events: a document without them stays as it was.
        **({"webhooks": webhooks} if webhooks else {}),
        "components": {
            "schemas": schemas.all(),
            **{section: part for section, part in parts.items() if part},
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": "An OAuth 2.0 access token (a JWT). The database role is fixed by configuration;"
                    " the token's claims reach row-level-security policies.",
                }
            },
        },
        # An empty requirement makes the token optional (SPEC "Authentication": anonymous requests are served
        # unless `auth.anonymous` is off).
        "security": [{"bearer": []}, {}] if config.auth.anonymous else [{"bearer": []}],
        "tags": [{"name": name, "description": text} for name, text in operations.tags.items()],
    }


def _paths(index: RestIndex, operations: Operations) -> dict[str, Any]:
    paths: dict[str, Any] = {"/rest": {"get": _index(operations)}}
    if any(resource.entity.node for resource in index.resources):
        paths["/rest/node/{id}"] = _node(operations)
    for resource in index.resources:
        paths.update(ResourcePaths(operations, resource).paths())
    for route in index.functions:
        paths[route.path] = FunctionPaths(operations, route).path_item()
    sources = index.searchable()
    if sources:
        paths["/rest/search"] = global_search_path(operations, sources, ("search", "Search across resources."))
    return paths


def _index(operations: Operations) -> Schema:
    content = {"application/json": operations.schemas.rest_index()}
    return operations.operation(
        "getIndex",
        "List the resources and functions",
        ("rest", "The index of this API."),
        {"200": operations.shared.success("The resources, the functions and the path of this document.", content)},
        description="Each resource with its schema, GraphQL type and path; each function's path; this document's path.",
    )


def _node(operations: Operations) -> Schema:
    see_other = operations.shared.success("The row's path is in `Location`.", headers=["Location"])
    return {
        "parameters": [path_parameter("id", "A global ID.", {"type": "string"})],
        "get": operations.operation(
            "getNode",
            "Find the row of a global ID",
            ("node", "Rows by their global ID."),
            {"303": see_other},
            ("404",),
            description="Answers 303 with the row's path in `Location`; 404 for an ID that names no row.",
        ),
    }


def _description(index: RestIndex, config: Config) -> str:
    schemas = ", ".join(f"`{schema}`" for schema in index.schemas)
    several = len(index.schemas) > 1
    lines = [
        f"The REST API of the database schema{'s' if several else ''} {schemas}"
        + ("; the first is the default schema." if several else "."),
        "",
        "Each resource and function is listed once, at its canonical path: `/rest/{name}` when that names it, else"
        " `/rest/{schema}/{name}`. The per-schema aliases of default-schema resources and functions"
        " (`/rest/{schema}/{name}`, `/rest/{schema}/rpc/{function}`) are served but not listed, to keep this"
        " document small; they answer as their canonical paths do.",
        "",
        "HEAD answers like GET without a body on every readable path; OPTIONS answers 204 with `Allow` (and"
        " `Accept-Post`/`Accept-Patch` where writes are accepted). A method a path does not offer answers 405 with"
        " `Allow`; any unknown parameter or body member answers 400.",
        "",
        "Rows use the API's field names. 64-bit integers and decimals are JSON strings; dates, times and timestamps"
        " are strings as PostgreSQL writes them (ISO 8601, `infinity`, and no UTC offset for `timestamp` columns),"
        " so they are described rather than given a `format`.",
        "",
        "Errors are RFC 9457 problem documents (`application/problem+json`) whose `code` is shared with the GraphQL"
        " API.",
    ]
    if config.limits.rate_limit.enabled:
        lines += ["", "Requests are rate-limited per client: every answer carries `RateLimit-*` headers; 429 says"
                  " when to retry (`Retry-After`)."]  # fmt: skip
    return "\n".join(lines)


def openapi_json(document: dict[str, Any]) -> str:
    """The document as JSON: indented by 2, keys in the document's order, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


class _Dumper(yaml.SafeDumper):
    """A safe dumper that writes shared values again instead of as `&anchor`/`*alias` (the builder reuses schema
    objects; aliases would make the file harder to read and some tools refuse them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def openapi_yaml(document: dict[str, Any]) -> str:
    """The document as YAML (safe_dump, keys in the document's order, no aliases)."""
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def read_openapi(path: str, text: str) -> Any:
    """A pinned OpenAPI file's document (YAML for a `.yaml`/`.yml` path, JSON otherwise); ValueError when it cannot
    be read as one."""
    try:
        if path.lower().endswith((".yaml", ".yml")):
            return yaml.safe_load(text)
        return json.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ValueError(str(exc).splitlines()[0]) from exc
