"""The GraphQL front end (layer 7): the schema built from the model, the planner, and request execution."""

from ._endpoint import ExportQuery, GraphqlEndpoint, GraphqlRequest, GraphqlResponse, LiveQuery, Settings
from ._mutation_planner import MutationPlanner
from ._persisted import ManifestError, PersistedQueries, Registry, manifest_problems, read_manifest
from ._query_planner import QueryPlanner
from ._schema_builder import GraphqlSchema, SchemaBuildError, build_graphql_schema
from ._sdl_diff import diff_sdl

__all__ = [
    "ExportQuery",
    "GraphqlEndpoint",
    "GraphqlRequest",
    "GraphqlResponse",
    "GraphqlSchema",
    "LiveQuery",
    "ManifestError",
    "MutationPlanner",
    "PersistedQueries",
    "QueryPlanner",
    "Registry",
    "SchemaBuildError",
    "Settings",
    "build_graphql_schema",
    "diff_sdl",
    "manifest_problems",
    "read_manifest",
]
