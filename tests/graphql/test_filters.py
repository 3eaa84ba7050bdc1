"""Filters and conditions (SPEC "Filter and condition inputs", "Errors" -> BAD_USER_INPUT): the operators of every
column type, `and`/`or`/`not`, to-one and to-many relation filters (`some`, `every` with NULL not matching, `none`,
`count`), many-to-many through the junction, computed values, conditions (null is IS NULL), and the bad-input cases
refused before SQL."""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {"database": {"schemas": ["app_public"]}}) as gql:
        yield gql


async def book_ids(gql, filter_: dict | None = None, *, condition: dict | None = None) -> list[int]:
    query = "query($f: BookFilter, $c: BookCondition) { books(filter: $f, condition: $c) { rowId } }"
    data = await gql.data(query, {"f": filter_, "c": condition})
    return [row["rowId"] for row in data["books"]]


CASES = [
    # strings
    ({"title": {"equalTo": "Kindred"}}, [3]),
    ({"title": {"notEqualTo": "Kindred"}}, [1, 2, 4, 5, 6, 7]),
    ({"title": {"in": ["Kindred", "Exhalation", "nope"]}}, [3, 6]),
    ({"title": {"notIn": ["Kindred", "Exhalation"]}}, [1, 2, 4, 5, 7]),
    ({"title": {"in": []}}, []),
    ({"title": {"notIn": []}}, [1, 2, 3, 4, 5, 6, 7]),
    ({"title": {"includes": "of"}}, [1, 2, 5]),
    ({"title": {"includesInsensitive": "THE"}}, [2]),
    ({"title": {"notIncludes": "o"}}, [3, 7]),
    ({"title": {"startsWith": "The "}}, [2]),
    ({"title": {"startsWithInsensitive": "a wiz"}}, [1]),
    ({"title": {"endsWith": "ness"}}, [2]),
    ({"title": {"endsWithInsensitive": "LIFE"}}, [5]),
    ({"title": {"includes": "100%"}}, [7]),  # % and _ are matched literally by includes
    ({"title": {"includes": "e_T"}}, [7]),
    ({"title": {"like": "%ind%"}}, [3]),
    ({"title": {"like": "100\\%%"}}, [7]),
    ({"title": {"likeInsensitive": "%DARK%"}}, [2]),
    ({"title": {"notLike": "%e%"}}, [4, 6]),
    ({"title": {"likeAny": ["K%", "E%"]}}, [3, 6]),
    ({"title": {"likeAll": ["%i%", "%d%"]}}, [1, 3, 4]),
    ({"title": {"regex": "^[A-K]"}}, [1, 3, 4, 6]),
    ({"title": {"regexInsensitive": "^the"}}, [2]),
    ({"title": {"notRegex": "[aeiou]{2}"}}, [2, 3, 7]),
    ({"title": {"equalToInsensitive": "kindred"}}, [3]),
    ({"title": {"inInsensitive": ["KINDRED", "exhalation"]}}, [3, 6]),
    ({"title": {"lessThan": "C"}}, [1, 4, 7]),
    # numbers
    ({"pages": {"greaterThan": 280}}, [2, 5, 6]),
    ({"pages": {"greaterThanOrEqualTo": 281, "lessThan": 352}}, [2, 5]),
    ({"pages": {"isNull": True}}, [4]),
    ({"pages": {"isNull": False, "lessThanOrEqualTo": 205}}, [1, 7]),
    ({"pages": {"distinctFrom": 205}}, [2, 3, 4, 5, 6, 7]),
    ({"pages": {"notDistinctFrom": None}}, [1, 2, 3, 4, 5, 6, 7]),  # a null operand is no condition
    ({"pages": {"greaterThanAll": [200, 300]}}, [2, 6]),
    ({"pages": {"lessThanAny": [150, 210]}}, [1, 7]),
    ({"price": {"equalTo": "12.50"}}, [2, 3]),
    ({"price": {"greaterThan": 12}}, [2, 3, 5, 6]),
    ({"rating": {"greaterThanOrEqualTo": 4.6}}, [2, 3]),
    ({"copiesSold": {"greaterThan": "9007199254740992"}}, [1]),
    ({"copiesSold": {"in": ["1", 100000]}}, [6, 7]),
    # booleans, dates, times, intervals, uuids, enums
    ({"inPrint": {"equalTo": False}}, [4]),
    ({"published": {"lessThan": "1970-01-01"}}, [1, 2]),
    ({"published": {"equalTo": "2020-02-29"}}, [7]),
    ({"addedAt": {"greaterThanOrEqualTo": "2024-01-05T10:00:00Z"}}, [5, 6, 7]),
    ({"opensAt": {"lessThan": "09:30"}}, [1, 5, 6]),
    ({"loanPeriod": {"greaterThan": "20 days"}}, [2, 6]),
    ({"loanPeriod": {"lessThan": "P2D"}}, [5]),
    ({"isbn": {"equalTo": "C0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A13"}}, [5]),
    ({"genre": {"equalTo": "NON_FICTION"}}, [6]),
    ({"genre": {"in": ["POETRY", "NON_FICTION"]}}, [4, 6]),
    ({"genre": {"greaterThan": "FICTION"}}, [4, 6]),
    ({"genre": {"isNull": True}}, [7]),
    # arrays
    ({"tags": {"contains": ["time"]}}, [3, 5]),
    ({"tags": {"containedBy": ["magic", "sea", "winter"]}}, [1, 2]),
    ({"tags": {"overlaps": ["sea", "stories"]}}, [1, 5, 6]),
    ({"tags": {"anyEqualTo": "winter"}}, [2]),
    ({"scores": {"anyGreaterThan": 4}}, [1, 2, 5]),
    ({"scores": {"equalTo": []}}, [4]),
    ({"scores": {"isNull": True}}, [3, 7]),
    # ranges
    ({"available": {"containsElement": "2024-02-15"}}, [1, 2]),
    ({"available": {"overlaps": {"start": {"value": "2024-06-15", "inclusive": True}}}}, [1, 5]),
    ({"available": {"strictlyLeftOf": {"start": {"value": "2024-04-01", "inclusive": True}}}}, [2]),
    (
        {
            "available": {
                "adjacentTo": {
                    "start": {"value": "2024-07-01", "inclusive": True},
                    "end": {"value": "2024-08-01", "inclusive": False},
                }
            }
        },
        [1],
    ),
    (
        {
            "available": {
                "containedBy": {
                    "start": {"value": "2024-01-01", "inclusive": True},
                    "end": {"value": "2024-12-31", "inclusive": True},
                }
            }
        },
        [1, 2, 6],
    ),
    # JSON (jsonb, and json compared as jsonb)
    ({"details": {"contains": {"awards": ["Hugo"]}}}, [2]),
    ({"details": {"hasKey": "series"}}, [1, 5]),
    ({"details": {"hasAnyKeys": ["awards", "series"]}}, [1, 2, 3, 5]),
    ({"details": {"hasAllKeys": ["awards", "series"]}}, [1]),
    ({"details": {"matchesPath": "$.n > 4"}}, [5, 6]),
    ({"details": {"existsPath": '$.awards[*] ? (@ == "Nebula")'}}, [2]),
    ({"details": {"equalTo": {"n": 6}}}, [6]),
    ({"rawDetails": {"contains": {"n": 2}}}, [2]),
    ({"rawDetails": {"equalTo": {"n": 5}}}, [5]),
    # combinations
    ({"and": [{"genre": {"equalTo": "FICTION"}}, {"pages": {"greaterThan": 280}}]}, [2, 5]),
    ({"or": [{"pages": {"lessThan": 150}}, {"price": {"greaterThan": 14}}]}, [5, 6, 7]),
    ({"not": {"genre": {"equalTo": "FICTION"}}}, [4, 6]),  # NOT of NULL is not true: the NULL genre is out
    ({"genre": {"equalTo": "FICTION"}, "or": [{"rowId": {"equalTo": 1}}, {"rowId": {"equalTo": 5}}]}, [1, 5]),
    ({"and": [], "or": None}, [1, 2, 3, 4, 5, 6, 7]),
    # relations: to-one, and computed values
    ({"author": {"name": {"equalTo": "Ted"}}}, [5, 6]),
    ({"author": {"mentor": {"name": {"equalTo": "Ursula"}}}}, [3, 4]),
    ({"titleUpper": {"startsWith": "THE"}}, [2]),
    ({"priceWithTax": {"greaterThan": 15}}, [5, 6]),
]


