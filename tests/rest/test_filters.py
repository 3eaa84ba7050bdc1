"""List filters (SPEC "REST API" -> list query parameters, filter groups, more filter operators, strictness): every
operator family written as `filter[column][operator]=value`, relation filters (to-one, to-many `some`/`every`/`none`/
`count`/`sum`, many-to-many), `filter={json}`, `or`/`and`/`not` groups nested next to plain conditions, and the 400s
naming the parameter: unknown columns and operators, operators not valid for the type, values that do not fit."""

import pytest

from tests.support.rest_reads import bad_request, ids, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


async def book_ids(rest, **filters: str) -> list[int]:
    return ids(await rest.get("/rest/books", params={"fields": "id", **filters}))


CASES = [
    # equality and comparison
    ({"filter[title][eq]": "Kindred"}, [3]),
    ({"filter[title][neq]": "Kindred"}, [1, 2, 4, 5, 6, 7]),
    ({"filter[pages][gt]": "280"}, [2, 5, 6]),
    ({"filter[pages][gte]": "281"}, [2, 5, 6]),
    ({"filter[pages][lt]": "205"}, [7]),
    ({"filter[pages][lte]": "205"}, [1, 7]),
    ({"filter[pages][gte]": "264", "filter[pages][lt]": "304"}, [3, 5]),  # several filters are ANDed
    ({"filter[title][in]": "Kindred,Exhalation,nope"}, [3, 6]),
    ({"filter[title][in]": '["Kindred","Exhalation"]'}, [3, 6]),  # a JSON array
    ({"filter[title][in]": '"Kindred",Exhalation'}, [3, 6]),  # quoted items
    ({"filter[title][nin]": "Kindred,Exhalation"}, [1, 2, 4, 5, 7]),
    ({"filter[title][in]": ""}, []),  # an empty list
    ({"filter[pages][isNull]": "true"}, [4]),
    ({"filter[pages][isNull]": "false", "filter[pages][lte]": "205"}, [1, 7]),
    ({"filter[pages][isDistinctFrom]": "205"}, [2, 3, 4, 5, 6, 7]),  # null treated as a value
    # patterns
    ({"filter[title][like]": "%ind%"}, [3]),
    ({"filter[title][like]": "100\\%%"}, [7]),
    ({"filter[title][ilike]": "%DARK%"}, [2]),
    ({"filter[title][startsWith]": "The "}, [2]),
    ({"filter[title][endsWith]": "ness"}, [2]),
    ({"filter[title][startsWith]": "100%"}, [7]),  # % and _ match themselves
    ({"filter[title][regex]": "^[A-K]"}, [1, 3, 4, 6]),
    ({"filter[title][iregex]": "^the"}, [2]),
    ({"filter[title][match]": "^[A-K]"}, [1, 3, 4, 6]),
    ({"filter[title][imatch]": "^the"}, [2]),
    ({"filter[title][likeAny]": "K%,E%"}, [3, 6]),
    ({"filter[title][likeAll]": "%i%,%d%"}, [1, 3, 4]),
    ({"filter[title][ilikeAny]": "k%,e%"}, [3, 6]),
    ({"filter[title][ilikeAll]": "%I%,%D%"}, [1, 3, 4]),
    ({"filter[title][includes]": "of"}, [1, 2, 5]),  # GraphQL operator names work as they are
    # any/all of a list
    ({"filter[pages][gtAny]": "200,300"}, [1, 2, 3, 5, 6]),
    ({"filter[pages][gtAll]": "200,300"}, [2, 6]),
    ({"filter[pages][gteAny]": "304,352"}, [2, 6]),
    ({"filter[pages][gteAll]": "304,352"}, [6]),
    ({"filter[pages][ltAny]": "150,210"}, [1, 7]),
    ({"filter[pages][ltAll]": "150,210"}, [7]),
    ({"filter[pages][lteAny]": "100,205"}, [1, 7]),
    ({"filter[pages][lteAll]": "100,205"}, [7]),
    # other scalars
    ({"filter[price][eq]": "12.50"}, [2, 3]),
    ({"filter[rating][gte]": "4.6"}, [2, 3]),
    ({"filter[copiesSold][gt]": "9007199254740992"}, [1]),  # exact past 2^53
    ({"filter[copies_sold][in]": "1,100000"}, [6, 7]),  # the database column name
    ({"filter[inPrint][eq]": "false"}, [4]),
    ({"filter[published][lt]": "1970-01-01"}, [1, 2]),
    ({"filter[addedAt][gte]": "2024-01-05T10:00:00Z"}, [5, 6, 7]),
    ({"filter[opensAt][lt]": "09:30"}, [1, 5, 6]),
    ({"filter[loanPeriod][gt]": "20 days"}, [2, 6]),
    ({"filter[isbn][eq]": "C0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A13"}, [5]),
    ({"filter[genre][eq]": "NON_FICTION"}, [6]),  # enums by their GraphQL values
    ({"filter[genre][in]": "POETRY,NON_FICTION"}, [4, 6]),
    ({"filter[genre][isNull]": "true"}, [7]),
    ({"filter[id][eq]": "3"}, [3]),  # the key column under its REST name
    ({"filter[titleUpper][eq]": "KINDRED"}, [3]),  # a computed column
    # arrays
    ({"filter[tags][contains]": "time"}, [3, 5]),
    ({"filter[tags][contains]": "stories,time"}, [5]),
    ({"filter[tags][containedBy]": "magic,sea,winter"}, [1, 2]),
    ({"filter[tags][overlaps]": "sea,winter"}, [1, 2]),
    ({"filter[scores][contains]": "[4,5]"}, [1, 5]),
    # ranges: an element, `[lower,upper)` texts and JSON objects
    ({"filter[available][contains]": "2024-02-15"}, [1, 2]),
    ({"filter[available][contains]": "[2024-02-10,2024-02-20)"}, [1, 2]),
    ({"filter[available][strictlyLeftOf]": "[2024-08-01,2024-09-01)"}, [1, 2]),
    ({"filter[available][strictlyRightOf]": "[2023-01-01,2024-01-01)"}, [1, 2, 5]),
    ({"filter[available][adjacentTo]": "[2024-03-01,2024-04-01)"}, [2]),
    ({"filter[available][overlaps]": "[2024-06-01,2024-06-02)"}, [1, 5]),
    ({"filter[available][overlaps]": "[2024-06-01,)"}, [1, 5]),  # an unbounded end
    ({"filter[available][containedBy]": "[2024-01-01,2024-12-31]"}, [1, 2, 6]),  # the empty range too
    (
        {"filter[available][overlaps]": '{"start": {"value": "2024-06-01", "inclusive": true}, "end": null}'},
        [1, 5],
    ),
    # JSON
    ({"filter[details][contains]": '{"n": 2}'}, [2]),
    ({"filter[details][hasKey]": "series"}, [1, 5]),
    ({"filter[details][hasAnyKeys]": "series,awards"}, [1, 2, 3, 5]),
    ({"filter[details][hasAllKeys]": "series,awards"}, [1]),
    ({"filter[details][matchesPath]": "$.n > 4"}, [5, 6]),
    ({"filter[details][existsPath]": "$.awards[1]"}, [2]),
    ({"filter[rawDetails][eq]": '{"n": 2}'}, [2]),  # json compared as jsonb
]


