"""Values a plan binds without looking at them (layer 4): what lets one plan serve every request of the same
document, operation and variable shape (ARCHITECTURE "Shape-keyed SQL").

A planning run may be given watched stand-ins for a request's scalar values (`Watch.stand_in`): each is an instance
of a subclass of the value's own type (str, int, float) that behaves exactly as the value does and records any
method the planner calls on it (comparing, hashing, measuring, formatting, converting). A value is bound when it
reaches `Params.bind`, which converts the plain value with a pure function and keeps that function. After the run,
a value bound and never looked at is a parameter of the plan alone: another request whose variables have the same
shape and the same values everywhere else gets the same plan with its own values converted by the kept functions.
Any other value, looked at or not reached through `bind`, is part of the plan's key (its value decides).
"""

from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs

#: Methods of a watched value that do not read it (object protocol, pickling, construction).
_UNWATCHED = frozenset(
    {
        "__class__",
        "__delattr__",
        "__dir__",
        "__getattribute__",
        "__getnewargs__",
        "__getstate__",
        "__init__",
        "__init_subclass__",
        "__new__",
        "__reduce__",
        "__reduce_ex__",
        "__setattr__",
        "__sizeof__",
        "__subclasshook__",
        # Alternative constructors of the base type (class-level, never called on a value).
        "from_bytes",
        "fromhex",
        "maketrans",
    }
)


def _watching(base: type) -> type:
    """A subclass of `base` whose every value-reading method records, on the instance's watch, that it was read."""

    def watched(name: str) -> Callable[..., Any]:
        original = getattr(base, name)

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            watch, index = object.__getattribute__(self, "_svc_watch")
            watch.looked.add(index)
            return original(self, *args, **kwargs)

        method.__name__ = name
        return method

    names = [name for name in dir(base) if name not in _UNWATCHED and callable(getattr(base, name))]
    return type(f"Watched{base.__name__.capitalize()}", (base,), {name: watched(name) for name in names})


_WATCHED: dict[type, type] = {base: _watching(base) for base in (str, int, float)}
_WATCHED_TYPES = tuple(_WATCHED.values())


@attrs.define
class Watch:
    """One planning run's watched values: their plain values in the order given, and which the run looked at."""

    plain: list[Any] = attrs.field(factory=list[Any])
    looked: set[int] = attrs.field(factory=set[int])

    def stand_in(self, value: str | int | float) -> Any:
        """A watched stand-in for `value` (a str, int or float, not a bool), numbered in the order given."""
        index = len(self.plain)
        self.plain.append(value)
        watched = _WATCHED[type(value)](value)
        watched._svc_watch = (self, index)
        return watched


def watched_index(value: object) -> int | None:
    """The number of a watched stand-in in its watch; None for any other value."""
    if isinstance(value, _WATCHED_TYPES):
        return object.__getattribute__(value, "_svc_watch")[1]
    return None


def plain(value: Any) -> Any:
    """`value` with its watched stand-ins (itself, or in its lists, tuples and mappings) replaced by their plain
    values."""
    if isinstance(value, _WATCHED_TYPES):
        watch, index = object.__getattribute__(value, "_svc_watch")
        return watch.plain[index]
    if not watched_sources(value):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in cast("dict[Any, Any]", value).items()}
    return type(value)(plain(item) for item in value)


def watched_sources(value: object) -> list[int]:
    """The numbers of the watched stand-ins in `value` (itself, or in its lists, tuples and mappings)."""
    if isinstance(value, _WATCHED_TYPES):
        return [object.__getattribute__(value, "_svc_watch")[1]]
    if isinstance(value, list | tuple):
        return [i for item in cast("Sequence[Any]", value) for i in watched_sources(item)]
    if isinstance(value, dict):
        return [i for item in cast("dict[Any, Any]", value).values() for i in watched_sources(item)]
    return []
