"""Semantic and hybrid search (SPEC "Search fields", REST "Search methods"; issue 19's contract) on the embedded
PostgreSQL with pgvector (`vector_database_url`, tests/fixtures/search_vectors.sql): each answer checked against the
same ranking computed from hand-written SQL on the module's database.

`vectors.documents` (300 rows, vector(8), hnsw cosine; full text on a generated `tsv`, fuzzy on `title`) offers
fuzzy, full text, semantic and hybrid; `ip_items` and `l2_items` (100 rows, vector(4)) semantic by inner product and
by L2 distance. Expected vector rankings read every distance without ORDER BY (no index: exact), then sort by
distance and key, so an approximate index scan in the service would show.
"""

import json
import re

import pytest
from graphql import OperationDefinitionNode, parse

from svc.graphql import QueryPlanner, build_graphql_schema
from svc.sql import compile_read
from tests.search.support import (
    MAX_LIMIT,
    assert_ranked,
    graphql_error,
    graphql_hits,
    rest_bad_input,
    rest_hits,
    rest_not_found,
    rest_ok,
    statements,
    vector_literal,
)
from tests.support.debug import INIT_PLAN_VALUE, debug_explain, plan_orderings
from tests.support.graphql import Gql
from tests.support.model import read_model
from tests.support.postgres import fetch
from tests.support.service import running_service

SETTINGS = {"database": {"schemas": ["vectors"]}}
#: Near the cooking documents' centroid (axes 1 and 2), and a direction no topic has.
COOKING = [0.1, 1.0, 0.6, 0.1, 0.1, 0.1, 0.1, 0.1]
ODD = [0.5, 0.2, -0.3, 0.8, 0.0, 0.4, 0.1, -0.2]
IP_QUERY = [0.5, -0.25, 1.0, 0.75]
L2_QUERY = [5.0, 5.0, 5.0, 5.0]
#: table -> (GraphQL root, REST resource, distance operator, score of a distance).
TABLES = {
    "documents": ("documentsSemanticSearch", "documents", "<=>", lambda d: 1 - d),
    "ip_items": ("ipItemsSemanticSearch", "ip_items", "<#>", lambda d: -d),
    "l2_items": ("l2ItemsSemanticSearch", "l2_items", "<->", lambda d: 1 / (1 + d)),
}


@pytest.fixture
async def service(tmp_path, vector_database_url):
    async with running_service(tmp_path, vector_database_url, SETTINGS) as service:
        yield service


def semantic_sql(db, table: str, vector, where: str = "true") -> list[tuple[int, float]]:
    """Every row of `table` passing `where`, nearest first (ties by key), with its score."""
    _, _, operator, score = TABLES[table]
    rows = fetch(
        db, f"select id, embedding {operator} %s::vector from vectors.{table} where {where}", [vector_literal(vector)]
    )
    return [(key, score(distance)) for key, distance in sorted(rows, key=lambda row: (row[1], row[0]))]


def semantic_query(table: str, arguments: str = "") -> str:
    root = TABLES[table][0]
    return (
        f"query($vector: [Float!]!, $first: Int) {{ {root}(vector: $vector, first: $first{arguments}) {{"
        " hasMore hits { score node { rowId } } } }"
    )


def embedding_of(db, key: int) -> list[float]:
    ((text,),) = fetch(db, "select embedding::text from vectors.documents where id = %s", [key])
    return [float(part) for part in text.strip("[]").split(",")]


