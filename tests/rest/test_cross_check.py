"""GraphQL and REST are two front ends onto one plan (SPEC "What the service does"): equivalent requests return the
same rows, values mapped alike (BigInt and Decimal strings, enums as GraphQL values, ranges, JSON, arrays).

Each case is a GraphQL document and a REST request for the same rows; GraphQL names the key column `rowId` where
REST says `id`, the only difference allowed."""

from typing import Any

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]

EVERY_COLUMN = (
    "rowId authorId title genre pages price rating copiesSold inPrint published addedAt opensAt loanPeriod isbn tags"
    " scores available { start { value inclusive } end { value inclusive } } details rawDetails"
)

CASES = {
    "every column of every row": (
        f"{{ booksConnection {{ nodes {{ {EVERY_COLUMN} }} }} }}",
        "/rest/books?fields=id,authorId,title,genre,pages,price,rating,copiesSold,inPrint,published,addedAt,opensAt,"
        "loanPeriod,isbn,tags,scores,available,details,rawDetails",
    ),
    "a filtered, ordered page": (
        "{ booksConnection(filter: {pages: {greaterThan: 200}}, orderBy: [PAGES_DESC], first: 3)"
        " { nodes { rowId title pages } } }",
        "/rest/books?filter[pages][gt]=200&order=-pages&first=3&fields=id,title,pages",
    ),
    "the page after a cursor, ties broken by the key": (
        "{ booksConnection(orderBy: [IN_PRINT_ASC], first: 3, offset: 2) { nodes { rowId inPrint } } }",
        "/rest/books?order=inPrint&first=3&offset=2&fields=id,inPrint",
    ),
    "nulls placed first": (
        "{ booksConnection(orderBy: [PRICE_ASC_NULLS_FIRST]) { nodes { rowId price } } }",
        "/rest/books?order=price:asc:nullsfirst&fields=id,price",
    ),
    "a to-one relation's filter and order": (
        '{ booksConnection(filter: {author: {name: {startsWith: "O"}}}, orderBy: [AUTHOR_NAME_DESC, TITLE_ASC])'
        " { nodes { rowId title } } }",
        "/rest/books?filter[author][name][startsWith]=O&order=author.name:desc,title&fields=id,title",
    ),
    "to-many quantifiers and counts": (
        "{ authorsConnection(filter: {books: {some: {genre: {equalTo: POETRY}}, count: {greaterThan: 0}}})"
        " { nodes { rowId name } } }",
        "/rest/authors?filter[books][some][genre][eq]=POETRY&filter[books][count][gt]=0&fields=id,name",
    ),
    "or, and and not groups": (
        "{ booksConnection(filter: {or: [{pages: {lessThan: 220}}, {and: [{rating: {greaterThan: 4}},"
        " {not: {genre: {equalTo: FICTION}}}]}]}) { nodes { rowId } } }",
        "/rest/books?filter[or][0][pages][lt]=220&filter[or][1][and][0][rating][gt]=4"
        "&filter[or][1][and][1][not][genre][eq]=FICTION&fields=id",
    ),
    "a filter given as JSON": (
        '{ booksConnection(filter: {tags: {contains: ["magic"]}, details: {hasKey: "series"}}) { nodes { rowId } } }',
        '/rest/books?filter={"tags":{"contains":["magic"]},"details":{"hasKey":"series"}}&fields=id',
    ),
    "range and pattern operators": (
        '{ booksConnection(filter: {available: {containsElement: "2024-02-15"}, title: {likeInsensitive: "%the%"}})'
        " { nodes { rowId } } }",
        "/rest/books?filter[available][contains]=2024-02-15&filter[title][ilike]=%25the%25&fields=id",
    ),
    "a row by key with its relations": (
        "{ book(rowId: 1) { rowId title author { rowId name } bookShelves { shelfId } } }",
        "/rest/books/1?fields=id,title&include=author,bookShelves&fields[author]=id,name&fields[bookShelves]=shelfId",
    ),
    "nested lists, filtered and paged": (
        "{ authorsConnection(orderBy: [NAME_ASC]) { nodes { name"
        " books(filter: {pages: {greaterThan: 100}}, orderBy: [TITLE_DESC], first: 1) { title } } } }",
        "/rest/authors?order=name&fields=name&include=books&fields[books]=title&filter[books][pages][gt]=100"
        "&order[books]=-title&first[books]=1",
    ),
    "computed fields with arguments": (
        "{ booksConnection(first: 2) { nodes { rowId titleUpper priceWithTax(rate: 0.5) } } }",
        "/rest/books?first=2&fields=id,titleUpper,priceWithTax&args[priceWithTax][rate]=0.5",
    ),
    "a function's rows": (
        "{ booksByGenre(wanted: FICTION, orderBy: [TITLE_ASC]) { nodes { rowId title } } }",
        "/rest/rpc/books_by_genre?wanted=FICTION&order=title&fields=id,title",
    ),
    "a view": (
        "{ fictionsConnection { nodes { id title pages } } }",  # no key: `id` is a plain column
        "/rest/fiction",
    ),
}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {"database": {"schemas": ["app_public"]}}) as gql:
        yield gql


def rest_names(value: Any) -> Any:
    """GraphQL rows with REST's name for the key column."""
    if isinstance(value, list):
        return [rest_names(item) for item in value]
    if isinstance(value, dict):
        return {("id" if key == "rowId" else key): rest_names(item) for key, item in value.items()}
    return value


def rows_of(data: Any) -> Any:
    """The rows of a GraphQL answer: the root field's value, connections unwrapped to their nodes."""
    (value,) = data.values()
    return value["nodes"] if isinstance(value, dict) and set(value) == {"nodes"} else value


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
async def test_graphql_and_rest_return_the_same_rows(gql, case):
    query, path = CASES[case]
    graphql_rows = rest_names(rows_of(await gql.data(query)))
    response = await gql.client.get(path)
    assert response.status_code == 200, response.text
    rest_rows = response.json()
    assert rest_rows == graphql_rows
    assert rest_rows, "a case that returns nothing proves nothing"
