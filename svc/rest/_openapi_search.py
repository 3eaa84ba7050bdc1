"""The search paths of the OpenAPI document (SPEC REST "Search methods", `GET|POST /rest/search`): one path per
search method a resource has (`/rest/{r}/search/fuzzy`, POST `fuzzySearch<Types>`), its body's members as the
method takes them, and the hits it answers; `/rest/search` (GET `globalSearch`, POST `globalSearchByBody`) when some
resource is searchable by text.
"""

from collections.abc import Sequence
from typing import Any

from svc.config import Config
from svc.model import Entity, SearchMethod

from ._openapi_fixed import list_members
from ._openapi_operations import Operations, body
from ._openapi_values import Schema
from ._parse_search import LISTING_MEMBERS, METHOD_MEMBERS, REQUIRED_MEMBERS

_NUMBER: Schema = {"type": "number"}
_DESCRIPTIONS = {
    SearchMethod.FUZZY: "Rows whose text is most like `query` (trigram word similarity of at least `minSimilarity`,"
    " else the database's word-similarity threshold), best first.",
    SearchMethod.FULL_TEXT: "Rows whose document matches `query` (web-search syntax: words, quoted phrases, `or`,"
    " `-excluded`) by rank; `highlight` adds each hit's text with the matches marked, HTML-escaped.",
    SearchMethod.SEMANTIC: "Rows whose vector is most similar to `vector` (at least `minScore`), best first.",
    SearchMethod.HYBRID: "Rows by reciprocal rank fusion of a text search for `query` and a vector search for"
    " `vector`: each ranks its best 50 (or first + 1) rows, a row scores `weight / (rrfK + rank)` summed.",
    SearchMethod.NEAREST: "Rows nearest to the GeoJSON geometry `near` (within `maxDistance`), each hit with its"
    " distance (a geography's in metres).",
}
_SCORE = {
    "type": "number",
    "description": "Higher is better: word similarity, ts_rank, vector similarity (cosine, inner product,"
    " 1 / (1 + L2 distance)), fused reciprocal ranks, or 1 / (1 + distance).",
}


def search_paths(operations: Operations, entity: Entity, base: str, tag: tuple[str, str]) -> dict[str, Any]:
    """The paths of the search methods an entity has."""
    paths: dict[str, Any] = {}
    row = operations.schemas.row(entity)
    for method in entity.search.methods:
        name = method.root_suffix
        paths[f"{base}/search/{method.value}"] = {
            "post": operations.operation(
                f"{name[:1].lower()}{name[1:]}{entity.plural_name}",
                f"Search `{entity.type_name}` rows ({method.value})",
                tag,
                _hits_response(operations, _hit(row, method), f"The best `{entity.type_name}` matches."),
                ("413", "415"),
                description=_DESCRIPTIONS[method],
                body=body({"application/json": _body(operations.config, entity, method)}),
                deprecated=entity.deprecation is not None,
            )
        }
    return paths


def global_search_path(operations: Operations, sources: Sequence[tuple[Entity, str]], tag: tuple[str, str]) -> Schema:
    """`/rest/search`: the best matches of a text query among `sources` (entity, its name in the hits)."""
    hit: Schema = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [name for _, name in sources], "description": "The hit's resource."},
            "row": {"oneOf": [operations.schemas.row(entity) for entity, _ in sources]},
            "score": _SCORE,
        },
        "required": ["type", "row", "score"],
    }
    first = _first(operations.config)
    description = "The best matches of `query` among every resource searchable by text (full text, else fuzzy),"
    responses = _hits_response(operations, hit, "The best matches of every searchable resource.")
    return {
        "get": operations.operation(
            "globalSearch",
            "Search every searchable resource",
            tag,
            responses,
            description=f"{description} merged by score.",
            parameters=[
                {"name": "query", "in": "query", "required": True, "schema": {"type": "string"}},
                {"name": "first", "in": "query", "schema": first},
            ],
        ),
        "post": operations.operation(
            "globalSearchByBody",
            "Search every searchable resource, with the query in a JSON body",
            tag,
            responses,
            ("413", "415"),
            description=f"{description} merged by score. The query string must be empty.",
            body=body(
                {
                    "application/json": {
                        "type": "object",
                        "properties": {"query": {"type": "string"}, "first": first},
                        "required": ["query"],
                        "additionalProperties": False,
                    }
                }
            ),
        ),
    }


def _hits_response(operations: Operations, hit: Schema, description: str) -> dict[str, Schema]:
    results: Schema = {
        "type": "object",
        "properties": {"hits": {"type": "array", "items": hit}, "hasMore": {"type": "boolean"}},
        "required": ["hits", "hasMore"],
    }
    return {"200": operations.shared.success(description, {"application/json": results})}


def _hit(row: Schema, method: SearchMethod) -> Schema:
    properties: dict[str, Schema] = {"score": _SCORE, "row": row}
    if method is SearchMethod.FULL_TEXT:
        properties["highlight"] = {"type": ["string", "null"], "description": "With `highlight`: the marked text."}
    if method is SearchMethod.NEAREST:
        properties["distance"] = {"type": "number", "description": "The distance from `near`."}
    return {"type": "object", "properties": properties, "required": ["score", "row"]}


def _first(config: Config) -> Schema:
    return {
        "type": "integer",
        "minimum": 0,
        "maximum": config.search.max_limit,
        "default": config.search.default_limit,
    }


def _body(config: Config, entity: Entity, method: SearchMethod) -> Schema:
    """A method's body: its own members, `first`, and the rows' members as a list's search body takes them."""
    vector: Schema = {"type": "array", "items": _NUMBER, "minItems": 1}
    documents = entity.search.of(method)
    sizes = {d.dimensions for d in entity.search.of(SearchMethod.SEMANTIC)}
    if len(sizes) == 1 and None not in sizes:  # every vector document has the same dimensions
        vector.update(minItems=next(iter(sizes)), maxItems=next(iter(sizes)))
    field: Schema = {
        "type": "string",
        "enum": [d.name.lower() for d in documents],
        "description": "The document searched (default: the first).",
    }
    members: dict[str, Schema] = {
        "query": {"type": "string"},
        "vector": vector,
        "near": {"type": "object", "description": "A GeoJSON geometry (RFC 7946)."},
        "field": field,
        "minSimilarity": {"type": "number", "minimum": 0},
        "minScore": _NUMBER,
        "maxDistance": {"type": "number", "minimum": 0},
        "highlight": _highlight(),
        "lexicalWeight": {"type": "number", "minimum": 0, "default": 1},
        "vectorWeight": {"type": "number", "minimum": 0, "default": 1},
        "rrfK": {"type": "number", "minimum": 0, "default": 60},
    }
    listing = list_members(config)
    properties = {
        **{name: members[name] for name in METHOD_MEMBERS[method]},
        "first": _first(config),
        **{name: listing[name] for name in LISTING_MEMBERS},
    }
    required = list(REQUIRED_MEMBERS[method])
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _highlight() -> Schema:
    count: Schema = {"type": "integer", "minimum": 0}
    return {
        "oneOf": [
            {"type": "boolean"},
            {
                "type": "object",
                "properties": {
                    "startSel": {"type": "string", "default": "<b>"},
                    "stopSel": {"type": "string", "default": "</b>"},
                    "maxWords": count,
                    "minWords": count,
                    "maxFragments": count,
                },
                "additionalProperties": False,
            },
        ],
        "description": "Each hit's text with the query's words between startSel and stopSel, HTML-escaped but for"
        " those.",
    }
