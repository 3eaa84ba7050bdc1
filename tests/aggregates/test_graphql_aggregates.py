"""GraphQL aggregates (SPEC "Aggregates"): every member of `aggregates` and `groupedAggregates` on pagila, each
checked against the same aggregate written by hand in SQL; truncated, binned and time-zoned keys, `having`,
`fillGaps`, filters, nested connections, TOO_MANY_GROUPS, and the bad inputs."""

import datetime
import decimal
import math

import pytest

from tests.aggregates.support import rows
from tests.support.graphql import graphql_service
from tests.support.postgres import PAGILA

DATABASE_FIXTURES = PAGILA
SETTINGS = {"database": {"schemas": ["public"]}, "limits": {"groups": 200}}


@pytest.fixture
async def gql(tmp_path, database_url):
    async with graphql_service(tmp_path, database_url, SETTINGS) as gql:
        yield gql


def number(text: str | None) -> decimal.Decimal | None:
    return None if text is None else decimal.Decimal(text)


async def test_every_member_over_the_whole_connection(gql, db):
    data = await gql.data(
        """{ paymentsConnection(first: 1) { totalCount nodes { paymentId } aggregates {
          count sum { amount customerId } avg { amount } min { amount paymentDate } max { amount paymentDate }
          distinctCount { customerId staffId } stddevSample { amount } stddevPopulation { amount }
          varianceSample { amount } variancePopulation { amount } median { amount }
          p90: percentile(fraction: 0.9) { amount } p0: percentile(fraction: 0) { amount } } } }"""
    )
    connection = data["paymentsConnection"]
    got = connection["aggregates"]
    ((count, total, customers, avg, low, first, high, last, distinct, staff, sd, sdp, var, varp, median, p90, p0),) = (
        rows(
            db,
            "select count(*), sum(amount), sum(customer_id), avg(amount), min(amount), min(payment_date), max(amount),"
            " max(payment_date), count(distinct customer_id), count(distinct staff_id), stddev_samp(amount),"
            " stddev_pop(amount), var_samp(amount), var_pop(amount),"
            " percentile_cont(0.5) within group (order by amount::float8),"
            " percentile_cont(0.9) within group (order by amount::float8),"
            " percentile_cont(0) within group (order by amount::float8) from payment",
        )
    )
    assert connection["totalCount"] == count == got["count"]
    assert len(connection["nodes"]) == 1  # the page is cut; the aggregates are not
    assert number(got["sum"]["amount"]) == total
    assert got["sum"]["customerId"] == str(customers)  # a sum of integers is a BigInt string
    assert number(got["avg"]["amount"]) == avg
    assert number(got["min"]["amount"]) == low and number(got["max"]["amount"]) == high
    assert datetime.datetime.fromisoformat(got["min"]["paymentDate"]) == first
    assert datetime.datetime.fromisoformat(got["max"]["paymentDate"]) == last
    assert got["distinctCount"] == {"customerId": distinct, "staffId": staff}
    assert number(got["stddevSample"]["amount"]) == sd
    assert number(got["stddevPopulation"]["amount"]) == sdp
    assert number(got["varianceSample"]["amount"]) == var
    assert number(got["variancePopulation"]["amount"]) == varp
    assert math.isclose(got["median"]["amount"], median)
    assert math.isclose(got["p90"]["amount"], p90) and math.isclose(got["p0"]["amount"], p0)


async def test_min_and_max_of_types_without_their_own(gql, db):
    """Booleans (PostgreSQL has no min(boolean)) and enums in their order (SPEC: min/max of every orderable column);
    false below true is shown on a table with both (tests/aggregates/test_orderable_types.py)."""
    data = await gql.data(
        "{ customersConnection { aggregates { min { activebool } max { activebool } } }"
        " filmsConnection { aggregates { min { rating } max { rating } } } }"
    )
    ((every, some),) = rows(db, "select bool_and(activebool), bool_or(activebool) from customer")
    assert data["customersConnection"]["aggregates"] == {"min": {"activebool": every}, "max": {"activebool": some}}
    ((low, high),) = rows(db, "select min(rating)::text, max(rating)::text from film")
    films = data["filmsConnection"]["aggregates"]
    assert (films["min"]["rating"], films["max"]["rating"]) == (low.replace("-", "_"), high.replace("-", "_"))


