"""Fuzzy and full-text search on pagila (SPEC "Search fields", REST "Search methods"; issue 19's contract): each
answer, over GraphQL and REST, checked against the same search written by hand in SQL on the module's database.

pagila_search.sql adds trigram indexes on `film.title`, `film.description` and `actor.last_name`; pagila's own
`film.fulltext` (a gist index, kept by `tsvector_update_trigger(fulltext, 'pg_catalog.english', title,
description)`) gives full text with highlights. So `film` has fuzzy (DESCRIPTION first by index name, TITLE) and
full text (FULLTEXT), `actor` fuzzy only (LAST_NAME), and global search merges the two.

Queries the fixture answers: fuzzy on titles `love` (10 matches, ties at 1.0 and 0.8), `dragon` (4), `dinosaur` (3);
`lovely` with minSimilarity 0.35 (11); fuzzy on descriptions `scientist` (97, all 1.0: ties by key); full text
`"mad scientist" -boat` (81), `astronaut OR crocodile` (173), `dinosaur` (3); global `temple` (4 actors at 1.0, 2
films), `chase` (2 actors, 30-odd films).
"""

import re

import pytest
from graphql import OperationDefinitionNode, parse

from svc.graphql import QueryPlanner, build_graphql_schema
from svc.sql import compile_read
from tests.search.support import (
    MAX_LIMIT,
    TOO_MANY_CODES,
    approx,
    assert_ranked,
    graphql_error,
    graphql_hits,
    rest_bad_input,
    rest_hits,
    rest_not_found,
    rest_ok,
    statements,
)
from tests.support.debug import debug_explain, tsqueries_not_made_once
from tests.support.graphql import Gql
from tests.support.model import read_model
from tests.support.postgres import PAGILA, execute, fetch
from tests.support.service import running_service

DATABASE_FIXTURES = [*PAGILA, "pagila_search.sql"]
SETTINGS = {"database": {"schemas": ["public"]}}
ENGLISH = "pg_catalog.english"
#: The text film's full-text document is made of (its trigger's columns, as the service reads them).
SOURCE = "coalesce(title::text, '') || ' ' || coalesce(description::text, '')"
#: A film whose text holds characters HTML escapes (inserted by the `db` fixture).
SPECIAL = 1001
SPECIAL_TITLE = "TOM & JERRY"
SPECIAL_DESCRIPTION = 'A Cat & Mouse Chase where 5 < 6 and "Quotes" aren\'t a Problem for a Crafty Mouse'
FILM_FIELDS = ["filmId", "title"]

FUZZY = """query($query: String!, $first: Int, $min: Float) {
  filmsFuzzySearch(query: $query, field: TITLE, first: $first, minSimilarity: $min) {
    hasMore hits { score node { filmId title } }
  }
}"""
FULL_TEXT = """query($query: String!, $first: Int) {
  filmsFullTextSearch(query: $query, first: $first) { hasMore hits { score node { filmId title } } }
}"""
GLOBAL = """query($query: String!, $first: Int) {
  globalSearch(query: $query, first: $first) {
    hasMore
    hits { score node { __typename ... on Film { filmId } ... on Actor { actorId } } }
  }
}"""


@pytest.fixture(scope="module")
def db(database_url):
    """The module's database, with the film whose text needs escaping."""
    execute(
        database_url,
        "insert into public.film (film_id, title, description, language_id) values"
        f" ({SPECIAL}, {quoted(SPECIAL_TITLE)}, {quoted(SPECIAL_DESCRIPTION)}, 1)",
    )
    return database_url


@pytest.fixture
async def service(tmp_path, db):
    async with running_service(tmp_path, db, SETTINGS) as service:
        yield service


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def variables(**values):
    """GraphQL variables without the ones not given (an absent argument, not an explicit null)."""
    return {name: value for name, value in values.items() if value is not None}


# --- hand-written SQL --------------------------------------------------------------------------------------------


