"""The GraphQL front end (layer 7): the schema built from the model, the planner, and request execution."""

from ._diff import diff_sdl
from ._execute import GraphqlEndpoint, GraphqlRequest, GraphqlResponse, Settings
from ._mutations import MutationPlanner
from ._planner import QueryPlanner
from ._schema import GraphqlSchema, SchemaBuildError, build_graphql_schema

__all__ = [
    "GraphqlEndpoint",
    "GraphqlRequest",
    "GraphqlResponse",
    "GraphqlSchema",
    "MutationPlanner",
    "QueryPlanner",
    "SchemaBuildError",
    "Settings",
    "build_graphql_schema",
    "diff_sdl",
]
