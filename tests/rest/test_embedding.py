"""Included relations and their controls (SPEC "REST API" -> list query parameters `include`, embedding controls,
"Limits"): to-one, to-many, many-to-many and nested includes; hierarchies (`ancestors`, `descendants`, ending at a
cycle, `depth[rel]`, filtered and ordered, never paged); computed sets of rows and computed rows; `fields[rel]`,
`filter[rel]` (parents stay), `order[rel]`, `first[rel]`, `offset[rel]` (the default page when controlled, the largest
page otherwise), `inner` and `anti`; at most 10 relations and 3 levels."""

import pytest

from tests.support.rest_reads import bad_request, rest_client

DATABASE_FIXTURES = ["reads.sql", "rest_reads.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 2, "max": 50}}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_client(tmp_path, database_url, SETTINGS) as client:
        yield client


async def body(rest, path: str, **params: str):
    response = await rest.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_to_one_to_many_and_many_to_many_relations(rest):
    assert await body(
        rest,
        "/rest/books/3",
        fields="title",
        include="author,shelves,bookShelves,bookShelves.shelf",
        **{"fields[author]": "name", "fields[shelves]": "label", "fields[bookShelves]": "shelfId"},
        **{"fields[bookShelves.shelf]": "label"},
    ) == {
        "title": "Kindred",
        "author": {"name": "Octavia"},
        "shelves": [{"label": "favourites"}],
        "bookShelves": [{"shelfId": 1, "shelf": {"label": "favourites"}}],
    }


async def test_an_included_row_has_every_field_unless_fields_name_some(rest):
    author = (await body(rest, "/rest/books/7", fields="id", include="author"))["author"]
    assert list(author) == ["id", "name", "born", "mentorId", "rowVersion"]
    assert author | {"rowVersion": None} == {
        "id": 4,
        "name": "Anonymous",
        "born": None,
        "mentorId": None,
        "rowVersion": None,
    }


async def test_a_missing_to_one_row_is_null_and_no_to_many_row_an_empty_list(rest):
    assert await body(
        rest,
        "/rest/authors/1",
        fields="name",
        include="mentor,authorsByMentorId",
        **{"fields[authorsByMentorId]": "name"},
    ) == {
        "name": "Ursula",
        "mentor": None,
        "authorsByMentorId": [{"name": "Octavia"}],
    }
    assert await body(rest, "/rest/shelves/3", fields="label", include="books") == {"label": "empty shelf", "books": []}


async def test_three_levels_of_includes_on_a_list(rest):
    assert await body(
        rest,
        "/rest/shelves",
        fields="label",
        include="books,books.author,books.author.mentor",
        **{"fields[books]": "title", "fields[books.author]": "name", "fields[books.author.mentor]": "name"},
    ) == [
        {
            "label": "favourites",
            "books": [
                {"title": "A Wizard of Earthsea", "author": {"name": "Ursula", "mentor": None}},
                {"title": "Kindred", "author": {"name": "Octavia", "mentor": {"name": "Ursula"}}},
                {"title": "Stories of Your Life", "author": {"name": "Ted", "mentor": {"name": "Octavia"}}},
            ],
        },
        {
            "label": "classics",
            "books": [
                {"title": "A Wizard of Earthsea", "author": {"name": "Ursula", "mentor": None}},
                {"title": "The Left Hand of Darkness", "author": {"name": "Ursula", "mentor": None}},
            ],
        },
    ]


async def test_hierarchies_walk_ancestors_and_descendants_and_end_at_a_cycle(rest):
    ids = {"fields": "id", "fields[ancestors]": "id", "fields[descendants]": "id"}
    assert await body(rest, "/rest/categories/3", include="ancestors,descendants", **ids) == {
        "id": 3,
        "ancestors": [{"id": 2}, {"id": 1}],
        "descendants": [{"id": 4}],
    }
    assert await body(rest, "/rest/categories/10", include="ancestors,descendants", **ids) == {
        "id": 10,
        "ancestors": [{"id": 12}, {"id": 11}, {"id": 10}],  # c1 -> c3 -> c2 -> c1: the walk ends at the cycle
        "descendants": [{"id": 11}, {"id": 12}, {"id": 10}],
    }


async def test_hierarchies_take_depth_filter_order_and_fields(rest):
    assert await body(
        rest,
        "/rest/categories/4",
        fields="id",
        include="ancestors",
        **{"fields[ancestors]": "name", "depth[ancestors]": "2"},
    ) == {
        "id": 4,
        "ancestors": [{"name": "physics"}, {"name": "science"}],
    }
    assert await body(
        rest,
        "/rest/categories/1",
        fields="id",
        include="descendants",
        **{"fields[descendants]": "name", "order[descendants]": "name", "filter[descendants][name][like]": "%i%"},
    ) == {"id": 1, "descendants": [{"name": "optics"}, {"name": "physics"}, {"name": "science"}]}


@pytest.mark.parametrize("control", ["first", "offset"])
async def test_hierarchies_are_not_paged(rest, control):
    response = await rest.get("/rest/categories/1", params={"include": "descendants", f"{control}[descendants]": "1"})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": f"{control}[descendants]"}


async def test_a_computed_set_of_rows_is_included_like_a_relation(rest):
    assert await body(
        rest,
        "/rest/authors",
        fields="id",
        include="longBooks",
        first="3",
        **{"fields[longBooks]": "id,pages", "filter[longBooks][pages][gt]": "270", "order[longBooks]": "-pages"},
    ) == [
        {"id": 1, "longBooks": [{"id": 2, "pages": 304}]},
        {"id": 2, "longBooks": []},
        {"id": 3, "longBooks": [{"id": 6, "pages": 352}, {"id": 5, "pages": 281}]},
    ]


async def test_a_computed_row_is_included_as_an_object_or_null(rest):
    assert await body(rest, "/rest/books/6", fields="id", include="nextBook", **{"fields[nextBook]": "title"}) == {
        "id": 6,
        "nextBook": {"title": "100% Pure_Text"},
    }
    assert await body(rest, "/rest/books/7", fields="id", include="nextBook") == {"id": 7, "nextBook": None}


async def test_a_computed_set_of_rows_with_arguments_of_its_own_cannot_be_included(rest):
    response = await rest.get("/rest/authors", params={"include": "booksSince"})
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": "include"}


async def test_filter_of_an_included_relation_keeps_the_parents(rest):
    assert await body(
        rest,
        "/rest/authors",
        fields="id",
        first="4",
        include="books",
        **{"fields[books]": "id", "filter[books][pages][gt]": "300", "first[books]": "5"},
    ) == [
        {"id": 1, "books": [{"id": 2}]},
        {"id": 2, "books": []},
        {"id": 3, "books": [{"id": 6}]},
        {"id": 4, "books": []},
    ]


async def test_order_first_and_offset_of_an_included_relation(rest):
    params = {"fields": "label", "include": "books", "fields[books]": "id", "first": "1"}
    assert await body(rest, "/rest/shelves", **params, **{"order[books]": "-title", "first[books]": "5"}) == [
        {"label": "favourites", "books": [{"id": 5}, {"id": 3}, {"id": 1}]}
    ]
    assert await body(
        rest, "/rest/shelves", **params, **{"order[books]": "-title", "offset[books]": "1", "first[books]": "1"}
    ) == [{"label": "favourites", "books": [{"id": 3}]}]


async def test_controlled_relations_get_the_default_page_and_others_the_largest(tmp_path, database_url):
    settings = {"database": {"schemas": ["app_public"]}, "limits": {"page_size": {"default": 1, "max": 2}}}
    params = {"fields": "label", "include": "books", "fields[books]": "id", "first": "1"}
    async with rest_client(tmp_path, database_url, settings) as rest:
        plain = await body(rest, "/rest/shelves", **params)
        ordered = await body(rest, "/rest/shelves", **params, **{"order[books]": "title"})
        filtered = await body(rest, "/rest/shelves", **params, **{"filter[books][id][gt]": "0"})
        paged = await body(rest, "/rest/shelves", **params, **{"offset[books]": "1"})
    assert plain == [{"label": "favourites", "books": [{"id": 1}, {"id": 3}]}]  # cut at page_size.max (2)
    assert ordered == [{"label": "favourites", "books": [{"id": 1}]}]  # page_size.default (1)
    assert filtered == [{"label": "favourites", "books": [{"id": 1}]}]
    assert paged == [{"label": "favourites", "books": [{"id": 3}]}]


async def test_inner_keeps_parents_with_a_matching_row_and_anti_those_without(rest):
    params = {
        "fields": "id",
        "include": "books",
        "fields[books]": "id",
        "filter[books][pages][gt]": "300",
        "first": "4",
    }
    assert await body(rest, "/rest/authors", **params, inner="books") == [
        {"id": 1, "books": [{"id": 2}]},
        {"id": 3, "books": [{"id": 6}]},
    ]
    assert await body(rest, "/rest/authors", **params, anti="books") == [{"id": 2, "books": []}, {"id": 4, "books": []}]
    shelves = await body(
        rest, "/rest/shelves", fields="label", include="books", anti="books", **{"fields[books]": "id"}
    )
    assert shelves == [{"label": "empty shelf", "books": []}]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"inner": "books"}, "inner"),  # not included
        ({"anti": "books"}, "anti"),
        ({"include": "longBooks", "inner": "longBooks"}, "inner"),  # parents are not filtered by functions
        ({"fields[books]": "id"}, "fields[books]"),
        ({"order[books]": "id"}, "order[books]"),
        ({"first[books]": "1"}, "first[books]"),
        ({"include": "books", "fields[books]": "nope"}, "fields[books]"),
        ({"include": "books", "order[books]": "nope"}, "order[books]"),
        ({"include": "books", "first[books]": "x"}, "first[books]"),
        ({"include": "books", "filter[books][nope][eq]": "1"}, "filter[books][nope]"),
        ({"include": "books", "filter[books][pages][gt]": "x"}, "filter[books][pages][gt]"),
        ({"include": "mentor", "order[mentor]": "name"}, "order[mentor]"),  # to-one relations take no page controls
        ({"include": "mentor", "first[mentor]": "1"}, "first[mentor]"),
        ({"include": "mentor", "depth[mentor]": "1"}, "depth[mentor]"),
        ({"include": "nope"}, "include"),
        ({"include": "books.nope"}, "include"),
        ({"include": "name"}, "include"),  # a column is no relation
        ({"include": "books", "filter[books.author][name][eq]": "x"}, "filter[books.author]"),
    ],
)
async def test_bad_includes_and_controls_are_400_naming_the_parameter(rest, params, field):
    response = await rest.get("/rest/authors", params=params)
    assert bad_request(response) == {"code": "BAD_USER_INPUT", "field": field}


