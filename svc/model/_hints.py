"""Comment hints (SPEC "Configuration sections that adjust the generated APIs"): `@name <GraphQLName>` and
`@deprecated [reason]` lines in a SQL comment; the other lines are the description. Configuration wins over hints.
"""

import attrs

from ._entities import Deprecation

DEFAULT_DEPRECATION = "No longer supported"


@attrs.frozen
class Hints:
    description: str | None = None
    name: str | None = None
    deprecation: Deprecation | None = None


def read_hints(comment: str | None) -> Hints:
    """Split a comment into its description and its hints; unknown `@words` stay in the description."""
    if not comment:
        return Hints()
    name: str | None = None
    deprecation: Deprecation | None = None
    kept: list[str] = []
    for line in comment.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "@name" and rest.strip():
            name = rest.strip()
        elif word == "@deprecated":
            deprecation = Deprecation(rest.strip() or DEFAULT_DEPRECATION)
        else:
            kept.append(line)
    description = "\n".join(kept).strip() or None
    return Hints(description, name, deprecation)