def fuzzy_sql(db, query: str, column: str = "title", minimum: float | None = None, where: str = "true"):
    """Every match, best first: `query <% doc` (the threshold, 0.6) or word similarity at least `minimum`."""
    match = f"%(query)s <%% {column}" if minimum is None else f"word_similarity(%(query)s, {column}) >= %(minimum)s"
    return fetch(
        db,
        f"select film_id, word_similarity(%(query)s, {column}) from public.film"
        f" where {match} and ({where}) order by 2 desc, film_id",
        {"query": query, "minimum": minimum},
    )


def full_text_sql(db, query: str, where: str = "true"):
    return fetch(
        db,
        f"select film_id, ts_rank(fulltext, q) from public.film, websearch_to_tsquery('{ENGLISH}', %(query)s) q"
        f" where fulltext @@ q and ({where}) order by 2 desc, film_id",
        {"query": query},
    )


def actor_fuzzy_sql(db, query: str):
    return fetch(
        db,
        "select actor_id, word_similarity(%(query)s, last_name) from public.actor where %(query)s <%% last_name"
        " order by 2 desc, actor_id",
        {"query": query},
    )


def escaped(text: str) -> str:
    """The contract's escaping: `& < > " '` as `&amp; &lt; &gt; &quot; &#39;`."""
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;")):
        text = text.replace(raw, entity)
    return text


def headlines_sql(
    db,
    query: str,
    keys,
    *,
    start: str = "<b>",
    stop: str = "</b>",
    max_words: int | None = None,
    min_words: int | None = None,
    max_fragments: int | None = None,
) -> dict[int, str]:
    """ts_headline of each film's source text, escaped except the selectors: the headline is made with stand-ins
    for the selectors, escaped, and the stand-ins replaced by them."""
    options = ["StartSel=\x01", "StopSel=\x02"]
    for name, value in (("MaxWords", max_words), ("MinWords", min_words), ("MaxFragments", max_fragments)):
        if value is not None:
            options.append(f"{name}={value}")
    rows = fetch(
        db,
        f"select film_id, ts_headline('{ENGLISH}', {SOURCE}, websearch_to_tsquery('{ENGLISH}', %(query)s),"
        " %(options)s) from public.film where film_id = any(%(keys)s)",
        {"query": query, "options": ", ".join(options), "keys": list(keys)},
    )
    return {key: escaped(text).replace("\x01", start).replace("\x02", stop) for key, text in rows}


# --- fuzzy ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("love", 4),  # 10 matches: ties at 1.0 and at 0.8 in key order; more than returned
        ("love", 10),  # exactly all of them: no more
        ("dragon", 10),  # 1.0 and 0.857
        ("dinosaur", None),  # the default page (10) holds the 3 matches
        ("Grosse", 1),  # case does not matter
        ("qqxxzzy", 5),  # nothing near
    ],
)
async def test_fuzzy_ranks_titles_by_word_similarity(service, db, query, first):
    expected = fuzzy_sql(db, query)
    size = first if first is not None else 10
    data = await Gql(service.client).data(FUZZY, variables(query=query, first=first))
    results = data["filmsFuzzySearch"]
    assert_ranked(graphql_hits(results, "filmId"), expected[:size])
    assert results["hasMore"] is (len(expected) > size)
    body = await rest_ok(
        service.client,
        "/rest/film/search/fuzzy",
        {"query": query, "field": "title", "fields": FILM_FIELDS, **variables(first=first)},
    )
    assert_ranked(rest_hits(body, "filmId"), expected[:size])
    assert body["hasMore"] is (len(expected) > size)
    assert all(set(hit) == {"score", "row"} and set(hit["row"]) == set(FILM_FIELDS) for hit in body["hits"])


@pytest.mark.parametrize(
    ("query", "minimum", "count"),
    [
        ("lovely", 0.35, 11),  # looser than the threshold: 1.0, 0.571 and 0.4
        ("love", 0.9, 5),  # stricter than the threshold: the 0.8 and 0.6 titles are left out
        ("dinosuar", 0.3, 3),  # a typo below the threshold (0.556)
    ],
)
async def test_min_similarity_replaces_the_threshold(service, db, query, minimum, count):
    expected = fuzzy_sql(db, query, minimum=minimum)
    assert len(expected) == count
    data = await Gql(service.client).data(FUZZY, {"query": query, "min": minimum, "first": 20})
    assert_ranked(graphql_hits(data["filmsFuzzySearch"], "filmId"), expected)
    assert data["filmsFuzzySearch"]["hasMore"] is False
    body = await rest_ok(
        service.client,
        "/rest/film/search/fuzzy",
        {"query": query, "field": "title", "minSimilarity": minimum, "first": 20, "fields": FILM_FIELDS},
    )
    assert_ranked(rest_hits(body, "filmId"), expected)


