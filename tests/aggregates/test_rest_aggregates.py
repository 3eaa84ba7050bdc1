"""`GET|POST /rest/{resource}/aggregate` (SPEC "Aggregate request members"): members, groups (units, minute
included, and bins), having in both forms, time zones, fillGaps, named sets, TOO_MANY_GROUPS, what a resource does
not offer (400 naming the parameter), and a resource whose list is not permitted. Each answer is checked against the
same aggregate written by hand in SQL on pagila."""

import datetime
import decimal
import math

import pytest

from tests.aggregates.support import rows
from tests.support.postgres import PAGILA
from tests.support.rest import rest_service

DATABASE_FIXTURES = PAGILA
SETTINGS = {"database": {"schemas": ["public"]}, "limits": {"groups": 500}}


@pytest.fixture
async def rest(tmp_path, database_url):
    async with rest_service(tmp_path, database_url, SETTINGS) as client:
        yield client


async def ok(rest, url: str, **kwargs):
    response = await (rest.post(url, **kwargs) if "json" in kwargs else rest.get(url))
    assert response.status_code == 200, response.text
    return response.json()


async def test_ungrouped_members_match_sql(rest, db):
    got = await ok(
        rest,
        "/rest/payment/aggregate?sum=amount,customerId&avg=amount&min=amount,paymentDate&max=amount"
        "&distinctCount=customerId&stddevSample=amount&variancePopulation=amount&median=amount"
        "&percentile=amount&fraction=0.25&filter[staffId][eq]=2",
    )
    ((count, total, customers, avg, low, first, high, distinct, sd, varp, median, quarter),) = rows(
        db,
        "select count(*), sum(amount), sum(customer_id), avg(amount), min(amount), min(payment_date), max(amount),"
        " count(distinct customer_id), stddev_samp(amount), var_pop(amount),"
        " percentile_cont(0.5) within group (order by amount::float8),"
        " percentile_cont(0.25) within group (order by amount::float8) from payment where staff_id = 2",
    )
    assert got["count"] == count
    assert got["sum"] == {"amount": str(total), "customerId": str(customers)}
    assert decimal.Decimal(got["avg"]["amount"]) == avg
    assert decimal.Decimal(got["min"]["amount"]) == low and decimal.Decimal(got["max"]["amount"]) == high
    assert datetime.datetime.fromisoformat(got["min"]["paymentDate"]) == first
    assert got["distinctCount"] == {"customerId": distinct}
    assert decimal.Decimal(got["stddevSample"]["amount"]) == sd
    assert decimal.Decimal(got["variancePopulation"]["amount"]) == varp
    assert math.isclose(got["median"]["amount"], median) and math.isclose(got["percentile"]["amount"], quarter)


async def test_grouped_by_unit_with_having_in_brackets(rest, db):
    got = await ok(
        rest,
        "/rest/payment/aggregate?group=staffId,paymentDate:month&sum=amount&having[count][gt]=1300"
        "&having[sum][amount][gte]=5500",
    )
    expected = rows(
        db,
        "select staff_id, date_trunc('month', payment_date), count(*)::int, sum(amount) from payment group by 1, 2"
        " having count(*) > 1300 and sum(amount) >= 5500 order by 1, 2",
    )
    assert expected and [
        (g["keys"]["staffId"], datetime.datetime.fromisoformat(g["keys"]["paymentDate:month"]), g["count"],
         decimal.Decimal(g["sum"]["amount"]))
        for g in got
    ] == expected  # fmt: skip


async def test_minutes_bins_time_zones_and_gaps(rest, db):
    early = "filter[rentalDate][lt]=2022-05-24T23:10:00Z"
    minutes = await ok(rest, f"/rest/rental/aggregate?group=rentalDate:minute&{early}")
    expected = rows(
        db, "select date_trunc('minute', rental_date), count(*)::int from rental where rental_date < '2022-05-24 23:10'"
        " group by 1 order by 1",
    )  # fmt: skip
    assert [(datetime.datetime.fromisoformat(g["keys"]["rentalDate:minute"]), g["count"]) for g in minutes] == expected
    binned = await ok(rest, "/rest/film/aggregate", json={"group": ["length:binned"], "binWidth": 40, "max": "length"})
    expected = rows(db, "select floor(length / 40.0) * 40, count(*)::int, max(length) from film group by 1 order by 1")
    assert [(decimal.Decimal(g["keys"]["length:binned"]), g["count"], g["max"]["length"]) for g in binned] == expected
    days = await ok(
        rest,
        "/rest/rental/aggregate?group=rentalDate:binned&binWidth=P7D&binOrigin=2022-01-03T00:00:00Z&fillGaps=true",
    )
    weeks = [datetime.datetime.fromisoformat(g["keys"]["rentalDate:binned"]) for g in days]
    assert all(b - a == datetime.timedelta(days=7) for a, b in zip(weeks, weeks[1:], strict=False))
    assert sum(g["count"] for g in days) == rows(db, "select count(*) from rental")[0][0]
    assert any(g["count"] == 0 for g in days)  # March and April 2022 have no rentals
    paris = await ok(rest, "/rest/payment/aggregate?group=paymentDate:month&timeZone=Europe/Paris")
    assert [g["keys"]["paymentDate:month"][-6:] for g in paris][:4] == ["+01:00", "+01:00", "+01:00", "+02:00"]


