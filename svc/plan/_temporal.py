"""Reads of temporal-key tables (PostgreSQL 18 `PRIMARY KEY (id, valid_at WITHOUT OVERLAPS)`) as of an instant, and
a row's history (SPEC "List query parameters": `asOf`, `asOf[<relation>]`; "Embedding controls": `history`).

An instant is ISO 8601 text (a timestamp, or a date), bound as a parameter cast to the period's element type; the
versions kept are those whose period contains it. Where a read needs one version and no instant is given (a lookup
by the key without its period, a to-one relation across a period foreign key), the instant is `now`, which
PostgreSQL reads as the transaction's start in every date and time type.
"""

import datetime
from collections.abc import Sequence
from typing import Any

from svc.model import Entity, Relation, TemporalKey

from ._ir import ColumnRef, Compare, Filter, Link, Operator, OrderItem, Param
from ._values import Params, bad_input

#: The instant of a read that needs one version and was given none.
NOW = "now"


def temporal_key(entity: Entity, path: Sequence[str | int]) -> TemporalKey:
    """The entity's temporal key; BAD_USER_INPUT naming `path` (the `asOf` given) when it has none."""
    if entity.temporal is None:
        raise bad_input(f"{entity.table} has no temporal key: asOf cannot be used", path)
    return entity.temporal


def instant(value: Any, path: Sequence[str | int] = ()) -> str:
    """A client's instant, checked: an ISO 8601 timestamp (with or without a time zone) or date."""
    if not isinstance(value, str) or "\x00" in value:
        raise bad_input(f"asOf must be an ISO 8601 timestamp; got {value!r}", path)
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise bad_input(f"asOf must be an ISO 8601 timestamp; got {value!r}", path) from None
    return value


def valid_at(key: TemporalKey, at: Param) -> Filter:
    """The versions whose period contains the instant `at` (a parameter cast to the period's element type)."""
    return Compare(ColumnRef(key.period), Operator.CONTAINS_ELEMENT, at)


def bind_instant(params: Params, key: TemporalKey, value: str) -> Param:
    return params.add(value, key.instant_type)


def one_version(relation: Relation, target: Entity) -> bool:
    """A to-one relation across a period foreign key to a temporal table: it reaches one version of the row."""
    return relation.period is not None and target.temporal is not None


def history_link(key: TemporalKey) -> Link:
    """A row's versions: the rows sharing its key columns other than the period."""
    return Link(tuple((column, column) for column in key.columns))


def history_order(key: TemporalKey) -> tuple[OrderItem, ...]:
    """Versions in time order: periods of one thing do not overlap, so range order is the order of their starts."""
    return (OrderItem(ColumnRef(key.period), nullable=False),)