async def test_the_default_fuzzy_field_is_the_first_by_index_name(service, db):
    """film_description_trgm_idx sorts before film_title_trgm_idx: no field is DESCRIPTION. `scientist` is in 97
    descriptions, all at 1.0: the key breaks the ties, and a full page still has more."""
    expected = fuzzy_sql(db, "scientist", column="description")
    assert len(expected) > MAX_LIMIT
    data = await Gql(service.client).data(
        '{ filmsFuzzySearch(query: "scientist", first: 50) { hasMore hits { score node { filmId } } } }'
    )
    assert_ranked(graphql_hits(data["filmsFuzzySearch"], "filmId"), expected[:50])
    assert data["filmsFuzzySearch"]["hasMore"] is True
    for body in ({"query": "scientist"}, {"query": "scientist", "field": "description"}):
        answer = await rest_ok(service.client, "/rest/film/search/fuzzy", {**body, "fields": ["filmId"]})
        assert_ranked(rest_hits(answer, "filmId"), expected[:10])
        assert answer["hasMore"] is True


# --- full text -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ('"mad scientist" -boat', 12),  # a phrase and an exclusion (websearch syntax)
        ("dinosaur", None),
        ("astronaut OR crocodile", 50),  # 173 matches
        ("Monkeys", 5),  # stemmed like the document
        ("nothingmatchesthis", 5),
    ],
)
async def test_full_text_ranks_by_ts_rank_of_the_websearch_query(service, db, query, first):
    expected = full_text_sql(db, query)
    size = first if first is not None else 10
    data = await Gql(service.client).data(FULL_TEXT, variables(query=query, first=first))
    results = data["filmsFullTextSearch"]
    assert_ranked(graphql_hits(results, "filmId"), expected[:size])
    assert results["hasMore"] is (len(expected) > size)
    body = await rest_ok(
        service.client,
        "/rest/film/search/full-text",
        {"query": query, "field": "fulltext", "fields": FILM_FIELDS, **variables(first=first)},
    )
    assert_ranked(rest_hits(body, "filmId"), expected[:size])
    assert body["hasMore"] is (len(expected) > size)
    assert all("highlight" not in hit for hit in body["hits"])  # not asked for


async def test_the_query_is_made_a_tsquery_once_per_statement(tmp_path, db):
    """The search's tsquery is an InitPlan's value, which the index condition reads: not a constant, which a read's
    custom plan would estimate against the column's statistics each time (they cost more than the search itself),
    nor made again per row. GraphQL and REST alike, with a highlight (whose headline takes the same tsquery)."""
    settings = {**SETTINGS, "dev": {"debug": {"explain": True}}}
    async with running_service(tmp_path, db, settings, mode="dev") as service:
        client = service.client
        graphql = await client.post("/graphql", json={"query": HIGHLIGHTS, "variables": {"query": "crocodile boat"}})
        rest = await client.post(
            "/rest/film/search/full-text", json={"query": "crocodile boat", "highlight": True, "fields": ["filmId"]}
        )
        for response in (graphql, rest):
            assert response.status_code == 200, response.text
            (explained,) = await debug_explain(client, response)
            assert tsqueries_not_made_once(explained["plan"]) == []


