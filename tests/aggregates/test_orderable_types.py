"""min and max of orderable types PostgreSQL has no min() or max() of (SPEC "Aggregates": uuid, boolean with false
below true, mac addresses, ltree, case-insensitive text; ranges by range order), NULLs left out; and distinctCount
of them."""

from tests.support.graphql import graphql_service

DATABASE_FIXTURES = ["aggregates.sql"]
SETTINGS = {"database": {"schemas": ["app_public"]}}


async def test_min_and_max_follow_each_types_order(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        data = await gql.data(
            """{ gadgetsConnection { aggregates {
              min { shipped token mac span { start { value } end { value } } label path code }
              max { shipped token mac span { start { value } end { value } } label path code }
              distinctCount { shipped token label } } } }"""
        )
    got = data["gadgetsConnection"]["aggregates"]
    assert got["min"] == {
        "shipped": False,
        "token": "a0000000-0000-0000-0000-000000000000",
        "mac": "08:00:2b:01:02:01",
        "span": {"start": {"value": 1}, "end": {"value": 2}},
        "label": "a",
        "path": "top",  # an ancestor sorts before its descendants
        "code": "ALPHA",  # case-insensitive: ALPHA < beta < Gamma
    }
    assert got["max"] == {
        "shipped": True,
        "token": "c0000000-0000-0000-0000-000000000000",
        "mac": "08:00:2b:01:02:09",
        "span": {"start": {"value": 5}, "end": {"value": 9}},
        "label": "b",
        "path": "top.b",  # ltree order: top < top.a.z < top.b
        "code": "Gamma",
    }
    assert got["distinctCount"] == {"shipped": 2, "token": 3, "label": 2}