async def test_an_included_page_over_the_largest_is_page_size_exceeded(rest):
    response = await rest.get("/rest/authors", params={"include": "books", "first[books]": "51"})
    assert bad_request(response) == {"code": "PAGE_SIZE_EXCEEDED", "limit": 50, "actual": 51}


async def test_at_most_ten_included_relations(rest):
    ten = "author,author.mentor,author.books,author.authorsByMentorId,shelves,bookShelves,shelves.books,bookShelves.shelf,bookShelves.book,nextBook"
    assert (await rest.get("/rest/books", params={"include": ten, "fields": "id", "first": "1"})).status_code == 200
    response = await rest.get("/rest/books", params={"include": ten + ",author.mentor.books"})
    assert bad_request(response) == {"code": "DEPTH_LIMIT_EXCEEDED", "field": "include", "limit": 10, "actual": 11}


async def test_at_most_three_levels_of_includes(rest):
    response = await rest.get("/rest/authors", params={"include": "books.author.books.author"})
    assert bad_request(response) == {"code": "DEPTH_LIMIT_EXCEEDED", "field": "include", "limit": 3, "actual": 4}


async def test_a_path_named_twice_is_one_relation(rest):
    assert await body(rest, "/rest/books/1", fields="id", include="author,author", **{"fields[author]": "name"}) == {
        "id": 1,
        "author": {"name": "Ursula"},
    }
