"""The operator inputs of `<Type>Filter` fields, per value type (SPEC "Filter and condition inputs").

Every filter has `isNull`, `equalTo`, `notEqualTo`, `distinctFrom`, `notDistinctFrom`, `in`, `notIn`; ordered types
add the comparisons and their any/all forms; strings add the pattern operators; JSON adds containment, keys and
paths; lists compare as arrays and element-wise; ranges add the range operators. Each operator names what it means
in the plan (`plan.Operator`), so the SDL lists and the planner reads the same table.
"""

import enum

import attrs

from svc.model import Scalar, ValueKind, ValueType

from ._ir import Operator as Op


class Operand(enum.Enum):
    """What an operator takes, relative to the filtered value's type T."""

    BOOLEAN = "Boolean"  # isNull
    VALUE = "T"
    VALUES = "[T!]"
    STRING = "String"  # patterns, JSON keys and paths
    STRINGS = "[String!]"
    ITEM = "I"  # lists: an element; ranges: a bound value
    ITEMS = "[I!]"  # list operators over an array value
    GEOMETRY = "GeoJSON"  # a GeoJSON geometry object
    DISTANCE = "GeometryDistanceInput"  # {near: <GeoJSON>, distance: Float}


@attrs.frozen
class FilterOperator:
    name: str
    operand: Operand
    description: str
    #: What it means in the plan (None for `isNull`, which is a test of its own).
    plan: Op | None = None
    #: The LIKE pattern a text operand becomes (`%{}%` for `includes`), the operand escaped.
    pattern: str | None = None


_MEANINGS: dict[str, tuple[Op, str | None]] = {
    "equalTo": (Op.EQ, None), "notEqualTo": (Op.NEQ, None), "distinctFrom": (Op.DISTINCT, None),
    "notDistinctFrom": (Op.NOT_DISTINCT, None), "in": (Op.IN, None), "notIn": (Op.NOT_IN, None),
    "lessThan": (Op.LT, None), "lessThanOrEqualTo": (Op.LTE, None), "greaterThan": (Op.GT, None),
    "greaterThanOrEqualTo": (Op.GTE, None), "lessThanAny": (Op.LT_ANY, None), "lessThanAll": (Op.LT_ALL, None),
    "lessThanOrEqualToAny": (Op.LTE_ANY, None), "lessThanOrEqualToAll": (Op.LTE_ALL, None),
    "greaterThanAny": (Op.GT_ANY, None), "greaterThanAll": (Op.GT_ALL, None),
    "greaterThanOrEqualToAny": (Op.GTE_ANY, None), "greaterThanOrEqualToAll": (Op.GTE_ALL, None),
    "includes": (Op.LIKE, "%{}%"), "notIncludes": (Op.NOT_LIKE, "%{}%"),
    "includesInsensitive": (Op.ILIKE, "%{}%"), "notIncludesInsensitive": (Op.NOT_ILIKE, "%{}%"),
    "startsWith": (Op.LIKE, "{}%"), "notStartsWith": (Op.NOT_LIKE, "{}%"),
    "startsWithInsensitive": (Op.ILIKE, "{}%"), "notStartsWithInsensitive": (Op.NOT_ILIKE, "{}%"),
    "endsWith": (Op.LIKE, "%{}"), "notEndsWith": (Op.NOT_LIKE, "%{}"),
    "endsWithInsensitive": (Op.ILIKE, "%{}"), "notEndsWithInsensitive": (Op.NOT_ILIKE, "%{}"),
    "like": (Op.LIKE, None), "notLike": (Op.NOT_LIKE, None), "likeInsensitive": (Op.ILIKE, None),
    "notLikeInsensitive": (Op.NOT_ILIKE, None), "likeAny": (Op.LIKE_ANY, None), "likeAll": (Op.LIKE_ALL, None),
    "likeInsensitiveAny": (Op.ILIKE_ANY, None), "likeInsensitiveAll": (Op.ILIKE_ALL, None),
    "regex": (Op.REGEX, None), "notRegex": (Op.NOT_REGEX, None), "regexInsensitive": (Op.IREGEX, None),
    "notRegexInsensitive": (Op.NOT_IREGEX, None), "equalToInsensitive": (Op.EQ_INSENSITIVE, None),
    "notEqualToInsensitive": (Op.NEQ_INSENSITIVE, None), "inInsensitive": (Op.IN_INSENSITIVE, None),
    "notInInsensitive": (Op.NOT_IN_INSENSITIVE, None),
    "contains": (Op.CONTAINS, None), "containedBy": (Op.CONTAINED_BY, None), "hasKey": (Op.HAS_KEY, None),
    "hasAnyKeys": (Op.HAS_ANY_KEYS, None), "hasAllKeys": (Op.HAS_ALL_KEYS, None),
    "matchesPath": (Op.MATCHES_PATH, None), "existsPath": (Op.EXISTS_PATH, None), "overlaps": (Op.OVERLAPS, None),
    "anyEqualTo": (Op.ANY_EQ, None), "anyNotEqualTo": (Op.ANY_NEQ, None), "anyLessThan": (Op.ANY_LT, None),
    "anyLessThanOrEqualTo": (Op.ANY_LTE, None), "anyGreaterThan": (Op.ANY_GT, None),
    "anyGreaterThanOrEqualTo": (Op.ANY_GTE, None), "containsElement": (Op.CONTAINS_ELEMENT, None),
    "strictlyLeftOf": (Op.STRICTLY_LEFT, None), "strictlyRightOf": (Op.STRICTLY_RIGHT, None),
    "notExtendsLeftOf": (Op.NOT_EXTENDS_LEFT, None), "notExtendsRightOf": (Op.NOT_EXTENDS_RIGHT, None),
    "adjacentTo": (Op.ADJACENT, None),
}  # fmt: skip