# --- semantic ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "vector", "first"),
    [
        ("documents", COOKING, 10),
        ("documents", ODD, None),  # the default page
        ("documents", COOKING, MAX_LIMIT),  # more than an hnsw scan's default ef_search (40) returns
        ("ip_items", IP_QUERY, 10),
        ("ip_items", [-1.0, 0.0, 0.5, -0.5], 25),
        ("l2_items", L2_QUERY, 10),
        ("l2_items", [1.0, 9.0, 2.0, 8.0], 3),
    ],
)
async def test_semantic_scores_follow_the_operator_class(service, vector_database_url, table, vector, first):
    expected = semantic_sql(vector_database_url, table, vector)
    size = first if first is not None else 10
    variables = {"vector": vector, **({"first": first} if first is not None else {})}
    data = await Gql(service.client).data(semantic_query(table), variables)
    results = data[TABLES[table][0]]
    assert_ranked(graphql_hits(results), expected[:size])
    assert results["hasMore"] is True  # every row has a score
    body = await rest_ok(
        service.client,
        f"/rest/{TABLES[table][1]}/search/semantic",
        {"vector": vector, "fields": ["id"], **({"first": first} if first is not None else {})},
    )
    assert_ranked(rest_hits(body), expected[:size])
    assert body["hasMore"] is True
    assert all(set(hit) == {"score", "row"} for hit in body["hits"])


async def test_the_field_can_be_named(service, vector_database_url):
    expected = semantic_sql(vector_database_url, "documents", ODD)[:5]
    data = await Gql(service.client).data(
        semantic_query("documents", ", field: EMBEDDING"), {"vector": ODD, "first": 5}
    )
    assert_ranked(graphql_hits(data["documentsSemanticSearch"]), expected)
    body = await rest_ok(
        service.client, "/rest/documents/search/semantic", {"vector": ODD, "field": "embedding", "first": 5}
    )
    assert_ranked(rest_hits(body), expected)


async def test_equal_vectors_tie_and_the_key_breaks_the_tie(service, vector_database_url):
    """Documents 41 and 42 share their embedding: searching with it finds both first, 41 before 42."""
    vector = embedding_of(vector_database_url, 41)
    expected = semantic_sql(vector_database_url, "documents", vector)[:4]
    assert [key for key, _ in expected[:2]] == [41, 42]
    data = await Gql(service.client).data(semantic_query("documents"), {"vector": vector, "first": 4})
    assert_ranked(graphql_hits(data["documentsSemanticSearch"]), expected)
    body = await rest_ok(service.client, "/rest/documents/search/semantic", {"vector": vector, "first": 4})
    assert_ranked(rest_hits(body), expected)


@pytest.mark.parametrize(
    ("table", "vector", "kept"),
    [("documents", COOKING, 8), ("ip_items", IP_QUERY, 6), ("l2_items", L2_QUERY, 12)],
)
async def test_min_score_keeps_rows_scoring_at_least_it(service, vector_database_url, table, vector, kept):
    everything = semantic_sql(vector_database_url, table, vector)
    minimum = (everything[kept - 1][1] + everything[kept][1]) / 2  # between two scores: no rounding at the edge
    expected = [(key, score) for key, score in everything if score >= minimum]
    assert len(expected) == kept
    gql = Gql(service.client)
    query = semantic_query(table, ", minScore: $min").replace("$first: Int", "$first: Int, $min: Float")
    for first, more in ((20, False), (kept - 2, True)):
        data = await gql.data(query, {"vector": vector, "first": first, "min": minimum})
        results = data[TABLES[table][0]]
        assert_ranked(graphql_hits(results), expected[:first])
        assert results["hasMore"] is more
        body = await rest_ok(
            service.client,
            f"/rest/{TABLES[table][1]}/search/semantic",
            {"vector": vector, "minScore": minimum, "first": first},
        )
        assert_ranked(rest_hits(body), expected[:first])
        assert body["hasMore"] is more


async def test_a_filter_narrows_the_rows_before_the_nearest_are_taken(service, vector_database_url):
    """Only documents 1-59 and a title word: the best 20 of those, however far the others' nearest lie."""
    expected = semantic_sql(vector_database_url, "documents", COOKING, "id < 60 and title not like 'The %%'")
    data = await Gql(service.client).data(
        semantic_query("documents", ', filter: {rowId: {lessThan: 60}, title: {notLike: "The %"}}'),
        {"vector": COOKING, "first": 20},
    )
    assert_ranked(graphql_hits(data["documentsSemanticSearch"]), expected[:20])
    body = await rest_ok(
        service.client,
        "/rest/documents/search/semantic",
        {"vector": COOKING, "first": 20, "filter": {"id": {"lessThan": 60}, "title": {"notLike": "The %"}}},
    )
    assert_ranked(rest_hits(body), expected[:20])


