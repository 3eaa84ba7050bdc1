"""`svc advise --statements [--top n]`, `GET /debug/statements` and the dev statement advisor (SPEC "Command line",
"Dev statement advisor", issue 21), on a cluster of the tests' own that loads `pg_stat_statements` (tests/support/stats_cluster.py): after a
workload that filters a large table on an unindexed column, the report names that operation first and suggests
exactly that index, proven cheaper by a hypothetical index (hypopg), or unchecked without hypopg; a database without
the statistics is an error. In dev mode the advisor warns once per operation whose mean time reaches 100 ms.
"""

import psycopg
import pytest
import trio

from tests.support.graphql import Gql
from tests.support.process import run_svc
from tests.support.service import running_service
from tests.support.stats_cluster import stats_cluster

pytestmark = pytest.mark.slow

SETTINGS = {"database": {"schemas": ["app"]}}
CONFIG = "database: {schemas: [app]}\n"
QUERY = "query ItemsByCode($code: String!) { items(condition: {code: $code}) { rowId } }"
BY_KEY = "query ItemByKey($id: Int!) { item(rowId: $id) { code } }"


@pytest.fixture(scope="module")
def cluster(database_url):
    with stats_cluster(database_url) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("create database advise")
        advise_url = url.rsplit("/", 1)[0] + "/advise"
        with psycopg.connect(advise_url, autocommit=True) as conn:
            conn.execute(
                "create extension pg_stat_statements; create extension hypopg; create schema app;"
                " create table app.items (id integer primary key, code text not null, n integer not null);"
                " insert into app.items select g, 'c' || g, g % 100 from generate_series(1, 50000) g;"
                " analyze app.items;"
                " create function app.slow_count() returns bigint language sql stable"
                " as $$ select count(*) from app.items, pg_sleep(0.12) $$"
            )
        yield advise_url


async def workload(tmp_path, url) -> None:
    async with running_service(tmp_path, url, SETTINGS) as service:
        gql = Gql(service.client)
        for n in range(20):
            assert (await gql.data(QUERY, {"code": f"c{n * 7}"}))["items"] == [{"rowId": n * 7}] or n == 0
            await gql.data(BY_KEY, {"id": n + 1})


def advise(tmp_path, url, *args: str):
    (tmp_path / "svc.yaml").write_text(CONFIG)
    return run_svc("advise", "--statements", *args, cwd=tmp_path, env={"DATABASE_URL": url})


async def test_the_costliest_operation_and_exactly_its_missing_index(tmp_path, cluster):
    await workload(tmp_path, cluster)
    result = advise(tmp_path, cluster, "--top", "5")
    assert (result.returncode, result.stderr) == (0, ""), result
    lines = result.stdout.splitlines()
    operations = lines[1 : lines.index("missing indexes:")]
    assert operations[0].startswith("  graphql ItemsByCode: 20 calls"), result.stdout
    assert any(line.startswith("  graphql ItemByKey: 20 calls") for line in operations), result.stdout
    suggestions = lines[lines.index("missing indexes:") + 1 :]
    assert len(suggestions) == 1, result.stdout
    (suggestion,) = suggestions
    assert suggestion.startswith('  create index on "app"."items" ("code");  -- graphql ItemsByCode: estimated cost ')
    before, after = (float(cost) for cost in suggestion.rsplit("estimated cost ", 1)[1].split(" -> "))
    assert after <= before * 0.9


async def test_without_hypopg_the_candidates_are_unchecked(tmp_path, cluster):
    await workload(tmp_path, cluster)
    with psycopg.connect(cluster, autocommit=True) as conn:
        conn.execute("drop extension hypopg")
    try:
        result = advise(tmp_path, cluster)
    finally:
        with psycopg.connect(cluster, autocommit=True) as conn:
            conn.execute("create extension hypopg")
    assert result.returncode == 0, result
    assert "missing indexes (unchecked: hypopg is not installed):" in result.stdout
    assert '  create index on "app"."items" ("code");  -- graphql ItemsByCode: estimated cost ' in result.stdout
    assert " -> " not in result.stdout.split("missing indexes", 1)[1]