def _ops(*items: tuple[str, Operand, str]) -> tuple[FilterOperator, ...]:
    operators: list[FilterOperator] = []
    for name, operand, description in items:
        meaning, pattern = _MEANINGS.get(name, (None, None))
        operators.append(FilterOperator(name, operand, description, meaning, pattern))
    return tuple(operators)


COMMON = _ops(
    ("isNull", Operand.BOOLEAN, "Is null (true) or is not null (false)."),
    ("equalTo", Operand.VALUE, "Equal to the value."),
    ("notEqualTo", Operand.VALUE, "Not equal to the value."),
    ("distinctFrom", Operand.VALUE, "Not equal to the value, treating null like an ordinary value."),
    ("notDistinctFrom", Operand.VALUE, "Equal to the value, treating null like an ordinary value."),
    ("in", Operand.VALUES, "Equal to one of the values."),
    ("notIn", Operand.VALUES, "Equal to none of the values."),
)
ORDERED = _ops(
    ("lessThan", Operand.VALUE, "Less than the value."),
    ("lessThanOrEqualTo", Operand.VALUE, "Less than or equal to the value."),
    ("greaterThan", Operand.VALUE, "Greater than the value."),
    ("greaterThanOrEqualTo", Operand.VALUE, "Greater than or equal to the value."),
    ("lessThanAny", Operand.VALUES, "Less than any of the values."),
    ("lessThanAll", Operand.VALUES, "Less than all of the values."),
    ("lessThanOrEqualToAny", Operand.VALUES, "Less than or equal to any of the values."),
    ("lessThanOrEqualToAll", Operand.VALUES, "Less than or equal to all of the values."),
    ("greaterThanAny", Operand.VALUES, "Greater than any of the values."),
    ("greaterThanAll", Operand.VALUES, "Greater than all of the values."),
    ("greaterThanOrEqualToAny", Operand.VALUES, "Greater than or equal to any of the values."),
    ("greaterThanOrEqualToAll", Operand.VALUES, "Greater than or equal to all of the values."),
)
STRING = _ops(
    ("includes", Operand.STRING, "Contains the text."),
    ("notIncludes", Operand.STRING, "Does not contain the text."),
    ("includesInsensitive", Operand.STRING, "Contains the text, ignoring case."),
    ("notIncludesInsensitive", Operand.STRING, "Does not contain the text, ignoring case."),
    ("startsWith", Operand.STRING, "Starts with the text."),
    ("notStartsWith", Operand.STRING, "Does not start with the text."),
    ("startsWithInsensitive", Operand.STRING, "Starts with the text, ignoring case."),
    ("notStartsWithInsensitive", Operand.STRING, "Does not start with the text, ignoring case."),
    ("endsWith", Operand.STRING, "Ends with the text."),
    ("notEndsWith", Operand.STRING, "Does not end with the text."),
    ("endsWithInsensitive", Operand.STRING, "Ends with the text, ignoring case."),
    ("notEndsWithInsensitive", Operand.STRING, "Does not end with the text, ignoring case."),
    ("like", Operand.STRING, "Matches the LIKE pattern (`%` any text, `_` one character, `\\` escapes)."),
    ("notLike", Operand.STRING, "Does not match the LIKE pattern."),
    ("likeInsensitive", Operand.STRING, "Matches the LIKE pattern, ignoring case (ILIKE)."),
    ("notLikeInsensitive", Operand.STRING, "Does not match the LIKE pattern, ignoring case."),
    ("likeAny", Operand.STRINGS, "Matches any of the LIKE patterns."),
    ("likeAll", Operand.STRINGS, "Matches all of the LIKE patterns."),
    ("likeInsensitiveAny", Operand.STRINGS, "Matches any of the LIKE patterns, ignoring case."),
    ("likeInsensitiveAll", Operand.STRINGS, "Matches all of the LIKE patterns, ignoring case."),
    ("regex", Operand.STRING, "Matches the POSIX regular expression."),
    ("notRegex", Operand.STRING, "Does not match the POSIX regular expression."),
    ("regexInsensitive", Operand.STRING, "Matches the POSIX regular expression, ignoring case."),
    ("notRegexInsensitive", Operand.STRING, "Does not match the POSIX regular expression, ignoring case."),
    ("equalToInsensitive", Operand.VALUE, "Equal to the value, ignoring case."),
    ("notEqualToInsensitive", Operand.VALUE, "Not equal to the value, ignoring case."),
    ("inInsensitive", Operand.VALUES, "Equal to one of the values, ignoring case."),
    ("notInInsensitive", Operand.VALUES, "Equal to none of the values, ignoring case."),
)
JSON = _ops(
    ("contains", Operand.VALUE, "Contains the JSON value (@>)."),
    ("containedBy", Operand.VALUE, "Is contained in the JSON value (<@)."),
    ("hasKey", Operand.STRING, "Has the top-level key."),
    ("hasAnyKeys", Operand.STRINGS, "Has any of the top-level keys."),
    ("hasAllKeys", Operand.STRINGS, "Has all of the top-level keys."),
    ("matchesPath", Operand.STRING, "The JSON path predicate is true (@@)."),
    ("existsPath", Operand.STRING, "The JSON path selects an item (@?)."),
)
LIST = _ops(
    ("isNull", Operand.BOOLEAN, "Is null (true) or is not null (false)."),
    ("equalTo", Operand.ITEMS, "Equal to the list."),
    ("notEqualTo", Operand.ITEMS, "Not equal to the list."),
    ("distinctFrom", Operand.ITEMS, "Not equal to the list, treating null like an ordinary value."),
    ("notDistinctFrom", Operand.ITEMS, "Equal to the list, treating null like an ordinary value."),
    ("contains", Operand.ITEMS, "Contains every element of the list."),
    ("containedBy", Operand.ITEMS, "Every element is in the list."),
    ("overlaps", Operand.ITEMS, "Has an element in common with the list."),
    ("anyEqualTo", Operand.ITEM, "Some element equals the value."),
    ("anyNotEqualTo", Operand.ITEM, "Some element differs from the value."),
    ("anyLessThan", Operand.ITEM, "Some element is less than the value."),
    ("anyLessThanOrEqualTo", Operand.ITEM, "Some element is less than or equal to the value."),
    ("anyGreaterThan", Operand.ITEM, "Some element is greater than the value."),
    ("anyGreaterThanOrEqualTo", Operand.ITEM, "Some element is greater than or equal to the value."),
)
RANGE = _ops(
    ("contains", Operand.VALUE, "Contains the range."),
    ("containsElement", Operand.ITEM, "Contains the value."),
    ("containedBy", Operand.VALUE, "Is contained in the range."),
    ("overlaps", Operand.VALUE, "Overlaps the range."),
    ("strictlyLeftOf", Operand.VALUE, "Lies entirely before the range."),
    ("strictlyRightOf", Operand.VALUE, "Lies entirely after the range."),
    ("notExtendsLeftOf", Operand.VALUE, "Does not extend before the range."),
    ("notExtendsRightOf", Operand.VALUE, "Does not extend after the range."),
    ("adjacentTo", Operand.VALUE, "Is adjacent to the range."),
)