async def test_a_semantic_search_is_one_statement(service):
    before = await statements(service.client)
    await Gql(service.client).data(semantic_query("documents"), {"vector": COOKING})
    assert await statements(service.client) - before == 1


@pytest.mark.parametrize(
    ("arguments", "plans"),
    [
        ("", "force_generic_plan"),
        (", first: 50", "force_generic_plan"),
        (", filter: {rowId: {lessThan: 60}}", "auto"),
        (", minScore: 0.5", "auto"),
    ],
)
async def test_a_plain_nearest_vector_search_is_planned_once(tmp_path, vector_database_url, arguments, plans):
    """Its plan is the index's ordered scan whatever the vector and `first` (`searched_once`); with a filter or a
    least score, the plan is PostgreSQL's choice, as for any search. (What the executor does with it:
    tests/db/test_executor.py; that the answers are the exact ones: the tests above, planned so.)"""
    config, model = await read_model(vector_database_url, tmp_path, SETTINGS)
    schema = build_graphql_schema(model).schema
    document = f"{{ documentsSemanticSearch(vector: {json.dumps(COOKING)}{arguments}) {{ hits {{ score }} }} }}"
    (operation,) = parse(document).definitions
    assert isinstance(operation, OperationDefinitionNode)
    planned = QueryPlanner(schema, model, config.limits).plan(operation, {}, {})
    assert compile_read(planned.plan).plans == plans


@pytest.mark.parametrize("arguments", ["", ", filter: {rowId: {lessThan: 60}}"])
async def test_the_vector_is_read_once_per_statement(tmp_path, vector_database_url, arguments):
    """The query vector is an InitPlan's value, which the index's ordering (or the sort) reads: not a cast of the
    parameter, which a plan made once would compute again for every row it scores."""
    settings = {**SETTINGS, "dev": {"debug": {"explain": True}}}
    async with running_service(tmp_path, vector_database_url, settings, mode="dev") as service:
        response = await service.client.post(
            "/graphql", json={"query": semantic_query("documents", arguments), "variables": {"vector": COOKING}}
        )
        assert response.status_code == 200, response.text
        (explained,) = await debug_explain(service.client, response)
        distances = [ordering for ordering in plan_orderings(explained["plan"]) if "<=>" in ordering]
        assert distances, explained["plan"]
        assert all(re.search(rf"<=> {INIT_PLAN_VALUE}\)", distance) for distance in distances), distances


# --- hybrid --------------------------------------------------------------------------------------------------------


def hybrid_expected(
    db,
    query: str,
    vector,
    first: int,
    *,
    lexical_weight: float = 1.0,
    vector_weight: float = 1.0,
    k: float = 60,
    where: str = "true",
) -> tuple[list[tuple[int, float]], bool]:
    """The contract's fusion, computed here: the best max(50, first + 1) full-text matches by ts_rank and the
    nearest as many rows by cosine distance (both among rows passing `where`, ties by key), each ranked 1, 2, ...;
    a row scores weight / (k + rank) per ranking it is in. Returns the best `first` and whether more were fused."""
    candidates = max(50, first + 1)
    lexical = fetch(
        db,
        "select id from vectors.documents, websearch_to_tsquery('english', %s) q"
        f" where tsv @@ q and ({where}) order by ts_rank(tsv, q) desc, id limit %s",
        [query, candidates],
    )
    nearest = semantic_sql(db, "documents", vector, where)[:candidates]
    fused: dict[int, float] = {}
    for rank, (key,) in enumerate(lexical, 1):
        fused[key] = fused.get(key, 0.0) + lexical_weight / (k + rank)
    for rank, (key, _) in enumerate(nearest, 1):
        fused[key] = fused.get(key, 0.0) + vector_weight / (k + rank)
    ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:first], len(ranked) > first