@pytest.mark.parametrize(("filters", "expected"), CASES)
async def test_operators(rest, filters, expected):
    assert await book_ids(rest, **filters) == expected


RELATIONS = [
    ("books", {"filter[author][name][eq]": "Ted"}, [5, 6]),  # to-one
    ("books", {"filter[author][mentor][name][eq]": "Ursula"}, [3, 4]),  # to-one of a to-one
    ("authors", {"filter[books][some][pages][gt]": "300"}, [1, 3]),
    ("authors", {"filter[books][every][inPrint][eq]": "true"}, [1, 3, 4]),
    ("authors", {"filter[books][every][rating][gt]": "4"}, [1]),  # NULL does not match: not 2 (Bloodchild), 3
    ("authors", {"filter[books][none][genre][eq]": "FICTION"}, [4]),
    ("authors", {"filter[books][count][gte]": "2"}, [1, 2, 3]),
    ("authors", {"filter[books][sum][pages][gt]": "500"}, [1, 3]),
    ("shelves", {"filter[books][some][title][eq]": "Kindred"}, [1]),  # many-to-many through the junction
    ("shelves", {"filter[books][none][pages][gt]": "0"}, [3]),
]


@pytest.mark.parametrize(("resource", "filters", "expected"), RELATIONS)
async def test_relation_filters(rest, resource, filters, expected):
    response = await rest.get(f"/rest/{resource}", params={"fields": "id", **filters})
    assert ids(response) == expected


async def test_or_groups_and_plain_conditions_must_all_hold(rest):
    groups = {"filter[or][0][pages][lt]": "150", "filter[or][1][pages][gt]": "300"}
    assert await book_ids(rest, **groups) == [2, 6, 7]
    assert await book_ids(rest, **groups, **{"filter[genre][eq]": "FICTION"}) == [2]


async def test_groups_nest(rest):
    assert await book_ids(
        rest,
        **{
            "filter[or][0][and][0][pages][gt]": "200",
            "filter[or][0][and][1][pages][lt]": "270",
            "filter[or][1][not][title][like]": "%e%",
        },
    ) == [1, 3, 4, 6]


async def test_not_negates_its_members(rest):
    assert await book_ids(rest, **{"filter[not][genre][eq]": "FICTION"}) == [4, 6]
    assert await book_ids(rest, **{"filter[not][author][name][eq]": "Ted"}) == [1, 2, 3, 4, 7]