async def test_the_debug_route_answers_the_report_as_json_when_switched_on(tmp_path, cluster):
    await workload(tmp_path, cluster)
    dev = {**SETTINGS, "export": {"pin": "off"}, "dev": {"debug": {"statements": True}}}
    async with running_service(tmp_path / "on", cluster, dev, mode="dev") as service:
        response = await service.client.get("/debug/statements", params={"top": "3"})
        assert response.status_code == 200, response.text
        report = response.json()
        assert report["operations"][0]["operation"] == "graphql ItemsByCode" and len(report["operations"]) <= 3
        (index,) = report["indexes"]
        assert (index["table"], index["column"], index["checked"]) == ("app.items", "code", True)
        assert index["costWithIndex"] <= index["cost"] * 0.9
        assert (await service.client.get("/debug/statements", params={"top": "0"})).status_code == 400
    async with running_service(
        tmp_path / "off", cluster, {**SETTINGS, "export": {"pin": "off"}}, mode="dev"
    ) as service:
        assert (await service.client.get("/debug/statements")).status_code == 404


def test_a_database_without_the_statistics_is_an_error(tmp_path, database_url):
    result = advise(tmp_path, database_url)
    assert result.returncode == 1
    assert "pg_stat_statements" in result.stderr and result.stdout == ""


async def test_in_dev_mode_the_advisor_warns_once_per_slow_operation(tmp_path, cluster, caplog, monkeypatch):
    from svc.actors import _advisor

    monkeypatch.setattr(_advisor, "ADVISOR_INTERVAL", 0.2)
    dev = {**SETTINGS, "export": {"pin": "off"}}

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "svc.advisor" and r.levelname == "WARNING"]

    async with running_service(tmp_path, cluster, dev, mode="dev") as service:
        gql = Gql(service.client)
        for _ in range(2):
            assert (await gql.data("query SlowOne { slowCount }"))["slowCount"] == "50000"
            await gql.data(BY_KEY, {"id": 1})
        with trio.fail_after(10):
            while not warnings():
                await trio.sleep(0.05)
        await trio.sleep(0.5)  # more rounds: no second warning
    (warning,) = warnings()
    assert warning.startswith("slow operation graphql SlowOne: ") and "svc advise --statements" in warning


def test_advise_statements_refuses_while_the_integration_is_off(tmp_path, database_url):
    (tmp_path / "svc.yaml").write_text(CONFIG + "extensions: {integrations: {pg_stat_statements: off}}\n")
    result = run_svc("advise", "--statements", cwd=tmp_path, env={"DATABASE_URL": database_url})
    assert result.returncode == 1, result
    assert "extensions.integrations.pg_stat_statements is off" in result.stderr and result.stdout == ""


async def test_while_the_integration_is_off_neither_the_route_nor_the_advisor_reads_the_statistics(
    tmp_path, cluster, caplog, monkeypatch
):
    from svc.actors import _advisor

    monkeypatch.setattr(_advisor, "ADVISOR_INTERVAL", 0.2)
    off = {
        **SETTINGS,
        "export": {"pin": "off"},
        "extensions": {"integrations": {"pg_stat_statements": "off"}},
        "dev": {"debug": {"statements": True}},
    }
    async with running_service(tmp_path, cluster, off, mode="dev") as service:
        response = await service.client.get("/debug/statements")
        assert response.status_code == 404 and "pg_stat_statements is off" in response.text, response.text
        gql = Gql(service.client)
        for _ in range(2):
            assert (await gql.data("query SlowOne { slowCount }"))["slowCount"] == "50000"
        await trio.sleep(1.0)  # five of the advisor's rounds: with the integration on, it warns within one
    assert not [r for r in caplog.records if r.name == "svc.advisor"]