HYBRID_CASES = {
    "both rankings agree": {"query": "bread", "vector": COOKING, "first": 10},
    "they disagree": {"query": "telescope", "vector": COOKING, "first": 10},  # astronomy by text, cooking by vector
    "no lexical candidate": {"query": "nothingmatchesthis", "vector": ODD, "first": 5},
    "weights and k": {
        "query": "telescope",
        "vector": COOKING,
        "first": 8,
        "graphql": ", lexicalWeight: 2.0, vectorWeight: 0.5, rrfK: 10",
        "rest": {"lexicalWeight": 2.0, "vectorWeight": 0.5, "rrfK": 10},
        "expected": {"lexical_weight": 2.0, "vector_weight": 0.5, "k": 10},
    },
    "51 candidates per ranking": {"query": "garden OR harbor", "vector": ODD, "first": MAX_LIMIT},
    "filtered": {
        "query": "oven OR star",
        "vector": ODD,
        "first": 10,
        "graphql": ", filter: {rowId: {lessThan: 150}}",
        "rest": {"filter": {"id": {"lessThan": 150}}},
        "expected": {"where": "id < 150"},
    },
    "no vector weight": {
        "query": "soup",
        "vector": COOKING,
        "first": 6,
        "graphql": ", vectorWeight: 0",
        "rest": {"vectorWeight": 0},
        "expected": {"vector_weight": 0.0},
    },
}


@pytest.mark.parametrize("case", HYBRID_CASES.values(), ids=HYBRID_CASES.keys())
async def test_hybrid_fuses_reciprocal_ranks(service, vector_database_url, case):
    query, vector, first = case["query"], case["vector"], case["first"]
    expected, more = hybrid_expected(vector_database_url, query, vector, first, **case.get("expected", {}))
    data = await Gql(service.client).data(
        "query($query: String!, $vector: [Float!]!) {"
        f" documentsHybridSearch(query: $query, vector: $vector, first: {first}{case.get('graphql', '')})"
        " { hasMore hits { score node { rowId } } } }",
        {"query": query, "vector": vector},
    )
    results = data["documentsHybridSearch"]
    assert_ranked(graphql_hits(results), expected)
    assert results["hasMore"] is more
    body = await rest_ok(
        service.client,
        "/rest/documents/search/hybrid",
        {"query": query, "vector": vector, "first": first, "fields": ["id", "title"], **case.get("rest", {})},
    )
    assert_ranked(rest_hits(body), expected)
    assert body["hasMore"] is more


# --- full text with highlights from a generated column --------------------------------------------------------------


async def test_full_text_on_a_generated_column_highlights_its_expression(service, vector_database_url):
    """`tsv` is generated from `to_tsvector('english', title || ' ' || body)`: that configuration ranks, and that
    text is highlighted (the titles' `&` escaped)."""
    query = "island voyage"
    rows = fetch(
        vector_database_url,
        "select id, ts_rank(tsv, q), ts_headline('english', title || ' ' || body, q, 'StartSel=\x01, StopSel=\x02')"
        " from vectors.documents, websearch_to_tsquery('english', %s) q where tsv @@ q order by 2 desc, id limit 10",
        [query],
    )
    assert any("&" in headline for _, _, headline in rows)
    expected = [(key, rank) for key, rank, _ in rows]
    headlines = {key: escape(text).replace("\x01", "<b>").replace("\x02", "</b>") for key, _, text in rows}
    data = await Gql(service.client).data(
        '{ documentsFullTextSearch(query: "island voyage") { hits { score highlight node { rowId } } } }'
    )
    hits = data["documentsFullTextSearch"]["hits"]
    assert_ranked(graphql_hits(data["documentsFullTextSearch"]), expected)
    assert {hit["node"]["rowId"]: hit["highlight"] for hit in hits} == headlines
    body = await rest_ok(
        service.client, "/rest/documents/search/full-text", {"query": query, "highlight": True, "fields": ["id"]}
    )
    assert {hit["row"]["id"]: hit["highlight"] for hit in body["hits"]} == headlines