async def test_or_members_are_taken_in_number_order(rest):
    params = {f"filter[or][{i}][id][eq]": str(i) for i in (10, 2, 1)}
    assert await book_ids(rest, **params) == [1, 2]


async def test_a_json_filter_in_the_graphql_shape(rest):
    value = '{"or": [{"pages": {"lessThan": 150}}, {"pages": {"greaterThan": 300}}], "rowId": {"notEqualTo": 6}}'
    assert await book_ids(rest, filter=value) == [2, 7]


async def test_a_json_filter_next_to_bracket_filters(rest):
    assert await book_ids(rest, filter='{"genre": {"equalTo": "FICTION"}}', **{"filter[pages][gt]": "270"}) == [2, 5]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"filter[nope][eq]": "1"}, "filter[nope]"),  # an unknown column
        ({"filter[pages][nope]": "1"}, "filter[pages][nope]"),  # an unknown operator
        ({"filter[pages][regex]": "1"}, "filter[pages][regex]"),  # an operator not valid for the type
        ({"filter[tags][hasKey]": "a"}, "filter[tags][hasKey]"),
        ({"filter[title]": "x"}, "filter[title]"),  # no operator
        ({"filter[title][eq][x]": "1"}, "filter[title][eq]"),
        ({"filter[pages][eq]": "abc"}, "filter[pages][eq]"),  # values that do not fit the type
        ({"filter[pages][in]": "1,x"}, "filter[pages][in]"),
        ({"filter[id][eq]": "1.5"}, "filter[id][eq]"),
        ({"filter[inPrint][eq]": "yes"}, "filter[inPrint][eq]"),
        ({"filter[published][lt]": "yesterday"}, "filter[published][lt]"),
        ({"filter[isbn][eq]": "x"}, "filter[isbn][eq]"),
        ({"filter[copiesSold][gt]": "1e3"}, "filter[copiesSold][gt]"),
        ({"filter[genre][eq]": "fiction"}, "filter[genre][eq]"),  # not the GraphQL value
        ({"filter[details][contains]": "{nope"}, "filter[details][contains]"),
        ({"filter[available][contains]": "soon"}, "filter[available][contains]"),
        ({"filter[available][overlaps]": "[1,2)"}, "filter[available][overlaps]"),
        ({"filter[available][overlaps]": "garbage"}, "filter[available][overlaps]"),
        ({"filter[title][like]": "abc\\"}, "filter[title][like]"),  # ends in the escape character
        ({"filter[author][name][ilike]": "a\\"}, "filter[author][name][ilike]"),
        ({"filter[author][nope][eq]": "1"}, "filter[author][nope]"),
        ({"filter[books][some][title][likeAny]": "a,b\\"}, "filter[books][some][title][likeAny]"),
        ({"filter[books][most][pages][gt]": "1"}, "filter[books][most]"),
        ({"filter[books][count][eq]": "x"}, "filter[books][count][eq]"),
        ({"filter[books][sum][pages][gt]": "x"}, "filter[books][sum][pages][gt]"),
        ({"filter[or][0][published][lt]": "x"}, "filter[or][0][published][lt]"),
        ({"filter[or][1][and][0][title][imatch]": "x", "filter[or][1][and][1][pages][eq]": "y"}, None),
        ({"filter[or][a][pages][gt]": "1"}, "filter[or]"),
        ({"filter": "[1]"}, "filter"),
        ({"filter": "{bad"}, "filter"),
        ({"filter": '{"nope": {}}'}, "filter[nope]"),  # an unknown member names itself
        ({"filter": '{"published": {"lessThan": "x"}}'}, "filter[published][lt]"),
    ],
)
async def test_bad_filters_are_400_naming_the_parameter(rest, params, field):
    response = await rest.get("/rest/books" if "books]" not in str(params) else "/rest/authors", params=params)
    problem = bad_request(response)
    assert problem["code"] == "BAD_USER_INPUT"
    if field is not None:
        assert problem["field"] == field


async def test_a_bad_regular_expression_or_json_path_is_400(rest):
    for params in ({"filter[title][regex]": "("}, {"filter[details][matchesPath]": "$$"}):
        assert bad_request(await rest.get("/rest/books", params=params))["code"] == "BAD_USER_INPUT"


async def test_a_relation_filter_of_an_included_to_one_relation_filters_the_rows(rest):
    """`filter[author][...]` is a condition on the rows read even when the author is included (the embedding
    filter applies to to-many relations only)."""
    response = await rest.get(
        "/rest/books",
        params={"fields": "id", "include": "author", "fields[author]": "name", "filter[author][name][eq]": "Ted"},
    )
    assert response.json() == [{"id": 5, "author": {"name": "Ted"}}, {"id": 6, "author": {"name": "Ted"}}]