@pytest.mark.parametrize(
    ("document", "plans"),
    [
        ('{ filmsFullTextSearch(query: "boat") { hits { score } } }', "auto"),
        ('{ filmsFuzzySearch(query: "love") { hits { score } } globalSearch(query: "chase") { hasMore } }', "auto"),
        ('{ filmsFullTextSearch(query: "boat") { hasMore } films(first: 2) { filmId } }', "force_custom_plan"),
        ("{ films(first: 2) { filmId } }", "force_custom_plan"),
    ],
)
async def test_a_statement_of_searches_only_leaves_its_plan_to_postgresql(tmp_path, db, document, plans):
    """Its plan is its ranking's index whatever the values (`CompiledRead.plans`, tests/db/test_executor.py for what
    the executor does with it); a statement with any other root field is planned for its values each time."""
    config, model = await read_model(db, tmp_path, SETTINGS)
    schema = build_graphql_schema(model).schema
    (operation,) = parse(document).definitions
    assert isinstance(operation, OperationDefinitionNode)
    planned = QueryPlanner(schema, model, config.limits).plan(operation, {}, {})
    assert compile_read(planned.plan).plans == plans


HIGHLIGHTS = """query($query: String!) {
  filmsFullTextSearch(query: $query, first: 8) {
    hits {
      node { filmId }
      highlight
      mark: highlight(startSel: "<mark>", stopSel: "</mark>", maxWords: 10, minWords: 3)
      fragments: highlight(startSel: "[", stopSel: "]", maxWords: 6, minWords: 2, maxFragments: 2)
    }
  }
}"""
MARK = {"startSel": "<mark>", "stopSel": "</mark>", "maxWords": 10, "minWords": 3}
FRAGMENTS = {"startSel": "[", "stopSel": "]", "maxWords": 6, "minWords": 2, "maxFragments": 2}


@pytest.mark.parametrize("query", ['"mad scientist" -boat', "astronaut OR crocodile", "jerry mouse"])
async def test_highlights_are_ts_headline_escaped_except_the_selectors(service, db, query):
    keys = [key for key, _ in full_text_sql(db, query)[:8]]
    default = headlines_sql(db, query, keys)
    mark = headlines_sql(db, query, keys, start="<mark>", stop="</mark>", max_words=10, min_words=3)
    fragments = headlines_sql(db, query, keys, start="[", stop="]", max_words=6, min_words=2, max_fragments=2)
    data = await Gql(service.client).data(HIGHLIGHTS, {"query": query})
    hits = data["filmsFullTextSearch"]["hits"]
    assert [hit["node"]["filmId"] for hit in hits] == keys
    assert {hit["node"]["filmId"]: hit["highlight"] for hit in hits} == default
    assert {hit["node"]["filmId"]: hit["mark"] for hit in hits} == mark
    assert {hit["node"]["filmId"]: hit["fragments"] for hit in hits} == fragments
    for highlight, expected in ((True, default), (MARK, mark), (FRAGMENTS, fragments)):
        body = await rest_ok(
            service.client,
            "/rest/film/search/full-text",
            {"query": query, "first": 8, "highlight": highlight, "fields": ["filmId"]},
        )
        assert {hit["row"]["filmId"]: hit["highlight"] for hit in body["hits"]} == expected


async def test_a_highlight_escapes_the_text_but_not_the_selectors(service, db):
    """The film inserted with `&`, `<`, `"` and `'` in its text: they come out as entities, the selectors as given."""
    data = await Gql(service.client).data(
        """{ filmsFullTextSearch(query: "jerry mouse") {
               hits { node { filmId } highlight mark: highlight(startSel: "<mark>", stopSel: "</mark>") } } }"""
    )
    (hit,) = [hit for hit in data["filmsFullTextSearch"]["hits"] if hit["node"]["filmId"] == SPECIAL]
    assert hit["highlight"] == headlines_sql(db, "jerry mouse", [SPECIAL])[SPECIAL]
    assert hit["mark"] == headlines_sql(db, "jerry mouse", [SPECIAL], start="<mark>", stop="</mark>")[SPECIAL]
    assert "<b>JERRY</b>" in hit["highlight"] and "<b>Mouse</b>" in hit["highlight"]
    assert "&amp;" in hit["highlight"] and "&lt; 6" in hit["highlight"]
    assert "<mark>Mouse</mark>" in hit["mark"]
    for text, selectors in ((hit["highlight"], ("<b>", "</b>")), (hit["mark"], ("<mark>", "</mark>"))):
        bare = text.replace(selectors[0], "").replace(selectors[1], "")
        assert not set("<>\"'") & set(bare), text
    body = await rest_ok(
        service.client, "/rest/film/search/full-text", {"query": "jerry mouse", "highlight": True, "fields": ["filmId"]}
    )
    (rest_hit,) = [hit for hit in body["hits"] if hit["row"]["filmId"] == SPECIAL]
    assert rest_hit["highlight"] == hit["highlight"]


