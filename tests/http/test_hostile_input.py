"""Hostile input (SPEC "Limits", "Errors" -> masking): whatever a client sends, the answer is a typed 4xx (or a
normal answer), never a 500, and in the masked mode never the database's text, a stack or SQL."""

import json
import re

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["writes.sql"]
SETTINGS = {"database": {"schemas": ["app"]}, "limits": {"request_body_bytes": 65536}}

#: What the database or Python would say if their text leaked into an answer.
LEAKS = re.compile(
    r"Traceback|psycopg|SQLSTATE|syntax error at|violates|relation \"|column \"|pg_catalog|select .* from|"
    r"json_build_object|Exception",
    re.IGNORECASE,
)


def assert_safe(status: int, text: str) -> None:
    assert status < 500, text
    assert not LEAKS.search(text), text


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


async def raw(gql, body: bytes, content_type: str = "application/json"):
    response = await gql.client.post("/graphql", content=body, headers={"Content-Type": content_type})
    return response.status_code, response.text


async def test_deeply_nested_json_bodies(gql):
    for body in (b"[" * 30_000 + b"]" * 30_000, b'{"query": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"):
        status, text = await raw(gql, body)
        assert status == 400, text
        assert_safe(status, text)


async def test_deeply_nested_variables(gql):
    for depth in (200, 5000):
        nested = '{"a": ' * depth + '"x"' + "}" * depth
        body = '{"query": "query($v: JSON) { __typename }", "variables": {"v": ' + nested + "}}"
        status, text = await raw(gql, body.encode())
        assert status == 400, text
        assert "nested more than" in text


async def test_deeply_nested_documents(gql):
    for query in ("{ customers " + "{ orders " * 3000 + "}" * 3001, "{" * 60_000, "query { " + "a: " * 20_000):
        status, text = await raw(gql, json.dumps({"query": query}).encode())
        assert 400 <= status < 500, text
        assert_safe(status, text)


async def test_invalid_utf8_and_nul_bytes(gql):
    for body in (b'{"query": "{ tags { label } }\xff"}', b"\xc3\x28", b'{"query": "{ tags { label } }\x00"}'):
        status, text = await raw(gql, body)
        assert status == 400, text
        assert_safe(status, text)
    status, text = await raw(
        gql, json.dumps({"query": 'mutation { createTag(input: {label: "a\\u0000b"}) { tag { rowId } } }'}).encode()
    )
    assert_safe(status, text)
    assert "BAD_USER_INPUT" in text, text


async def test_malformed_cursors_global_ids_and_identifiers(gql):
    queries = [
        '{ tagsConnection(after: "not-a-cursor") { totalCount } }',
        '{ tagsConnection(after: "eyJ4IjogMX0=") { totalCount } }',
        '{ node(id: "\'; drop table app.tags; --") { id } }',
        '{ node(id: "WyJUYWciLCAiMSBvciAxPTEiXQ==") { id } }',
        '{ tags(orderBy: ["label; drop table app.tags"]) { label } }',
        '{ tags(filter: {label: {likeRegex: "("}}) { label } }',
    ]
    for query in queries:
        status, text = await raw(gql, json.dumps({"query": query}).encode())
        assert_safe(status, text)


# --- fuzzing -------------------------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
FIELDS = st.sampled_from(
    [
        "tags(first: $a) { label }",
        "tagsConnection(first: $a, after: $b) { totalCount edges { cursor } }",
        "customers(filter: $a) { email }",
        "node(id: $b) { id }",
        "customer(rowId: $a) { name }",
        "checkedPrice(amount: $b)",
    ]
)
MUTATIONS = st.sampled_from(
    [
        "createTag(input: $a) { tag { rowId } }",
        "updateCustomers(where: $a, set: {nickname: $b}) { affectedCount }",
        "createOrder(input: $a) { order { rowId } }",
        "divide(a: $a, b: $a)",
        "refuse(message: $b, status: $b)",
    ]
)


@st.composite
def requests(draw) -> bytes:
    kind = draw(st.sampled_from(["query", "mutation", "junk"]))
    if kind == "junk":
        return draw(st.binary(max_size=200))
    field = draw(FIELDS if kind == "query" else MUTATIONS)
    document = f"{kind}($a: JSON, $b: String) {{ {field} }}"
    # The declared types are deliberately loose: coercion errors are part of what is fuzzed.
    document = draw(
        st.sampled_from([document, document.replace("JSON", "Int"), document.replace("$a: JSON", "$a: CustomerFilter")])
    )
    variables = {"a": draw(JSON_VALUES), "b": draw(st.one_of(st.text(max_size=30), JSON_VALUES))}
    members = {"query": document, "variables": variables}
    if draw(st.booleans()):
        members[draw(st.text(max_size=10))] = draw(JSON_VALUES)
    return json.dumps(members).encode()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(requests(), min_size=1, max_size=1))
def test_fuzzed_requests_never_fail_the_server_or_leak(tmp_path, database_url, bodies):
    async def send() -> list[tuple[int, str]]:
        async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
            return [await raw(gql, body) for body in bodies]

    for status, text in trio.run(send):
        assert_safe(status, text)