@pytest.mark.parametrize(("filter_", "expected"), CASES, ids=[str(case[0])[:70] for case in CASES])
async def test_filter(gql, filter_, expected):
    assert await book_ids(gql, filter_) == expected


async def test_to_many_relation_filters(gql):
    query = "query($f: AuthorFilter) { authors(filter: $f) { rowId } }"

    async def authors(filter_):
        return [row["rowId"] for row in (await gql.data(query, {"f": filter_}))["authors"]]

    assert await authors({"books": {"some": {"pages": {"greaterThan": 300}}}}) == [1, 3]
    assert await authors({"books": {"none": {"genre": {"equalTo": "FICTION"}}}}) == [4]
    # `every` treats a NULL condition as not matching: Octavia's Bloodchild has NULL pages.
    assert await authors({"books": {"every": {"pages": {"greaterThan": 200}}}}) == [1, 3]
    assert await authors({"books": {"every": {"genre": {"equalTo": "FICTION"}}}}) == [1]
    assert await authors({"books": {"count": {"equalTo": 2}}}) == [1, 2, 3]
    assert await authors({"books": {"count": {"lessThan": 2}, "some": {}}}) == [4]
    assert await authors({"authorsByMentorId": {"some": {"name": {"equalTo": "Octavia"}}}}) == [1]
    # aggregate members compare as Float: Ursula 509 pages, Octavia 264 (NULL ignored), Ted 633, Anonymous 100
    assert await authors({"books": {"sum": {"pages": {"greaterThan": 500}}}}) == [1, 3]
    assert await authors({"books": {"avg": {"price": {"lessThan": 12}}}}) == [1, 4]
    assert await authors(
        {"books": {"max": {"rating": {"greaterThanOrEqualTo": 4.6}}, "min": {"pages": {"lessThan": 250}}}}
    ) == [1]