# --- first, hasMore, relations, statements -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        '{ filmsFuzzySearch(query: "love", field: TITLE, first: 51) { hasMore } }',
        '{ filmsFullTextSearch(query: "dinosaur", first: 51) { hasMore } }',
        '{ globalSearch(query: "temple", first: 51) { hasMore } }',
        '{ filmsFuzzySearch(query: "love", field: TITLE, first: 1000000) { hasMore } }',
    ],
)
async def test_first_over_the_largest_is_an_error_before_any_statement(service, query):
    before = await statements(service.client)
    response = await service.client.post("/graphql", json={"query": query})
    graphql_error(response, *TOO_MANY_CODES)
    assert await statements(service.client) == before


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/rest/film/search/fuzzy", {"query": "love", "field": "title", "first": 51}),
        ("POST", "/rest/film/search/full-text", {"query": "dinosaur", "first": 51}),
        ("POST", "/rest/search", {"query": "temple", "first": 51}),
        ("GET", "/rest/search?query=temple&first=51", None),
    ],
)
async def test_rest_first_over_the_largest_is_400(service, method, path, body):
    before = await statements(service.client)
    response = await service.client.request(method, path, json=body)
    rest_bad_input(response, *TOO_MANY_CODES)
    assert await statements(service.client) == before


async def test_first_at_the_largest_is_served(service, db):
    expected = full_text_sql(db, "astronaut OR crocodile")
    data = await Gql(service.client).data(FULL_TEXT, {"query": "astronaut OR crocodile", "first": MAX_LIMIT})
    assert_ranked(graphql_hits(data["filmsFullTextSearch"], "filmId"), expected[:MAX_LIMIT])
    assert data["filmsFullTextSearch"]["hasMore"] is True


async def test_hits_with_relations_are_read_in_one_statement(service, db):
    query = """{ filmsFullTextSearch(query: "astronaut OR crocodile", first: 20) {
                   hasMore hits { score node { filmId title language { name } originalLanguage { name } } } } }"""
    expected = full_text_sql(db, "astronaut OR crocodile")[:20]
    languages = dict(
        fetch(
            db,
            "select f.film_id, l.name from public.film f join public.language l using (language_id)"
            " where f.film_id = any(%s)",
            [[key for key, _ in expected]],
        )
    )
    before = await statements(service.client)
    data = await Gql(service.client).data(query)
    assert await statements(service.client) - before == 1
    hits = data["filmsFullTextSearch"]["hits"]
    assert_ranked(graphql_hits(data["filmsFullTextSearch"], "filmId"), expected)
    assert [hit["node"]["language"]["name"] for hit in hits] == [languages[key] for key, _ in expected]
    assert all(hit["node"]["originalLanguage"] is None for hit in hits)
    before = await statements(service.client)
    await rest_ok(service.client, "/rest/film/search/fuzzy", {"query": "love", "field": "title"})
    assert await statements(service.client) - before == 1


