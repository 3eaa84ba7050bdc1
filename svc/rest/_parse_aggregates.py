"""`GET|POST /rest/{resource}/aggregate` (SPEC "Aggregate request members"): the members, groups and options of an
aggregate request, from the query string or a JSON body, checked against what the GraphQL schema offers the table
(`svc.plan.member_fields`, `group_values`): anything it does not offer is 400 naming the parameter.

    GET  /rest/payments/aggregate?sum=amount&avg=amount&group=staffId,paymentDate:month&having[count][gt]=100
    POST /rest/payments/aggregate {"filter": {...}, "sets": {"total": {"sum": ["amount"]},
                                                            "monthly": {"group": ["paymentDate:month"]}}}

Members take column lists (a comma-separated string, or a JSON list in a body); `percentile` takes `fraction`;
`group` at most four items: a column, `column:<unit>` (minute, hour, day, week, month, quarter, year) or
`column:binned`; `having` is `having[count][gt]=n` and `having[sum][col][gte]=n` in the URL, the GraphQL
`<Type>HavingInput` shape in a body; `sets` (body only) names sets of their own members, next to nothing but the
request's `filter`, which applies to every set.
"""

import json
import math
from typing import Any

import attrs

from svc.model import Entity, Field
from svc.plan import (
    AggregateMember,
    GroupValue,
    member_fields,
)

from ._api_request import AggregateRequest, AggregateSet
from ._parse_inputs import InputTypes, Written, bad
from ._parse_listing import Listings, body_text, group_item, json_object, split_items, switch
from ._parse_query import Parameter, Parameters

#: REST `group` takes at most this many items (SPEC "Limits": REST `group`).
MAX_GROUP_ITEMS = 4
_OPTIONS = ("fraction", "group", "having", "timeZone", "binWidth", "binOrigin", "fillGaps")
_SET_MEMBERS = ("filter", *(member.value for member in AggregateMember), *_OPTIONS)


