"""The GraphQL front end (layer 7): the schema built from the model, and (with the reads issue) the planner."""

from ._diff import diff_sdl
from ._schema import GraphqlSchema, SchemaBuildError, build_graphql_schema

__all__ = ["GraphqlSchema", "SchemaBuildError", "build_graphql_schema", "diff_sdl"]
