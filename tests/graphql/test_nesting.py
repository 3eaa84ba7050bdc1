"""Order and nesting (SPEC "orderBy", "Fields present on generated types", "What the service does" rule 2): every kind
of orderBy value; relations in every direction with arguments on to-many ones; many-to-many; computed fields with
arguments; STABLE/IMMUTABLE functions as root fields (scalars, rows, sets of rows as connections, records); and the
hierarchy fields, ending at cycles and `maxDepth`."""

import pytest

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["reads.sql"]


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, {"database": {"schemas": ["app_public"]}}) as gql:
        yield gql


async def ordered(gql, order) -> list[int]:
    data = await gql.data("query($o: [BookOrderBy!]) { books(orderBy: $o) { rowId } }", {"o": order})
    return [row["rowId"] for row in data["books"]]


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (["NATURAL"], [1, 2, 3, 4, 5, 6, 7]),
        (["PRIMARY_KEY_ASC"], [1, 2, 3, 4, 5, 6, 7]),
        (["PRIMARY_KEY_DESC"], [7, 6, 5, 4, 3, 2, 1]),
        (["PAGES_ASC"], [7, 1, 3, 5, 2, 6, 4]),
        (["PAGES_DESC"], [4, 6, 2, 5, 3, 1, 7]),
        (["PAGES_ASC_NULLS_FIRST"], [4, 7, 1, 3, 5, 2, 6]),
        (["PAGES_DESC_NULLS_LAST"], [6, 2, 5, 3, 1, 7, 4]),
        (["PRICE_DESC", "TITLE_ASC"], [4, 6, 5, 3, 2, 1, 7]),
        (["GENRE_ASC", "PUBLISHED_DESC"], [5, 3, 2, 1, 6, 4, 7]),  # enum order: fiction, non-fiction, poetry
        (["AUTHOR_NAME_ASC"], [7, 3, 4, 5, 6, 1, 2]),  # a to-one relation's column
        (["AUTHOR_BORN_DESC"], [7, 5, 6, 3, 4, 1, 2]),  # NULL first descending: Anonymous has no birth date
        (["BOOK_SHELVES_COUNT_DESC", "PRIMARY_KEY_ASC"], [1, 2, 3, 5, 4, 6, 7]),  # a to-many relation's count
        (["TITLE_UPPER_DESC"], [2, 5, 3, 6, 4, 1, 7]),  # a computed value
    ],
)
async def test_order_by(gql, order, expected):
    assert await ordered(gql, order) == expected


async def test_relations_in_every_direction(gql):
    data = await gql.data(
        """{ book(rowId: 3) {
             title
             author { name mentor { name mentor { name } } authorsByMentorId { name } }
             shelves { label }
             bookShelves { shelf { label } }
           } }"""
    )
    assert data == {
        "book": {
            "title": "Kindred",
            "author": {
                "name": "Octavia",
                "mentor": {"name": "Ursula", "mentor": None},
                "authorsByMentorId": [{"name": "Ted"}],
            },
            "shelves": [{"label": "favourites"}],
            "bookShelves": [{"shelf": {"label": "favourites"}}],
        }
    }


async def test_arguments_on_to_many_relations(gql):
    data = await gql.data(
        """{ authors(first: 3) {
             name
             books(first: 1, orderBy: PAGES_DESC_NULLS_LAST, filter: {pages: {isNull: false}}) { title }
             rest: books(offset: 1, orderBy: PRIMARY_KEY_ASC) { rowId }
             shelfless: books(condition: {inPrint: false}) { rowId }
           } }"""
    )
    assert data["authors"] == [
        {"name": "Ursula", "books": [{"title": "The Left Hand of Darkness"}], "rest": [{"rowId": 2}], "shelfless": []},
        {"name": "Octavia", "books": [{"title": "Kindred"}], "rest": [{"rowId": 4}], "shelfless": [{"rowId": 4}]},
        {"name": "Ted", "books": [{"title": "Exhalation"}], "rest": [{"rowId": 6}], "shelfless": []},
    ]