async def test_condition_and_filter_narrow_the_hits(service, db):
    gql = Gql(service.client)
    expected = fuzzy_sql(db, "love", where="rental_duration = 3 and length > 100")
    assert [key for key, _ in expected] == [374, 448]
    data = await gql.data(
        """{ filmsFuzzySearch(query: "love", field: TITLE, condition: {rentalDuration: 3},
                              filter: {length: {greaterThan: 100}}) { hasMore hits { score node { filmId } } } }"""
    )
    assert_ranked(graphql_hits(data["filmsFuzzySearch"], "filmId"), expected)
    assert data["filmsFuzzySearch"]["hasMore"] is False
    body = await rest_ok(
        service.client,
        "/rest/film/search/fuzzy",
        {
            "query": "love",
            "field": "title",
            "filter": {"length": {"greaterThan": 100}, "rentalDuration": {"equalTo": 3}},
        },
    )
    assert_ranked(rest_hits(body, "filmId"), expected)
    narrowed = full_text_sql(db, '"mad scientist" -boat', where="rating = 'PG' and length < 120")
    assert 0 < len(narrowed) < len(full_text_sql(db, '"mad scientist" -boat'))
    data = await gql.data(
        """{ filmsFullTextSearch(query: "\\"mad scientist\\" -boat", first: 50, condition: {rating: PG},
                                 filter: {length: {lessThan: 120}}) { hasMore hits { score node { filmId } } } }"""
    )
    assert_ranked(graphql_hits(data["filmsFullTextSearch"], "filmId"), narrowed[:50])
    body = await rest_ok(
        service.client,
        "/rest/film/search/full-text",
        {
            "query": '"mad scientist" -boat',
            "first": 50,
            "filter": {"length": {"lessThan": 120}, "rating": {"equalTo": "PG"}},
        },
    )
    assert_ranked(rest_hits(body, "filmId"), narrowed[:50])


# --- REST errors ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "body", "member"),
    [
        ("fuzzy", {"query": "love", "nope": 1}, "nope"),
        ("fuzzy", {"query": "love", "highlight": True}, "highlight"),  # full text's member, not fuzzy's
        ("fuzzy", {"query": "love", "order": "title"}, "order"),  # a list search's member: search methods rank
        ("fuzzy", {"query": "love", "after": "abc"}, "after"),
        ("full-text", {"query": "love", "minSimilarity": 0.5}, "minSimilarity"),
        ("full-text", {"query": "love", "vector": [1, 2]}, "vector"),
    ],
)
async def test_an_unknown_body_member_is_400_naming_it(service, method, body, member):
    response = await service.client.post(f"/rest/film/search/{method}", json=body)
    assert rest_bad_input(response)["field"] == member


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("fuzzy", {}),  # no query
        ("fuzzy", {"query": 5}),
        ("fuzzy", {"query": None}),
        ("fuzzy", {"query": "love", "first": "ten"}),
        ("fuzzy", {"query": "love", "first": -1}),
        ("fuzzy", {"query": "love", "first": 2.5}),
        ("fuzzy", {"query": "love", "field": "rating"}),  # no trigram index
        ("fuzzy", {"query": "love", "field": "fulltext"}),  # full text's field
        ("fuzzy", {"query": "love", "minSimilarity": "high"}),
        ("fuzzy", {"query": "love", "fields": ["nope"]}),
        ("fuzzy", {"query": "love", "filter": {"nope": {"equalTo": 1}}}),
        ("fuzzy", {"query": "love", "filter": {"length": {"around": 1}}}),
        ("fuzzy", ["love"]),
        ("full-text", {"query": "love", "highlight": "yes"}),
        ("full-text", {"query": "love", "highlight": {"startSel": "<i>", "color": "red"}}),
        ("full-text", {"query": "love", "highlight": {"maxWords": "many"}}),
        ("full-text", {"query": "love", "field": "title"}),  # fuzzy's field
    ],
)
async def test_a_bad_body_is_400_never_500(service, method, body):
    before = await statements(service.client)
    response = await service.client.post(f"/rest/film/search/{method}", json=body)
    rest_bad_input(response)
    assert await statements(service.client) == before


async def test_a_body_that_is_not_json_is_400(service):
    response = await service.client.post(
        "/rest/film/search/fuzzy", content=b'{"query": "love"', headers={"content-type": "application/json"}
    )
    rest_bad_input(response)