class AggregateRequests:
    """Parses aggregate requests against one snapshot's model and GraphQL input types."""

    def __init__(self, listings: Listings, inputs: InputTypes) -> None:
        self.listings = listings
        self.inputs = inputs

    def from_query(self, entity: Entity, parameters: Parameters) -> AggregateRequest:
        if parameters.peek("sets") is not None:
            raise bad("sets is given in a JSON body (POST) only", "sets")
        return _unnamed(self._set(entity, parameters, ""))

    def from_body(self, entity: Entity, body: Any) -> AggregateRequest:
        if not isinstance(body, dict):
            raise bad("the aggregate body must be a JSON object", "body")
        if "sets" not in body:
            return _unnamed(self._set(entity, _parameters(body, ""), ""))
        sets, rest = body["sets"], {k: v for k, v in body.items() if k != "sets"}
        beside = [name for name in rest if name != "filter"]
        if beside:
            raise bad(f"beside sets the body takes only filter; got {beside[0]!r}", beside[0])
        if not isinstance(sets, dict) or not sets:
            raise bad("sets must be an object naming at least one set", "sets")
        common = self._filter(entity, _parameters(rest, "").take("filter"))
        parsed = []
        for name, members in sets.items():
            if not isinstance(members, dict):
                raise bad(f"sets.{name} must be an object of aggregate members", f"sets.{name}")
            parsed.append((name, self._set(entity, _parameters(members, f"sets.{name}."), f"sets.{name}.")))
        return AggregateRequest(sets=tuple(parsed), filter=common, named=True)

    # --- one set -----------------------------------------------------------------------------------------------

    def _set(self, entity: Entity, parameters: Parameters, prefix: str) -> AggregateSet:
        filter_ = self._filter(entity, parameters.take("filter"))
        members: list[tuple[AggregateMember, tuple[Field, ...]]] = []
        for member in AggregateMember:
            text = parameters.take_value(member.value)
            if text is not None:
                members.append((member, self._columns(entity, member, text, prefix + member.value)))
        fraction = self._fraction(parameters.take_value("fraction"), members, prefix + "fraction")
        group = self._group(entity, parameters.take_value("group"), prefix + "group")
        having = self._having(entity, parameters.take("having"), prefix + "having")
        options = {name: parameters.take_value(name) for name in ("timeZone", "binWidth", "binOrigin")}
        fill_gaps = switch(parameters.take_value("fillGaps"), prefix + "fillGaps")
        parameters.finish([prefix + name for name in _SET_MEMBERS])
        if not group:
            given = [name for name, value in options.items() if value is not None]
            given += ["having"] if having is not None else []
            given += ["fillGaps"] if fill_gaps else []
            if given:
                raise bad(f"{given[0]} applies to groups: give group too", prefix + given[0])
        return AggregateSet(
            members=tuple(members),
            fraction=fraction,
            filter=filter_,
            group=group,
            having=having,
            time_zone=options["timeZone"],
            bin_width=options["binWidth"],
            bin_origin=options["binOrigin"],
            fill_gaps=fill_gaps,
            prefix=prefix,
        )

    def _filter(self, entity: Entity, parameter: Parameter | None) -> Any:
        return self.listings.filter(entity, parameter) if parameter is not None else None

    def _columns(self, entity: Entity, member: AggregateMember, text: str, name: str) -> tuple[Field, ...]:
        offered = {field.name: field for field in member_fields(entity, member)}
        columns = split_items(text, name)
        if not columns:
            raise bad(f"{name} takes a list of columns", name)
        fields = []
        for column in columns:
            field = entity.rest_field(column)
            if field is None or field.name not in offered:
                takes = ", ".join(f.rest_name for f in offered.values()) or "no column"
                raise bad(f"{name} is not offered for {column!r} of {entity.type_name} (it takes {takes})", name)
            fields.append(field)
        return tuple(fields)

    def _fraction(
        self, text: str | None, members: list[tuple[AggregateMember, tuple[Field, ...]]], name: str
    ) -> float | None:
        percentile = any(member is AggregateMember.PERCENTILE for member, _ in members)
        if text is None:
            if percentile:
                raise bad("percentile needs fraction (from 0 to 1)", name)
            return None
        if not percentile:
            raise bad("fraction is for percentile", name)
        try:
            fraction = float(text)
        except ValueError:
            fraction = math.nan
        if not 0 <= fraction <= 1:
            raise bad(f"fraction must be a number from 0 to 1; got {text!r}", name)
        return fraction

    def _group(self, entity: Entity, text: str | None, name: str) -> tuple[tuple[str, GroupValue], ...]:
        """`group` items, each under the key the response names it by (`staffId`, `paymentDate:month`)."""
        items = split_items(text, name)
        if len(items) > MAX_GROUP_ITEMS:
            raise bad(f"group takes at most {MAX_GROUP_ITEMS} items; got {len(items)}", name)
        group: list[tuple[str, GroupValue]] = []
        for item in items:
            value = group_item(entity, item, name)
            if value.name in (named for named, _ in group):
                raise bad(f"group names {value.name!r} twice", name)
            group.append((value.name, value))
        return tuple(group)

    def _having(self, entity: Entity, parameter: Parameter | None, name: str) -> Any:
        if parameter is None:
            return None
        if parameter.value is not None:
            value = json_object(parameter.value, parameter.name)
            return self.inputs.coerce(value, entity.names.having, Written(parameter.name, brackets=True))
        return self.inputs.bracket_having(entity, parameter)


def _unnamed(spec: AggregateSet) -> AggregateRequest:
    """A request of one set: its filter is the request's (the rows read)."""
    return AggregateRequest(sets=(("", attrs.evolve(spec, filter=None)),), filter=spec.filter)


def _parameters(body: dict[str, Any], prefix: str) -> Parameters:
    """A body's members as the parameters they stand for (named with `prefix`: `sets.monthly.sum`)."""
    parameters: dict[str, Parameter] = {}
    for name, value in body.items():
        if value is None:
            continue
        text = json.dumps(value) if name in ("filter", "having") else body_text(value, prefix + name)
        parameters[name] = Parameter(prefix + name, text)
    return Parameters(parameters)