async def test_many_to_many_filters_go_through_the_junction(gql):
    data = await gql.data("{ shelves(filter: {books: {some: {genre: {equalTo: FICTION}}}}) { label } }")
    assert data == {"shelves": [{"label": "favourites"}, {"label": "classics"}]}
    data = await gql.data("{ shelves(filter: {books: {none: {}}}) { label } }")
    assert data == {"shelves": [{"label": "empty shelf"}]}


async def test_conditions_are_equalities_and_null_is_is_null(gql):
    assert await book_ids(gql, condition={"price": "15.00"}) == [5, 6]
    assert await book_ids(gql, condition={"genre": None}) == [7]
    assert await book_ids(gql, condition={"genre": "FICTION", "pages": 264}) == [3]
    assert await book_ids(gql, condition={"details": {"n": 6}}) == [6]
    both = await book_ids(gql, {"pages": {"greaterThan": 250}}, condition={"genre": "FICTION"})
    assert both == [2, 3, 5]


async def test_filters_on_nested_lists_and_connections(gql):
    data = await gql.data(
        """{ author(rowId: 1) { books(filter: {pages: {greaterThan: 250}}) { rowId }
             booksConnection(condition: {pages: 205}) { totalCount nodes { rowId } } } }"""
    )
    assert data == {"author": {"books": [{"rowId": 2}], "booksConnection": {"totalCount": 1, "nodes": [{"rowId": 1}]}}}


@pytest.mark.parametrize(
    ("filter_", "message"),
    [
        ({"title": {"like": "ends with \\"}}, "a LIKE pattern may not end with the escape character"),
        ({"title": {"likeAny": ["ok%", "bad\\"]}}, "a LIKE pattern may not end with the escape character"),
        ({"title": {"equalTo": "nul \x00 inside"}}, "text may not contain the NUL character"),
        ({"title": {"regex": "(unclosed"}}, "invalid regular expression"),
        ({"details": {"matchesPath": "$.[broken"}}, "syntax error"),
        ({"price": {"equalTo": "twelve"}}, "expected a decimal number"),
        ({"copiesSold": {"equalTo": "1.5"}}, "expected a BigInt"),
        ({"copiesSold": {"equalTo": "99999999999999999999"}}, "expected a BigInt"),
        ({"isbn": {"equalTo": "not-a-uuid"}}, "expected a UUID"),
        ({"published": {"equalTo": "2020-02-30"}}, "expected an ISO 8601 date"),
        ({"addedAt": {"lessThan": "yesterday"}}, "expected an ISO 8601 datetime"),
        ({"loanPeriod": {"equalTo": "a fortnight"}}, "expected an interval"),
        ({"available": {"overlaps": {"start": {"value": "2024-01-01"}}}}, "to include required field 'inclusive'"),
    ],
)
async def test_bad_values_are_bad_user_input_never_database_errors(gql, filter_, message):
    status, body = await gql.errors("query($f: BookFilter) { books(filter: $f) { rowId } }", {"f": filter_})
    (error,) = body["errors"]
    assert (status, error["extensions"]["code"]) == (400, "BAD_USER_INPUT")
    assert message in error["message"]
    assert error.get("path", ["books"]) == ["books"]  # variable coercion errors are the request's, without a path


async def test_an_enum_value_given_as_a_string_is_refused_by_validation(gql):
    status, body = await gql.errors('{ books(filter: {genre: {equalTo: "FICTION"}}) { rowId } }')
    assert (status, body["errors"][0]["extensions"]["code"]) == (400, "GRAPHQL_VALIDATION_FAILED")
    status, body = await gql.errors("query($g: Genre) { books(condition: {genre: $g}) { rowId } }", {"g": "fiction"})
    assert (status, body["errors"][0]["extensions"]["code"]) == (400, "BAD_USER_INPUT")