@pytest.mark.parametrize(
    ("path", "supported"),
    [
        ("/rest/film/search/semantic", ["fuzzy", "full-text"]),
        ("/rest/film/search/hybrid", ["fuzzy", "full-text"]),  # no vector method
        ("/rest/film/search/nearest", ["fuzzy", "full-text"]),
        ("/rest/film/search/bm25", ["fuzzy", "full-text"]),  # not served: no engine here
        ("/rest/film/search/levenshtein", ["fuzzy", "full-text"]),
        ("/rest/actor/search/full-text", ["fuzzy"]),
    ],
)
async def test_a_method_the_resource_lacks_is_404_naming_the_ones_it_has(service, path, supported):
    response = await service.client.post(path, json={"query": "love"})
    body = rest_not_found(response)
    assert sorted(body["supported"]) == sorted(supported)
    assert path.rpartition("/")[2] in body["detail"]
    assert all(method in body["detail"] for method in supported), body["detail"]


async def test_a_resource_without_search_indexes_has_no_search_methods(service):
    body = rest_not_found(await service.client.post("/rest/category/search/fuzzy", json={"query": "action"}))
    assert body["supported"] == []


# --- global search -------------------------------------------------------------------------------------------------


def global_sql(db, query: str) -> list[tuple[str, int, float]]:
    """Every table's lexical method on its default field: film's full text, actor's fuzzy last names; by score."""
    films = [("film", key, score) for key, score in full_text_sql(db, query)]
    actors = [("actor", key, score) for key, score in actor_fuzzy_sql(db, query)]
    return sorted(films + actors, key=lambda hit: -hit[2])


def assert_merged(got: list[tuple[str, int, float]], expected: list[tuple[str, int, float]], first: int) -> None:
    """The best `first` hits of both tables by score (ties across tables in any order): the same scores in the same
    order, and each hit a match with its own score."""
    assert [score for *_, score in got] == approx([score for *_, score in expected[:first]])
    scores = {(kind, key): score for kind, key, score in expected}
    assert all((kind, key) in scores for kind, key, _ in got), (got, expected)
    assert [score for *_, score in got] == approx([scores[kind, key] for kind, key, _ in got])
    assert len({(kind, key) for kind, key, _ in got}) == len(got)


@pytest.mark.parametrize(("query", "first"), [("temple", 5), ("temple", None), ("chase", 10), ("chase", 50)])
async def test_global_search_merges_the_tables_hits_by_score(service, db, query, first):
    expected = global_sql(db, query)
    assert {kind for kind, _, _ in expected} == {"film", "actor"}
    size = first if first is not None else 10
    data = await Gql(service.client).data(GLOBAL, variables(query=query, first=first))
    results = data["globalSearch"]
    keys = {"Film": ("film", "filmId"), "Actor": ("actor", "actorId")}
    got = []
    for hit in results["hits"]:
        kind, key = keys[hit["node"]["__typename"]]
        got.append((kind, hit["node"][key], hit["score"]))
    assert_merged(got, expected, size)
    assert results["hasMore"] is (len(expected) > size)
    params = f"query={query}" + (f"&first={first}" if first is not None else "")
    answers = [
        await service.client.get(f"/rest/search?{params}"),
        await service.client.post("/rest/search", json={"query": query, **variables(first=first)}),
    ]
    for response in answers:
        assert response.status_code == 200, response.text
        body = response.json()
        rows = {"film": "filmId", "actor": "actorId"}
        assert all(set(hit) == {"type", "row", "score"} for hit in body["hits"])
        assert_merged(
            [(hit["type"], hit["row"][rows[hit["type"]]], hit["score"]) for hit in body["hits"]], expected, size
        )
        assert body["hasMore"] is (len(expected) > size)


@pytest.mark.parametrize(
    ("method", "path", "body", "member"),
    [
        ("GET", "/rest/search?query=temple&nope=1", None, "nope"),
        ("POST", "/rest/search", {"query": "temple", "nope": 1}, "nope"),
        ("POST", "/rest/search", {"query": "temple", "field": "title"}, "field"),
    ],
)
async def test_global_search_refuses_unknown_members(service, method, path, body, member):
    response = await service.client.request(method, path, json=body)
    assert rest_bad_input(response)["field"] == member


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("GET", "/rest/search", None), ("POST", "/rest/search", {}), ("GET", "/rest/search?query=temple&first=x", None)],
)
async def test_global_search_needs_a_query_and_a_whole_first(service, method, path, body):
    rest_bad_input(await service.client.request(method, path, json=body))


