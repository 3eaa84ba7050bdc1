"""Edge window values (SPEC "Connection objects"): rowNumber, rank, denseRank, percentRank and runningSum, with
partitionBy, computed over every row the connection selects in its order, so a later page continues the earlier
pages' numbers; ranks compare the orderBy values only. Checked against the same window functions in SQL."""

import decimal
import math

import psycopg
import pytest

from tests.support.graphql import graphql_service
from tests.support.postgres import PAGILA

DATABASE_FIXTURES = PAGILA
SETTINGS = {"database": {"schemas": ["public"]}}

PAGE = """query($after: Cursor, $last: Int, $before: Cursor, $first: Int) {
  paymentsConnection(first: $first, after: $after, last: $last, before: $before, orderBy: [AMOUNT_DESC],
                     filter: {customerId: {lessThan: 4}}) {
    edges { cursor node { paymentId amount } rowNumber rank denseRank percentRank runningSum { amount customerId }
            byCustomer: rowNumber(partitionBy: [CUSTOMER_ID]) monthRank: rank(partitionBy: [PAYMENT_DATE_TRUNCATED_TO_MONTH]) }
    pageInfo { endCursor startCursor }
  }
}"""
EXPECTED = """
select payment_id,
  row_number() over (order by amount desc, payment_date, payment_id),
  rank() over (order by amount desc), dense_rank() over (order by amount desc),
  percent_rank() over (order by amount desc),
  sum(amount) over (order by amount desc, payment_date, payment_id rows between unbounded preceding and current row),
  sum(customer_id) over (order by amount desc, payment_date, payment_id rows between unbounded preceding and current row),
  row_number() over (partition by customer_id order by amount desc, payment_date, payment_id),
  rank() over (partition by date_trunc('month', payment_date) order by amount desc)
from payment where customer_id < 4 order by amount desc, payment_date, payment_id"""


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


def expected(database_url) -> list[tuple]:
    with psycopg.connect(database_url) as conn:
        conn.execute("set timezone = 'UTC'")
        return conn.execute(EXPECTED).fetchall()


def values(edge) -> tuple:
    return (
        edge["node"]["paymentId"],
        edge["rowNumber"],
        edge["rank"],
        edge["denseRank"],
        edge["percentRank"],
        decimal.Decimal(edge["runningSum"]["amount"]),
        int(edge["runningSum"]["customerId"]),
        edge["byCustomer"],
        edge["monthRank"],
    )


def same(got: list[tuple], want: list[tuple]) -> bool:
    return len(got) == len(want) and all(
        g[:4] == w[:4] and math.isclose(g[4], w[4]) and g[5:] == tuple(w[5:]) for g, w in zip(got, want, strict=True)
    )


async def test_pages_continue_the_numbers_of_the_pages_before(gql, database_url):
    want = expected(database_url)
    got, after = [], None
    while True:
        connection = (await gql.data(PAGE, {"first": 20, "after": after}))["paymentsConnection"]
        got += [values(edge) for edge in connection["edges"]]
        if not connection["edges"]:
            break
        after = connection["pageInfo"]["endCursor"]
    assert same(got, want)
    assert got[25][1] == 26  # the second page goes on counting


async def test_reading_backward_numbers_rows_in_the_connections_order(gql, database_url):
    want = expected(database_url)
    connection = (await gql.data(PAGE, {"last": 7}))["paymentsConnection"]
    assert same([values(edge) for edge in connection["edges"]], want[-7:])
    before = connection["pageInfo"]["startCursor"]
    earlier = (await gql.data(PAGE, {"last": 5, "before": before}))["paymentsConnection"]
    assert same([values(edge) for edge in earlier["edges"]], want[-12:-7])


async def test_binned_keys_do_not_partition(gql):
    response = await gql.post("{ paymentsConnection(first: 1) { edges { rowNumber(partitionBy: [AMOUNT_BINNED]) } } }")
    (error,) = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"


async def test_rest_lists_carry_each_rows_window(tmp_path, database_url):
    """REST `window=`, `partition=` (with a unit), `running=`: each row's `_window`, across pages too."""
    from tests.support.rest import rest_service

    want = expected(database_url)
    base = "/rest/payment?filter[customerId][lt]=4&order=-amount&window=rowNumber,rank,denseRank,percentRank"
    async with rest_service(tmp_path, database_url, SETTINGS) as rest:
        got, after = [], None
        while True:
            url = f"{base}&running=amount,customerId&first=15" + (f"&after={after}" if after else "")
            response = await rest.get(url, headers={"Prefer": "count=exact"})
            assert response.status_code == 200, response.text
            rows = response.json()
            if not rows:
                break
            for row in rows:
                window = row["_window"]
                got.append(
                    (row["paymentId"], window["rowNumber"], window["rank"], window["denseRank"],
                     window["percentRank"], decimal.Decimal(window["runningSum"]["amount"]),
                     int(window["runningSum"]["customerId"]))
                )  # fmt: skip
            next_link = response.headers.get("link", "")
            if 'rel="next"' not in next_link:
                break
            after = next_link.split("after=")[1].split("&")[0].split(">")[0]
        assert len(got) == len(want)
        assert all(
            g[:4] == w[:4] and math.isclose(g[4], w[4]) and g[5:] == tuple(w[5:7])
            for g, w in zip(got, want, strict=True)
        )
        monthly = await rest.get(f"{base}&partition=paymentDate:month&first=100")
        ranks = [row["_window"]["rank"] for row in monthly.json()]
        assert ranks == [w[8] for w in want][: len(ranks)]
        for query, field in (
            ("window=median", "window"),
            ("partition=amount", "partition"),
            ("window=rank&partition=title", "partition"),
            ("running=paymentDate", "running"),
            ("window=rank&partition=amount:month", "partition"),
        ):
            bad = await rest.get(f"/rest/payment?{query}")
            assert bad.status_code == 400 and bad.json()["field"] == field, (query, bad.text)
        row = await rest.get("/rest/actor/1?window=rank")
        assert row.status_code == 400 and row.json()["field"] == "window"