async def test_payments_by_month_and_staff(gql, db):
    data = await gql.data(
        """{ paymentsConnection { totalCount groupedAggregates(groupBy: [PAYMENT_DATE_TRUNCATED_TO_MONTH, STAFF_ID]) {
          keys count sum { amount } avg { amount } } } }"""
    )
    expected = rows(
        db,
        "select date_trunc('month', payment_date), staff_id, count(*), sum(amount), avg(amount) from payment"
        " group by 1, 2 order by 1, 2",
    )
    groups = data["paymentsConnection"]["groupedAggregates"]
    assert [
        (datetime.datetime.fromisoformat(g["keys"][0]), g["keys"][1], g["count"], number(g["sum"]["amount"]),
         number(g["avg"]["amount"]))
        for g in groups
    ] == expected  # fmt: skip
    assert groups[0]["keys"][0] == "2022-01-01T00:00:00+00:00"  # an ISO string, in the session's zone


async def test_rentals_per_staff_and_customer_with_having_and_a_filter(gql, db):
    data = await gql.data(
        """{ rentalsConnection {
          busy: groupedAggregates(groupBy: [STAFF_ID, CUSTOMER_ID], having: {count: {greaterThanOrEqualTo: 25}}) {
            keys count }
          returned: groupedAggregates(groupBy: [STAFF_ID], filter: {returnDate: {isNull: false}}) { keys count }
          late: aggregates(filter: {returnDate: {isNull: true}}) { count }
        } }"""
    )
    connection = data["rentalsConnection"]
    busy = rows(
        db,
        "select staff_id, customer_id, count(*)::int from rental group by 1, 2 having count(*) >= 25 order by 1, 2",
    )
    assert [(*g["keys"], g["count"]) for g in connection["busy"]] == busy
    returned = rows(
        db, "select staff_id, count(*)::int from rental where return_date is not null group by 1 order by 1"
    )
    assert [(*g["keys"], g["count"]) for g in connection["returned"]] == returned
    assert connection["late"]["count"] == rows(db, "select count(*) from rental where return_date is null")[0][0]


async def test_having_on_sums_and_averages_all_must_hold(gql, db):
    data = await gql.data(
        """{ paymentsConnection { groupedAggregates(groupBy: [CUSTOMER_ID],
             having: {sum: {amount: {greaterThan: 180}}, avg: {amount: {lessThan: 5.5}}}) { keys sum { amount } } } }"""
    )
    expected = rows(
        db,
        "select customer_id, sum(amount) from payment group by 1 having sum(amount) > 180 and avg(amount) < 5.5"
        " order by 1",
    )
    got = data["paymentsConnection"]["groupedAggregates"]
    assert expected and [(g["keys"][0], number(g["sum"]["amount"])) for g in got] == expected


async def test_film_lengths_binned(gql, db):
    data = await gql.data(
        """{ filmsConnection { groupedAggregates(groupBy: [LENGTH_BINNED], binWidth: "30", binOrigin: "15") {
          keys count avg { rentalRate } } } }"""
    )
    expected = rows(
        db,
        "select floor((length - 15) / 30.0) * 30 + 15, count(*)::int, avg(rental_rate) from film group by 1"
        " order by 1 nulls last",
    )
    got = data["filmsConnection"]["groupedAggregates"]
    assert [(number(g["keys"][0]), g["count"], number(g["avg"]["rentalRate"])) for g in got] == expected


async def test_timestamps_binned_into_durations(gql, db):
    data = await gql.data(
        """{ rentalsConnection(filter: {rentalDate: {lessThan: "2022-05-26T00:00:00Z"}}) {
          groupedAggregates(groupBy: [RENTAL_DATE_BINNED], binWidth: "PT6H", binOrigin: "2022-01-01T03:00:00Z") {
            keys count } } }"""
    )
    expected = rows(
        db,
        "select date_bin('6 hours', rental_date, '2022-01-01 03:00+00'), count(*)::int from rental"
        " where rental_date < '2022-05-26' group by 1 order by 1",
    )
    got = data["rentalsConnection"]["groupedAggregates"]
    assert [(datetime.datetime.fromisoformat(g["keys"][0]), g["count"]) for g in got] == expected


async def test_fill_gaps_adds_the_empty_months(gql, db):
    """pagila has no rentals in March and April 2022."""
    data = await gql.data(
        """{ rentalsConnection { groupedAggregates(groupBy: [RENTAL_DATE_TRUNCATED_TO_MONTH], fillGaps: true) {
          keys count sum { inventoryId } } } }"""
    )
    got = [
        (g["keys"][0][:7], g["count"], g["sum"]["inventoryId"]) for g in data["rentalsConnection"]["groupedAggregates"]
    ]
    counts = dict(
        rows(db, "select to_char(date_trunc('month', rental_date), 'YYYY-MM'), count(*)::int from rental group by 1")
    )
    assert [month for month, _, _ in got] == [
        "2022-02",
        "2022-03",
        "2022-04",
        "2022-05",
        "2022-06",
        "2022-07",
        "2022-08",
    ]
    assert [count for _, count, _ in got] == [counts.get(month, 0) for month, _, _ in got]
    assert got[1][2] is None and got[2][2] is None  # an empty group's sums are null, its count 0