# --- the schema, hidden columns ------------------------------------------------------------------------------------


def block(sdl: str, kind: str, name: str) -> str:
    found = re.search(rf"^{kind} {name}\b[^{{]*\{{(.*?)^\}}", sdl, re.MULTILINE | re.DOTALL)
    assert found is not None, f"{kind} {name} is not in the SDL"
    return found.group(1)


def enum_values(sdl: str, name: str) -> list[str]:
    return re.findall(r"^\s+([A-Z][A-Z0-9_]*)\s*$", block(sdl, "enum", name), re.MULTILINE)


def type_fields(sdl: str, name: str) -> list[str]:
    return re.findall(r"^  (\w+)\s*[(:]", block(sdl, "type", name), re.MULTILINE)


async def served_sdl(tmp_path, db, settings) -> str:
    dev = {**settings, "export": {"pin": "off"}}
    async with running_service(tmp_path, db, dev, mode="dev") as service:
        response = await service.client.get("/schema.graphql")
        assert response.status_code == 200, response.text
        return response.text


async def test_the_schema_has_the_search_fields_the_indexes_give(tmp_path, db):
    sdl = await served_sdl(tmp_path, db, SETTINGS)
    query = type_fields(sdl, "Query")
    assert {"filmsFuzzySearch", "filmsFullTextSearch", "actorsFuzzySearch", "globalSearch"} <= set(query)
    assert not {"filmsSemanticSearch", "filmsHybridSearch", "filmsNearestSearch", "actorsFullTextSearch"} & set(query)
    assert sorted(enum_values(sdl, "FilmFuzzyField")) == ["DESCRIPTION", "TITLE"]
    assert enum_values(sdl, "FilmFullTextField") == ["FULLTEXT"]
    assert enum_values(sdl, "ActorFuzzyField") == ["LAST_NAME"]
    assert set(type_fields(sdl, "FilmSearchResults")) == {"hits", "hasMore"}
    assert set(type_fields(sdl, "FilmSearchHit")) == {"score", "node", "highlight"}  # no distance: no nearest
    assert set(type_fields(sdl, "ActorSearchHit")) == {"score", "node"}  # no full text: no highlight
    assert set(type_fields(sdl, "GlobalSearchResults")) == {"hits", "hasMore"}
    node = re.search(r"^  node: (\w+)!$", block(sdl, "type", "GlobalSearchHit"), re.MULTILINE)
    assert node is not None
    union = re.search(rf"^union {node.group(1)} = (.+)$", sdl, re.MULTILINE)
    assert union is not None and {name.strip() for name in union.group(1).split("|")} == {"Film", "Actor"}
    assert node.group(1) == "GlobalSearchNode"  # the union of every searchable type


async def test_a_hidden_column_gives_no_search(tmp_path, db):
    """actor.last_name's trigram index is actor's only search index: hiding the column hides the search."""
    hidden = {**SETTINGS, "entities": {"actor": {"columns": {"last_name": {"omit": True}}}}}
    sdl = await served_sdl(tmp_path / "sdl", db, hidden)
    assert "actorsFuzzySearch" not in sdl and "ActorFuzzyField" not in sdl and "ActorSearchHit" not in sdl
    assert "filmsFuzzySearch" in type_fields(sdl, "Query")
    async with running_service(tmp_path / "prod", db, hidden) as service:
        rest_not_found(await service.client.post("/rest/actor/search/fuzzy", json={"query": "temple"}))
        response = await service.client.post(
            "/graphql", json={"query": '{ actorsFuzzySearch(query: "temple") { hasMore } }'}
        )
        assert response.status_code != 500 and response.json()["errors"], response.text
        body = await rest_ok(service.client, "/rest/search", {"query": "temple"})
        assert {hit["type"] for hit in body["hits"]} == {"film"}
        assert [(hit["row"]["filmId"], hit["score"]) for hit in body["hits"]] == [
            (key, pytest.approx(score, rel=1e-6)) for key, score in full_text_sql(db, "temple")
        ]
