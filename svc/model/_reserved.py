"""The GraphQL type names the service defines itself, whatever the database holds (SPEC "Naming": a table whose
derived name collides with one of these is schema-prefixed; a `type_name` naming one is refused).

Names derived from an enum, composite or range type (`<Enum>Filter`, `<Composite>Input`, ...) are given here too,
so that the SDL builder and the collision check agree.
"""

from ._entities import Scalar

SCALAR_NAMES = tuple(scalar.value for scalar in Scalar)
#: Scalars with a filter input of their own (`IntFilter`, ...) and a list filter (`IntListFilter`).
FILTERED_SCALARS = SCALAR_NAMES

SERVICE_TYPE_NAMES = frozenset(
    {
        "Query",
        "Mutation",
        "Subscription",
        "Node",
        "PageInfo",
        "Cursor",
        "ID",
        "OnConflictAction",
        "ConstraintDirective",
        "GlobalSearchHit",
        "GlobalSearchResults",
        "GlobalSearchNode",
        "LtreeFilter",
        "FullTextFilter",
        "GeometryFilter",
        "GeographyFilter",
        "GeometryDistanceInput",
        "_Service",
        "_Entity",
        "_Any",
        *SCALAR_NAMES,
        *(f"{name}Filter" for name in FILTERED_SCALARS),
        *(f"{name}ListFilter" for name in FILTERED_SCALARS),
    }
)


def enum_type_names(name: str) -> tuple[str, ...]:
    return (name, f"{name}Filter", f"{name}ListFilter")


def composite_type_names(name: str) -> tuple[str, ...]:
    return (name, f"{name}Input")


def range_type_names(name: str) -> tuple[str, ...]:
    return (name, f"{name}Input", f"{name}Bound", f"{name}BoundInput", f"{name}Filter", f"{name}ListFilter")
