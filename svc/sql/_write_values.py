"""What fills a compiled write's parameters: values read off a write tree of the compiled shape (layer 5).

A write tree leaves its values out of its equality (`svc.plan` write plans), so one compiled write serves every tree
of its shape; each parameter names the nodes it reads (`Address`: the attributes and positions that lead to them
from the root) and how they become one parameter (a row's values as a JSON object, rows or keys as a JSON array of
objects each with its position `__n`, a version as text, a filter's value as it is).
"""

import enum
from typing import Any

import attrs

from svc.plan import BulkWrite, DeleteWrite, KeyLookup, RowWrite, encode_json

#: A node of a write tree, by the attributes and positions that lead to it from the root.
Address = tuple[str | int, ...]
WriteTree = RowWrite | tuple[RowWrite, ...] | BulkWrite | DeleteWrite


def resolve(write: object, address: Address) -> Any:
    """The node of a write tree at `address`."""
    node: Any = write
    for step in address:
        node = node[step] if isinstance(step, int) else getattr(node, step)
    return node


class Value(enum.Enum):
    ROW = "row"  # one row's values: a JSON object
    ROWS = "rows"  # rows' values: a JSON array of objects, each with its position `__n`
    KEYS = "keys"  # keys (KeyLookup): a JSON array of objects, each with its position `__n`
    TEXT = "text"  # a value as text (an expected version)
    PLAIN = "plain"  # a value as it is (a filter's, a limit)


@attrs.frozen
class Source:
    """How one parameter is read off a tree: the nodes `at` (with their positions for ROWS and KEYS), less the
    columns in `omit` (foreign keys the row takes from another CTE)."""

    kind: Value
    at: tuple[Address, ...]
    positions: tuple[int, ...] = ()
    omit: tuple[str, ...] = ()

    def value(self, write: WriteTree) -> Any:
        kind = self.kind
        if kind is Value.ROW:
            return encode_json(_row(resolve(write, self.at[0]), self.omit))
        if kind is Value.ROWS:
            return encode_json(
                [
                    {**_row(resolve(write, at), self.omit), "__n": n}
                    for at, n in zip(self.at, self.positions, strict=True)
                ]
            )
        if kind is Value.KEYS:
            return encode_json(
                [{**_key(resolve(write, at)), "__n": n} for at, n in zip(self.at, self.positions, strict=True)]
            )
        if kind is Value.TEXT:
            return str(resolve(write, self.at[0]))
        return resolve(write, self.at[0])


def _row(write: RowWrite | BulkWrite, omit: tuple[str, ...]) -> dict[str, Any]:
    """A row's values (a bulk update's: the values it sets)."""
    assert write.values is not None
    return {column: value for column, value in write.values.values if column not in omit}


def _key(lookup: KeyLookup) -> dict[str, Any]:
    return dict(lookup.values)