_IS_NULL = COMMON[:1]
#: ltree paths (SPEC "Filter and condition inputs"): equality, order, and the hierarchy.
LTREE = (
    *COMMON,
    *ORDERED[:4],
    FilterOperator("ancestorOf", Operand.VALUE, "Is an ancestor of the path (or the path itself).", Op.CONTAINS),
    FilterOperator("descendantOf", Operand.VALUE, "Is a descendant of the path (or the path itself).", Op.CONTAINED_BY),
    FilterOperator("matches", Operand.STRING, "Matches the lquery pattern (`Top.*.Astronomy`).", Op.LQUERY),
    FilterOperator("matchesText", Operand.STRING, "Matches the ltxtquery (`Astronomy & !Stars`).", Op.LTXTQUERY),
)
#: A tsvector document.
FULL_TEXT = (
    *_IS_NULL,
    FilterOperator("matches", Operand.STRING, "Matches the web-search style text query.", Op.TEXT_SEARCH),
)
GEOMETRY = (
    *_IS_NULL,
    FilterOperator("intersects", Operand.GEOMETRY, "Shares a point with the GeoJSON geometry.", Op.INTERSECTS),
    FilterOperator("contains", Operand.GEOMETRY, "Contains the GeoJSON geometry.", Op.SPATIAL_CONTAINS),
    FilterOperator("within", Operand.GEOMETRY, "Lies within the GeoJSON geometry.", Op.WITHIN),
    FilterOperator(
        "distanceWithin", Operand.DISTANCE, "Lies within `distance` (the column's units) of `near`.", Op.DISTANCE_WITHIN
    ),
)
GEOGRAPHY = (
    *_IS_NULL,
    FilterOperator(
        "intersects", Operand.GEOMETRY, "Shares a point with the GeoJSON geometry.", Op.GEOGRAPHY_INTERSECTS
    ),
    FilterOperator("contains", Operand.GEOMETRY, "Covers the GeoJSON geometry.", Op.GEOGRAPHY_COVERS),
    FilterOperator("within", Operand.GEOMETRY, "Is covered by the GeoJSON geometry.", Op.GEOGRAPHY_COVERED_BY),
    FilterOperator(
        "distanceWithin", Operand.DISTANCE, "Lies within `distance` metres of `near`.", Op.GEOGRAPHY_DISTANCE_WITHIN
    ),
)
#: A multirange against a range or a bound value.
MULTIRANGE = (*_IS_NULL, *RANGE)


