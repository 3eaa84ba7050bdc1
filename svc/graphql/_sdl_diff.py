"""Differences between two SDL texts, item by item (SPEC "Versioning": pinning with `export.pin`).

Items are types (`type Film`, with the interfaces they implement and their directives, such as a subgraph's
`@key`), fields and input fields with their arguments (`Film.title: String!`), enum values (`MpaaRating.PG_13`),
directive definitions, and the schema's own directives (a subgraph's `@link`). An item only in the new text is `+`,
only in the old one `-`, in both but different `~`. Formatting, descriptions and order do not count.
"""

from graphql import (
    DirectiveDefinitionNode,
    DocumentNode,
    EnumTypeDefinitionNode,
    EnumValueDefinitionNode,
    FieldDefinitionNode,
    InputObjectTypeDefinitionNode,
    InputValueDefinitionNode,
    InterfaceTypeDefinitionNode,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    SchemaExtensionNode,
    TypeDefinitionNode,
    UnionTypeDefinitionNode,
    parse,
    print_ast,
)

_KINDS: dict[type[TypeDefinitionNode], str] = {
    ObjectTypeDefinitionNode: "type",
    InterfaceTypeDefinitionNode: "interface",
    InputObjectTypeDefinitionNode: "input",
    EnumTypeDefinitionNode: "enum",
    ScalarTypeDefinitionNode: "scalar",
    UnionTypeDefinitionNode: "union",
}


def sdl_items(document: DocumentNode) -> dict[str, str]:
    """Each item of the document, keyed by its path, with what is compared about it."""
    items: dict[str, str] = {}
    for definition in document.definitions:
        if isinstance(definition, DirectiveDefinitionNode):
            args = ", ".join(print_ast(a) for a in definition.arguments or ())
            locations = " | ".join(location.value for location in definition.locations)
            items[f"@{definition.name.value}"] = f"({args}) on {locations}"
            continue
        if isinstance(definition, SchemaExtensionNode):
            items["schema"] = items.get("schema", "") + _directives(definition)
            continue
        if not isinstance(definition, TypeDefinitionNode):
            continue
        kind = _KINDS[type(definition)]
        name = definition.name.value
        interfaces = getattr(definition, "interfaces", None) or ()
        items[name] = kind + "".join(f" & {i.name.value}" for i in interfaces) + _directives(definition)
        for field in getattr(definition, "fields", None) or ():
            args = ", ".join(_argument(a) for a in getattr(field, "arguments", None) or ())
            default = getattr(field, "default_value", None)
            items[f"{name}.{field.name.value}"] = (
                (f"({args}): " if args else ": ")
                + print_ast(field.type)
                + (f" = {print_ast(default)}" if default else "")
                + _directives(field)
            )
        for value in getattr(definition, "values", None) or ():
            items[f"{name}.{value.name.value}"] = _directives(value)
    return items


def _argument(argument: InputValueDefinitionNode) -> str:
    default = f" = {print_ast(argument.default_value)}" if argument.default_value else ""
    return f"{argument.name.value}: {print_ast(argument.type)}{default}"


def _directives(
    node: FieldDefinitionNode
    | InputValueDefinitionNode
    | EnumValueDefinitionNode
    | TypeDefinitionNode
    | SchemaExtensionNode,
) -> str:
    return "".join(f" {print_ast(d)}" for d in node.directives or ())


def diff_sdl(old: str, new: str) -> list[str]:
    """`+ item`, `- item`, `~ item` lines, sorted by item; empty when the two describe the same schema."""
    before, after = sdl_items(parse(old, no_location=True)), sdl_items(parse(new, no_location=True))
    lines = [f"+ {key}" for key in after.keys() - before.keys()]
    lines += [f"- {key}" for key in before.keys() - after.keys()]
    lines += [f"~ {key}" for key in before.keys() & after.keys() if before[key] != after[key]]
    return sorted(lines, key=lambda line: (line[2:], line[0]))