def escape(text: str) -> str:
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;")):
        text = text.replace(raw, entity)
    return text


# --- bad vectors ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        # wrong dimensions
        ("/rest/documents/search/semantic", {"vector": [1.0] * 7}),
        ("/rest/documents/search/semantic", {"vector": [1.0] * 9}),
        ("/rest/ip_items/search/semantic", {"vector": [1.0, 2.0, 3.0]}),
        ("/rest/l2_items/search/semantic", {"vector": [1.0] * 8}),
        ("/rest/documents/search/hybrid", {"query": "bread", "vector": [1.0] * 4}),
        # not a list of numbers
        ("/rest/documents/search/semantic", {"vector": ["a"] * 8}),
        ("/rest/documents/search/semantic", {"vector": ["1"] * 8}),
        ("/rest/documents/search/semantic", {"vector": "[1,2,3,4,5,6,7,8]"}),
        ("/rest/documents/search/semantic", {"vector": []}),
        ("/rest/documents/search/semantic", {"vector": None}),
        ("/rest/documents/search/semantic", {"vector": [[1.0] * 8]}),
        ("/rest/documents/search/semantic", {"vector": [True] * 8}),
        ("/rest/documents/search/semantic", {"vector": [None] * 8}),
        ("/rest/documents/search/semantic", {"vector": {"0": 1}}),
        ("/rest/documents/search/semantic", {}),
        ("/rest/documents/search/semantic", {"vector": COOKING, "minScore": "high"}),
        ("/rest/documents/search/hybrid", {"vector": COOKING}),  # no query
        ("/rest/documents/search/hybrid", {"query": 5, "vector": COOKING}),
        ("/rest/documents/search/hybrid", {"query": "bread", "vector": COOKING, "rrfK": "sixty"}),
        ("/rest/documents/search/hybrid", {"query": "bread", "vector": COOKING, "lexicalWeight": [1]}),
    ],
)
async def test_a_bad_vector_is_400_before_any_statement(service, path, body):
    before = await statements(service.client)
    rest_bad_input(await service.client.post(path, json=body))
    assert await statements(service.client) == before


@pytest.mark.parametrize(
    "raw",
    [
        b'{"vector": [NaN, 0.5, 0.25, 1, 0, 0, 0, 0]}',
        b'{"vector": [Infinity, 0.5, 0.25, 1, 0, 0, 0, 0]}',
        b'{"vector": [0, 0.5, 0.25, 1, 0, 0, 0, -Infinity]}',
        b'{"vector": [1e999, 0.5, 0.25, 1, 0, 0, 0, 0]}',
        b'{"vector": [0, 0.5, 0.25, 1, 0, 0, 0, -1e999]}',
        b'{"vector": [0, 0.5, 0.25, 1, 0, 0, 0, 0], "minScore": NaN}',
        b'{"query": "bread", "vector": [NaN, 0.5, 0.25, 1, 0, 0, 0, 0]}',
        b'{"query": "bread", "vector": [0, 0.5, 0.25, 1, 0, 0, 0, 0], "vectorWeight": 1e999}',
    ],
)
async def test_nan_and_infinity_are_400_never_500(service, raw):
    method = "hybrid" if b'"query"' in raw else "semantic"
    before = await statements(service.client)
    response = await service.client.post(
        f"/rest/documents/search/{method}", content=raw, headers={"content-type": "application/json"}
    )
    rest_bad_input(response)
    assert await statements(service.client) == before


