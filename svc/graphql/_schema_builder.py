"""The GraphQL schema of a snapshot: the SDL written from the model, parsed, built and validated by graphql-core, and
each field's model meaning attached to its definition for the planners (`_field_meanings`).

The exported SDL is graphql-core's printing of the parsed document, so it is canonical and keeps the applied
`@constraint` directives (which printing a built schema would drop).
"""

import attrs
from graphql import DocumentNode, GraphQLSchema, build_ast_schema, parse, print_ast, validate_schema

from svc.model import Model

from ._federation import served_definitions, subgraph_sdl
from ._field_meanings import MissingMeaning, attach_meanings
from ._sdl_writer import write_sdl


class SchemaBuildError(Exception):
    """The generated SDL is not a valid schema, or a field of it has no meaning: a bug, reported with the reasons."""


@attrs.frozen
class GraphqlSchema:
    schema: GraphQLSchema
    document: DocumentNode
    sdl: str
    #: The federation v2 subgraph SDL (`_service { sdl }`), with `graphql.federation.enabled`.
    subgraph_sdl: str | None = None


def build_graphql_schema(model: Model, *, subscriptions: bool = False, federation: bool = False) -> GraphqlSchema:
    """The schema of the model; with `subscriptions`, a Subscription type mirroring Query; with `federation`, a
    federation v2 subgraph (its entities' keys, `_entities` and `_service`)."""
    document = parse(write_sdl(model, subscriptions=subscriptions, federation=federation), no_location=True)
    subgraph = None
    if federation:
        # The subgraph SDL is the written document; the served schema adds `_entities`, `_service` and the
        # federation definitions to it.
        subgraph = subgraph_sdl(print_ast(document) + "\n")
        added = parse(served_definitions(model), no_location=True).definitions
        document = DocumentNode(definitions=(*document.definitions, *added))
    schema = build_ast_schema(document)
    errors = validate_schema(schema)
    if errors:
        raise SchemaBuildError("; ".join(error.message for error in errors))
    try:
        attach_meanings(schema, model, federation=federation)
    except MissingMeaning as exc:
        raise SchemaBuildError(str(exc)) from exc
    return GraphqlSchema(schema, document, print_ast(document) + "\n", subgraph)