async def test_days_in_a_time_zone_across_a_dst_change(gql, db):
    """New York moved to daylight time on 2022-03-13: days before start at 05:00 UTC, after at 04:00."""
    data = await gql.data(
        """{ paymentsConnection(filter: {paymentDate: {greaterThanOrEqualTo: "2022-03-10T00:00:00Z",
                                                      lessThan: "2022-03-17T00:00:00Z"}}) {
          groupedAggregates(groupBy: [PAYMENT_DATE_TRUNCATED_TO_DAY], timeZone: "America/New_York", fillGaps: true) {
            keys count } } }"""
    )
    expected = rows(
        db,
        "select date_trunc('day', payment_date, 'America/New_York'), count(*)::int from payment"
        " where payment_date >= '2022-03-10' and payment_date < '2022-03-17' group by 1 order by 1",
    )
    got = data["paymentsConnection"]["groupedAggregates"]
    keys = [g["keys"][0] for g in got]
    assert "2022-03-12T00:00:00-05:00" in keys and "2022-03-14T00:00:00-04:00" in keys
    counts = {datetime.datetime.fromisoformat(g["keys"][0]): g["count"] for g in got}
    assert {k: v for k, v in counts.items() if v} == dict(expected)
    days = sorted(counts)
    assert all((b.date() - a.date()).days == 1 for a, b in zip(days, days[1:], strict=False))  # no day skipped


async def test_nested_connections_aggregate_per_parent(gql, db):
    data = await gql.data(
        """{ customers(first: 3, orderBy: [CUSTOMER_ID_ASC]) { customerId paymentsConnection(first: 1) {
          aggregates { count sum { amount } } groupedAggregates(groupBy: [STAFF_ID]) { keys count } } } }"""
    )
    for customer in data["customers"]:
        payments = customer["paymentsConnection"]
        ((count, total),) = rows(
            db, "select count(*)::int, sum(amount) from payment where customer_id = %s", customer["customerId"]
        )
        assert payments["aggregates"]["count"] == count
        assert number(payments["aggregates"]["sum"]["amount"]) == total
        by_staff = rows(
            db,
            "select staff_id, count(*)::int from payment where customer_id = %s group by 1 order by 1",
            customer["customerId"],
        )
        assert [(*g["keys"], g["count"]) for g in payments["groupedAggregates"]] == by_staff


async def test_too_many_groups_is_refused_with_the_limit(gql, db):
    status, body = await gql.errors(
        "{ paymentsConnection { groupedAggregates(groupBy: [CUSTOMER_ID]) { keys count } } }"
    )
    (error,) = body["errors"]
    actual = rows(db, "select count(distinct customer_id) from payment")[0][0]
    assert error["extensions"]["code"] == "TOO_MANY_GROUPS"
    assert (error["extensions"]["limit"], error["extensions"]["actual"]) == (200, actual)


@pytest.mark.parametrize(
    ("selection", "field"),
    [
        ("aggregates { percentile(fraction: 1.5) { amount } }", "fraction"),
        ('groupedAggregates(groupBy: [PAYMENT_DATE_BINNED], binWidth: "P1M") { count }', "binWidth"),
        ('groupedAggregates(groupBy: [PAYMENT_DATE_BINNED], binWidth: "soon") { count }', "binWidth"),
        ("groupedAggregates(groupBy: [PAYMENT_DATE_BINNED]) { count }", "binWidth"),
        ('groupedAggregates(groupBy: [STAFF_ID], binWidth: "PT1H") { count }', "binWidth"),
        ('groupedAggregates(groupBy: [PAYMENT_DATE_TRUNCATED_TO_DAY], timeZone: "Mars/Olympus") { count }', "timeZone"),
        ("groupedAggregates(groupBy: [STAFF_ID], fillGaps: true) { count }", "fillGaps"),
        ("groupedAggregates(groupBy: []) { count }", "groupBy"),
    ],
)
async def test_bad_inputs_name_the_argument(gql, selection, field):
    status, body = await gql.errors(f"{{ paymentsConnection {{ {selection} }} }}")
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert error["extensions"]["field"].endswith(field), error


@pytest.mark.parametrize(
    "selection",
    [
        "aggregates { sum { title } }",  # not numeric
        "aggregates { avg { nothing } }",  # no such column
        "groupedAggregates(groupBy: [TITLE_TRUNCATED_TO_DAY]) { count }",  # not a date
    ],
)
async def test_what_the_schema_does_not_offer_fails_validation(gql, selection):
    query = f"{{ filmsConnection {{ {selection} }} }}"
    status, body = await gql.errors(query)
    assert status == 400 and body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
