"""Differences between two OpenAPI documents, as JSON Pointers (SPEC "Versioning": pinning "prints added (+), gone
(-) and changed (~) items (JSON pointers for OpenAPI) ... the OpenAPI comparison ignores formatting and key order").

The documents are compared as parsed values, so indentation, JSON or YAML and the order of object keys do not count;
the order of list items does. A member only in the new document is `+ <pointer>`, only in the old one `- <pointer>`
(reported where it starts: a whole new path or schema is one item), a value that differs `~ <pointer>` (reported at
the leaf, or at a list whose length changed). Pointers follow RFC 6901: `~` is written `~0` and `/` is written `~1`
(`/paths/~1rest~1films/get`).
"""

from collections.abc import Iterator
from typing import Any


def diff_openapi(old: Any, new: Any) -> list[str]:
    """`+ pointer`, `- pointer` and `~ pointer` lines, sorted by pointer; empty when the documents are the same."""
    lines = list(_differences(old, new, ""))
    return sorted(lines, key=lambda line: (line[2:], line[0]))


def pointer_token(key: object) -> str:
    """One reference token of a JSON Pointer (RFC 6901, section 3)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def _differences(old: Any, new: Any, pointer: str) -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        # Keys as text: a YAML file may write `200:` where JSON has "200".
        before = {str(key): value for key, value in old.items()}
        after = {str(key): value for key, value in new.items()}
        for key in after.keys() - before.keys():
            yield f"+ {pointer}/{pointer_token(key)}"
        for key in before.keys() - after.keys():
            yield f"- {pointer}/{pointer_token(key)}"
        for key in before.keys() & after.keys():
            yield from _differences(before[key], after[key], f"{pointer}/{pointer_token(key)}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for position, (item_before, item_after) in enumerate(zip(old, new, strict=True)):
            yield from _differences(item_before, item_after, f"{pointer}/{position}")
    elif not _same(old, new):
        yield f"~ {pointer}"


def _same(old: Any, new: Any) -> bool:
    """Equal JSON values: a boolean is not a number, 1 and 1.0 are the same number."""
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(old, int | float) and isinstance(new, int | float):
        return old == new
    return type(old) is type(new) and old == new
