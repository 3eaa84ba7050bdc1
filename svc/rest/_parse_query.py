"""URL parameters as trees (SPEC "REST API" -> list query parameters): `filter[or][0][age][lt]=18` is the parameter
`filter` with the member path `or`, `0`, `age`, `lt` and the value `18`.

Strict: the query string must be UTF-8; a name must be a word followed by bracketed members (`a[b][c]`); the same
name given twice is refused. Which parameters a route accepts is the planner's business (`Parameters.take`): what it
leaves untaken is an unknown parameter, 400 naming it.
"""

import re
from collections.abc import Iterable, Iterator
from urllib.parse import parse_qsl

import attrs

from svc.errors import Code, SvcError

_NAME = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_MEMBER = re.compile(r"\[([^\[\]]*)\]")


@attrs.define
class Parameter:
    """One parameter and its members: `value` is what `name=` gave (None when only members were given)."""

    name: str  # as written: `filter[title]`
    value: str | None = None
    members: dict[str, "Parameter"] = attrs.field(factory=dict)

    def leaves(self) -> Iterator["Parameter"]:
        """Every parameter with a value, at any depth (this one first)."""
        if self.value is not None:
            yield self
        for member in self.members.values():
            yield from member.leaves()


class Parameters:
    """The parameters of one request, taken one by one by the planner; `finish` refuses what is left."""

    def __init__(self, parameters: dict[str, Parameter]) -> None:
        self._parameters = parameters

    @classmethod
    def parse(cls, query_string: bytes) -> "Parameters":
        try:
            text = query_string.decode("utf-8")
        except UnicodeDecodeError:
            raise SvcError(Code.BAD_USER_INPUT, "the query string is not UTF-8") from None
        try:
            pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict")
        except UnicodeDecodeError:
            raise SvcError(Code.BAD_USER_INPUT, "a percent-encoded query parameter is not UTF-8") from None
        parameters: dict[str, Parameter] = {}
        for name, value in pairs:
            match = _NAME.match(name)
            if match is None:
                raise SvcError(Code.BAD_USER_INPUT, f"malformed parameter name {name!r}", extensions={"field": name})
            base, members = match.group(1), _MEMBER.findall(match.group(2))
            parameter = parameters.setdefault(base, Parameter(base))
            for member in members:
                parameter = parameter.members.setdefault(member, Parameter(f"{parameter.name}[{member}]"))
            if parameter.value is not None:
                raise SvcError(Code.BAD_USER_INPUT, f"the parameter {name} is given twice", extensions={"field": name})
            parameter.value = value
        return cls(parameters)

    def peek(self, name: str) -> Parameter | None:
        """The parameter `name`, left in place (a reader that takes only some of its members)."""
        return self._parameters.get(name)

    def take(self, name: str) -> Parameter | None:
        """The parameter `name` (with its members), no longer left for `finish`."""
        return self._parameters.pop(name, None)

    def take_value(self, name: str) -> str | None:
        """A plain parameter's value (`first=10`); its members (`first[posts]=5`) stay for `take_members`."""
        parameter = self._parameters.get(name)
        if parameter is None or parameter.value is None:
            return None
        value, parameter.value = parameter.value, None
        if not parameter.members:
            del self._parameters[name]
        return value

    def take_members(self, name: str) -> dict[str, Parameter]:
        """The members of a parameter (`first[posts]`, `first[posts.comments]`), by member name."""
        parameter = self._parameters.get(name)
        if parameter is None:
            return {}
        members, parameter.members = parameter.members, {}
        if parameter.value is None:
            del self._parameters[name]
        return members

    def finish(self, allowed: Iterable[str] = ()) -> None:
        """Refuse any parameter left untaken (SPEC "Strictness": an unknown parameter is 400)."""
        for parameter in self._parameters.values():
            for leaf in parameter.leaves():
                known = ", ".join(allowed)
                raise SvcError(
                    Code.BAD_USER_INPUT,
                    f"unknown or misplaced parameter {leaf.name}" + (f" (this route takes {known})" if known else ""),
                    extensions={"field": leaf.name},
                )