SEMANTIC = "query($v: [Float!]!) { documentsSemanticSearch(vector: $v) { hits { score } } }"
HYBRID = 'query($v: [Float!]!) { documentsHybridSearch(query: "bread", vector: $v%s) { hits { score } } }'


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        # variables as JSON text: NaN and Infinity tokens, 1e999 (read as infinity)
        (SEMANTIC, '{"v": [NaN, 0.5, 0.25, 1, 0, 0, 0, 0]}'),
        (SEMANTIC, '{"v": [1e999, 0.5, 0.25, 1, 0, 0, 0, 0]}'),
        (SEMANTIC, '{"v": [0, 0.5, 0.25, 1, 0, 0, 0, -Infinity]}'),
        (SEMANTIC, '{"v": [1, 2, 3]}'),
        (SEMANTIC, '{"v": ["a", 0.5, 0.25, 1, 0, 0, 0, 0]}'),
        (HYBRID % "", '{"v": [1, 2, 3, 4, 5, 6, 7, 8, 9]}'),
        (HYBRID % ", vectorWeight: 1e999", '{"v": [0, 0.5, 0.25, 1, 0, 0, 0, 0]}'),
        # literals in the document
        ("{ documentsSemanticSearch(vector: [1e999, 0.5, 0.25, 1, 0, 0, 0, 0]) { hits { score } } }", None),
        ("{ documentsSemanticSearch(vector: [0, 0.5, 0.25, 1, 0, 0, 0, 0, 2]) { hits { score } } }", None),
        ("{ ipItemsSemanticSearch(vector: [1, 2]) { hits { score } } }", None),
        ("{ l2ItemsSemanticSearch(vector: [1, 2, 3, -1e999]) { hits { score } } }", None),
    ],
)
async def test_graphql_refuses_bad_vectors_as_bad_user_input(service, query, variables):
    raw = '{"query": ' + json.dumps(query) + (f', "variables": {variables}' if variables else "") + "}"
    before = await statements(service.client)
    response = await service.client.post("/graphql", content=raw.encode(), headers={"content-type": "application/json"})
    graphql_error(response)
    assert await statements(service.client) == before


# --- methods and hidden columns ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "supported"),
    [
        ("/rest/ip_items/search/hybrid", ["semantic"]),  # no lexical method: no hybrid
        ("/rest/l2_items/search/fuzzy", ["semantic"]),
        ("/rest/documents/search/nearest", ["fuzzy", "full-text", "semantic", "hybrid"]),
        ("/rest/documents/search/bm25", ["fuzzy", "full-text", "semantic", "hybrid"]),
        ("/rest/hidden_docs/search/semantic", ["fuzzy"]),
    ],
)
async def test_a_method_the_resource_lacks_is_404(service, path, supported):
    body = rest_not_found(await service.client.post(path, json={"vector": [1.0] * 4, "query": "x"}))
    assert sorted(body["supported"]) == sorted(supported)


async def sdl_of(directory, url, settings) -> str:
    async with running_service(directory, url, {**settings, "export": {"pin": "off"}}, mode="dev") as service:
        response = await service.client.get("/schema.graphql")
        assert response.status_code == 200, response.text
        return response.text


async def test_a_hidden_column_gives_no_search(tmp_path, vector_database_url):
    """hidden_docs' only search index reads `secret`: hidden, it gives no fuzzy search (and documents keep theirs)."""
    shown = await sdl_of(tmp_path / "shown", vector_database_url, SETTINGS)
    assert "hiddenDocsFuzzySearch(" in shown and "ipItemsSemanticSearch(" in shown
    assert "ipItemsHybridSearch" not in shown and "ipItemsFuzzySearch" not in shown
    hidden = {**SETTINGS, "entities": {"hidden_docs": {"columns": {"secret": {"omit": True}}}}}
    sdl = await sdl_of(tmp_path / "hidden", vector_database_url, hidden)
    assert "hiddenDocsFuzzySearch" not in sdl and "HiddenDocFuzzyField" not in sdl
    assert "documentsHybridSearch(" in sdl
    async with running_service(tmp_path / "prod", vector_database_url, hidden) as service:
        body = rest_not_found(await service.client.post("/rest/hidden_docs/search/fuzzy", json={"query": "alpha"}))
        assert body["supported"] == []