class Special(enum.Enum):
    """Types with filter operators of their own, by their database type (their API values are strings or lists)."""

    LTREE = "Ltree"
    FULL_TEXT = "FullText"
    GEOMETRY = "Geometry"
    GEOGRAPHY = "Geography"
    MULTIRANGE = "Multirange"


_SPECIAL_OPERATORS = {
    Special.LTREE: LTREE,
    Special.FULL_TEXT: FULL_TEXT,
    Special.GEOMETRY: GEOMETRY,
    Special.GEOGRAPHY: GEOGRAPHY,
    Special.MULTIRANGE: MULTIRANGE,
}
_SPECIAL_TYPES = {"ltree": Special.LTREE, "tsvector": Special.FULL_TEXT, "geometry": Special.GEOMETRY,
                  "geography": Special.GEOGRAPHY}  # fmt: skip


def special_of(type_: ValueType) -> Special | None:
    """The special filter of a value type: ltree, tsvector, PostGIS types (strings in the API) and multiranges."""
    if type_.kind is ValueKind.LIST:
        item = type_.item
        multirange = item is not None and item.kind is ValueKind.RANGE and not type_.sql_type.endswith("]")
        return Special.MULTIRANGE if multirange else None
    if type_.kind is not ValueKind.SCALAR or type_.name != Scalar.STRING.value:
        return None
    return _SPECIAL_TYPES.get(type_.sql_name)


def special_operators(special: Special) -> tuple[FilterOperator, ...]:
    return _SPECIAL_OPERATORS[special]


_UNORDERED = frozenset({Scalar.BOOLEAN, Scalar.JSON})


def scalar_operators(scalar: Scalar) -> tuple[FilterOperator, ...]:
    operators = COMMON
    if scalar not in _UNORDERED:
        operators += ORDERED
    if scalar is Scalar.STRING:
        operators += STRING
    if scalar is Scalar.JSON:
        operators += JSON
    return operators


def enum_operators() -> tuple[FilterOperator, ...]:
    return COMMON + ORDERED[:4]


def range_operators() -> tuple[FilterOperator, ...]:
    return COMMON + RANGE


def list_operators() -> tuple[FilterOperator, ...]:
    return LIST