async def test_named_sets_share_the_request_filter(rest, db):
    got = await ok(
        rest,
        "/rest/payment/aggregate",
        json={
            "filter": {"staffId": {"equalTo": 1}},
            "sets": {
                "all": {"sum": ["amount"]},
                "big": {"filter": {"amount": {"greaterThan": 5}}, "sum": "amount"},
                "monthly": {"group": ["paymentDate:month"], "having": {"count": {"greaterThan": 1300}}},
            },
        },
    )
    ((count, total, big, big_total),) = rows(
        db,
        "select count(*), sum(amount), count(*) filter (where amount > 5), sum(amount) filter (where amount > 5)"
        " from payment where staff_id = 1",
    )
    assert got["all"] == {"count": count, "sum": {"amount": str(total)}}
    assert got["big"] == {"count": big, "sum": {"amount": str(big_total)}}
    monthly = rows(
        db,
        "select count(*)::int from payment where staff_id = 1 group by date_trunc('month', payment_date)"
        " having count(*) > 1300 order by date_trunc('month', payment_date)",
    )
    assert [g["count"] for g in got["monthly"]] == [c for (c,) in monthly]


async def test_too_many_groups_is_422(rest, db):
    response = await rest.get("/rest/payment/aggregate?group=customerId,staffId")
    assert response.status_code == 422
    problem = response.json()
    actual = rows(db, "select count(*) from (select distinct customer_id, staff_id from payment) d")[0][0]
    assert (problem["code"], problem["limit"], problem["actual"]) == ("TOO_MANY_GROUPS", 500, actual)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("sum=title", "sum"),  # not numeric
        ("avg=nothing", "avg"),  # no such column
        ("percentile=amount&fraction=1.5", "fraction"),
        ("percentile=amount", "fraction"),
        ("group=staffId,customerId,rentalId,amount,paymentDate", "group"),  # a fifth group
        ("group=paymentDate:binned&binWidth=P1M", "binWidth"),  # months: date_bin takes none
        ("group=paymentDate:binned&binWidth=soon", "binWidth"),
        ("group=paymentDate:fortnight", "group"),
        ("group=amount:month", "group"),
        ("sum=amount&having[count][gt]=3", "having"),  # no group
        ("group=staffId&having[nothing][gt]=3", "having[nothing]"),
        ("group=staffId&fillGaps=true", "fillGaps"),
        ("group=staffId,staffId", "group"),
        ("sum=amount&window=rank", "window"),
    ],
)
async def test_bad_requests_name_the_parameter(rest, query, field):
    response = await rest.get(f"/rest/payment/aggregate?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field, response.json()


async def test_bad_bodies(rest):
    beside = await rest.post("/rest/payment/aggregate", json={"sets": {"a": {"sum": ["amount"]}}, "avg": ["amount"]})
    assert beside.status_code == 400 and beside.json()["field"] == "avg"
    inner = await rest.post("/rest/payment/aggregate", json={"sets": {"a": {"sum": ["title"]}}})
    assert inner.status_code == 400 and inner.json()["field"] == "sets.a.sum"
    in_url = await rest.get("/rest/payment/aggregate?sets=x")
    assert in_url.status_code == 400 and in_url.json()["field"] == "sets"


async def test_a_resource_whose_list_is_not_permitted_has_no_aggregates(tmp_path, database_url):
    settings = {**SETTINGS, "entities": {"payment": {"omit_operations": ["list", "connection"]}}}
    async with rest_service(tmp_path, database_url, settings) as rest:
        response = await rest.get("/rest/payment/aggregate?sum=amount")
        assert response.status_code == 403 and response.json()["code"] == "PERMISSION_DENIED"
        allowed = (await rest.options("/rest/rental/aggregate")).headers["allow"]
        assert {"GET", "POST"} <= set(allowed.replace(" ", "").split(","))