async def test_many_to_many_both_ways(gql):
    data = await gql.data(
        "{ shelves(first: 5) { label books(first: 10, orderBy: TITLE_ASC) { title shelves(first: 10, orderBy: LABEL_ASC) { label } } } }"
    )
    assert data["shelves"][0] == {
        "label": "favourites",
        "books": [
            {"title": "A Wizard of Earthsea", "shelves": [{"label": "classics"}, {"label": "favourites"}]},
            {"title": "Kindred", "shelves": [{"label": "favourites"}]},
            {"title": "Stories of Your Life", "shelves": [{"label": "favourites"}]},
        ],
    }
    assert data["shelves"][2] == {"label": "empty shelf", "books": []}


async def test_more_than_eight_relations_of_a_row(gql):
    fields = " ".join(f"r{i}: books(first: 1, orderBy: PRIMARY_KEY_DESC) {{ rowId }}" for i in range(12))
    data = await gql.data(f"{{ author(rowId: 3) {{ name {fields} }} }}")
    assert data["author"] == {"name": "Ted", **{f"r{i}": [{"rowId": 6}] for i in range(12)}}


async def test_computed_fields_with_and_without_arguments(gql):
    data = await gql.data(
        """{ book(rowId: 2) { titleUpper priceWithTax tax50: priceWithTax(rate: 0.5) }
             author(rowId: 3) { bookCount booksSince(year: 2010) { title } early: booksSince(year: 1900, first: 1) { title } } }"""
    )
    assert data == {
        "book": {"titleUpper": "THE LEFT HAND OF DARKNESS", "priceWithTax": "15.00", "tax50": "18.75"},
        "author": {
            "bookCount": "2",
            "booksSince": [{"title": "Exhalation"}],
            "early": [{"title": "Stories of Your Life"}],
        },
    }


async def test_functions_as_root_fields(gql):
    data = await gql.data(
        """{ add(a: 2, b: 40)
             longestBook { title pages }
             booksByGenre(wanted: FICTION, first: 2, orderBy: PAGES_DESC) { totalCount nodes { title } pageInfo { hasNextPage } }
             genreCounts { genre books }
             allTitles }"""
    )
    assert data["add"] == 42
    assert data["longestBook"] == {"title": "Exhalation", "pages": 352}
    assert data["booksByGenre"] == {
        "totalCount": 4,
        "nodes": [{"title": "The Left Hand of Darkness"}, {"title": "Stories of Your Life"}],
        "pageInfo": {"hasNextPage": True},
    }
    assert data["genreCounts"] == [
        {"genre": "FICTION", "books": "4"},
        {"genre": "NON_FICTION", "books": "1"},
        {"genre": "POETRY", "books": "1"},
        {"genre": None, "books": "1"},
    ]
    assert data["allTitles"][:2] == ["A Wizard of Earthsea", "The Left Hand of Darkness"]


async def test_a_strict_function_with_a_null_argument(gql):
    assert await gql.data("query($b: Int!) { add(a: 1, b: $b) }", {"b": 2}) == {"add": 3}


async def test_hierarchy_ancestors_and_descendants(gql):
    data = await gql.data(
        """{ category(rowId: 4) { name ancestors { name } up2: ancestors(maxDepth: 2) { name } }
             root: category(rowId: 1) { descendants(orderBy: NAME_ASC) { name } some: descendants(filter: {name: {startsWith: "p"}}) { name } } }"""
    )
    assert data == {
        "category": {
            "name": "optics",
            "ancestors": [{"name": "physics"}, {"name": "science"}, {"name": "root"}],
            "up2": [{"name": "physics"}, {"name": "science"}],
        },
        "root": {
            "descendants": [{"name": "art"}, {"name": "optics"}, {"name": "physics"}, {"name": "science"}],
            "some": [{"name": "physics"}],
        },
    }


async def test_a_hierarchy_ends_at_a_cycle(gql):
    data = await gql.data("{ category(rowId: 10) { ancestors { rowId } descendants { rowId } } }")
    assert data == {
        "category": {
            "ancestors": [{"rowId": 12}, {"rowId": 11}, {"rowId": 10}],
            "descendants": [{"rowId": 11}, {"rowId": 12}, {"rowId": 10}],
        }
    }


async def test_a_bad_max_depth(gql):
    status, body = await gql.errors("{ category(rowId: 4) { ancestors(maxDepth: 0) { name } } }")
    assert (status, body["errors"][0]["extensions"]["code"]) == (400, "BAD_USER_INPUT")
