"""The GraphQL schema of a snapshot: the SDL written from the model, parsed, built and validated by graphql-core.

The exported SDL is graphql-core's printing of the parsed document, so it is canonical and keeps the applied
`@constraint` directives (which printing a built schema would drop).
"""

import attrs
from graphql import DocumentNode, GraphQLSchema, build_ast_schema, parse, print_ast, validate_schema

from svc.model import Model

from ._sdl import write_sdl


class SchemaBuildError(Exception):
    """The generated SDL is not a valid schema: a bug, reported with graphql-core's reasons."""


@attrs.frozen
class GraphqlSchema:
    schema: GraphQLSchema
    document: DocumentNode
    sdl: str


def build_graphql_schema(model: Model) -> GraphqlSchema:
    document = parse(write_sdl(model), no_location=True)
    schema = build_ast_schema(document)
    errors = validate_schema(schema)
    if errors:
        raise SchemaBuildError("; ".join(error.message for error in errors))
    return GraphqlSchema(schema, document, print_ast(document) + "\n")
