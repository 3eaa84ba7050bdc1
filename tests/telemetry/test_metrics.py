"""The Prometheus exposition (SPEC "Telemetry"): every metric of the spec's table with its name, type and labels,
checked by `promtool check metrics` and parsed with prometheus-client; Server-Timing from the same record; where the
metrics are served (dev default, prod off, an own listener); operation names capped at 200."""

import re
import socket

import httpx
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from svc.actors import Stats
from svc.telemetry import Record, database_operation, record_var
from svc.telemetry.export import Settings, Telemetry
from tests.support.service import running_service
from tests.telemetry.prometheus import PROMTOOL, PrometheusServer, promtool_check

DATABASE_FIXTURES = ["basic.sql", "telemetry.sql"]

QUERY = "query Authors { authors { name } }"
DUPLICATE = 'mutation Duplicate { createTag(input: {name: "first"}) { tag { id } } }'


def families(text: str) -> dict[str, object]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def samples(text: str, name: str) -> list[tuple[str, dict[str, str], float]]:
    """(sample name, labels, value) of every sample of metric family `name`."""
    family = families(text)[name]
    return [(s.name, s.labels, s.value) for s in family.samples]  # type: ignore[attr-defined]


def count(text: str, name: str, **labels: str) -> float:
    """The `_count` of histogram `name` summed over the series whose labels include `labels`."""
    return sum(
        value
        for sample, found, value in samples(text, name)
        if sample == f"{name}_count" and all(found.get(k) == v for k, v in labels.items())
    )


async def scrape(client: httpx.AsyncClient, path: str = "/metrics") -> str:
    response = await client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return response.text


async def test_server_timing_names_the_stages_of_a_graphql_query_and_a_rest_read(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        graphql = await service.client.post("/graphql", json={"query": QUERY})
        rest = await service.client.get("/rest/authors")
    names = [entry.split(";")[0] for entry in graphql.headers["server-timing"].split(", ")]
    assert names == ["graphql.parse", "graphql.plan", "graphql.compile", "graphql.execute", "total"]
    names = [entry.split(";")[0] for entry in rest.headers["server-timing"].split(", ")]
    assert names == ["rest.parse", "rest.plan", "rest.compile", "rest.execute", "total"]
    for entry in graphql.headers["server-timing"].split(", "):
        assert re.fullmatch(r"[a-z.]+;dur=\d+\.\d", entry)


async def test_every_metric_of_the_table_is_served_in_dev_and_promtool_accepts_it(tmp_path, database_url):
    settings = {"subscriptions": {"enabled": True, "interval": "100ms"}}
    async with running_service(tmp_path, database_url, settings, mode="dev") as service:
        client = service.client
        for _ in range(3):
            assert (await client.post("/graphql", json={"query": QUERY})).status_code == 200
        assert (await client.get("/rest/authors")).status_code == 200
        assert (await client.get("/rest/authors/1")).status_code == 200
        failed = await client.post("/graphql", json={"query": DUPLICATE})
        assert failed.json()["errors"][0]["extensions"]["code"] == "NAME_TAKEN"
        assert (await client.request("FROB", "/graphql")).status_code == 405
        assert (await client.get("/nowhere")).status_code == 404
        text = await scrape(client)

    if PROMTOOL:
        code, output = promtool_check(text)
        # Exit 3 is lint remarks only (the text parses). The one remark allowed is about the spec's own name
        # `db_client_connection_count` (OpenTelemetry's `db.client.connection.count`), which ends in `_count`.
        remarks = [line for line in output.splitlines() if line.strip()]
        assert code == 0 or (code == 3 and all(r.startswith("db_client_connection_count ") for r in remarks)), output
    found = families(text)
    expected = {
        "http_server_request_duration_seconds": "histogram",
        "http_server_active_requests": "gauge",
        "svc_graphql_operation_duration_seconds": "histogram",
        "db_client_operation_duration_seconds": "histogram",
        "db_client_connection_count": "gauge",
        "db_client_connection_max": "gauge",
        "db_client_connection_pending_requests": "gauge",
        "svc_planning_duration_seconds": "histogram",
        "svc_cache_requests": "counter",  # prometheus-client names the family without `_total`
        "svc_build_info": "gauge",
        "process_start_time_seconds": "gauge",
        "svc_subscription_active": "gauge",
        "svc_subscription_results": "counter",
    }
    assert {name: found[name].type for name in expected if name in found} == expected  # type: ignore[attr-defined]
    assert "svc_cache_requests_total{" in text

    http = "http_server_request_duration_seconds"
    assert count(text, http, http_request_method="POST", http_route="/graphql", http_response_status_code="200") == 4
    assert count(text, http, http_request_method="GET", http_route="/rest/{resource}") == 1
    assert count(text, http, http_request_method="GET", http_route="/rest/{resource}/{key}") == 1
    assert count(text, http, http_request_method="_OTHER", http_response_status_code="405") == 1
    assert count(text, http, http_route="", http_response_status_code="404") == 1
    buckets = [s[1]["le"] for s in samples(text, http) if s[0] == f"{http}_bucket"]
    assert buckets[0] == "0.005" and "10.0" in buckets and buckets[-1] == "+Inf"

    graphql = "svc_graphql_operation_duration_seconds"
    assert count(text, graphql, graphql_operation_type="query", graphql_operation_name="Authors") == 3
    assert count(text, graphql, graphql_operation_type="mutation", graphql_operation_name="Duplicate",
                 error_type="NAME_TAKEN") == 1  # fmt: skip

    database = "db_client_operation_duration_seconds"
    assert count(text, database, db_system_name="postgresql", svc_operation_type="query") >= 5
    assert count(text, database, svc_operation_type="mutation", error_type="23505") == 1
    assert count(text, database, svc_operation_type="mutation") >= 1

    assert count(text, "svc_planning_duration_seconds", svc_api="graphql") >= 1
    assert count(text, "svc_planning_duration_seconds", svc_api="rest") >= 1

    cache = {(labels["svc_cache_name"], labels["svc_cache_result"]): value
             for name, labels, value in samples(text, "svc_cache_requests") if name.endswith("_total")}  # fmt: skip
    assert cache["document", "hit"] >= 2 and cache["document", "miss"] >= 1
    assert cache["operation", "hit"] >= 2 and cache["operation", "miss"] >= 1

    pools = {(labels["db_client_connection_pool_name"], labels["db_client_connection_state"]): value
             for _, labels, value in samples(text, "db_client_connection_count")}  # fmt: skip
    assert set(pools) == {("primary", "idle"), ("primary", "used")}
    assert samples(text, "db_client_connection_max")[0][1] == {"db_client_connection_pool_name": "primary"}
    (_, labels, value), *_ = samples(text, "svc_build_info")
    assert value == 1 and labels["version"]
    (_, _, started), *_ = samples(text, "process_start_time_seconds")
    assert 1.7e9 < started < 4e9
    (_, _, active), *_ = samples(text, "http_server_active_requests")
    assert active == 1  # the scrape itself


async def test_prod_serves_no_metrics_unless_enabled_and_they_are_never_rate_limited(tmp_path, database_url):
    async with running_service(tmp_path / "off", database_url) as service:
        assert (await service.client.get("/metrics")).status_code == 404
    settings = {
        "telemetry": {"metrics": {"enabled": True, "path": "/internal/metrics"}},
        "limits": {"rate_limit": {"enabled": True, "anonymous": {"requests_per_minute": 2, "burst": 2}}},
    }
    async with running_service(tmp_path / "on", database_url, settings) as service:
        for _ in range(10):
            response = await service.client.get("/internal/metrics")
            assert response.status_code == 200
            assert "ratelimit-limit" not in response.headers
        assert (await service.client.get("/metrics")).status_code == 404


def test_a_subscription_round_is_a_duration_and_its_statements_are_database_operations():
    telemetry = Telemetry(Settings(metrics=True), version="test", environ={})
    stats = Stats()
    telemetry.observe_rounds(stats)
    record = Record("subscription-round-1")
    token = record_var.set(record)
    database_operation("query", "select 1", record.started)
    record_var.reset(token)
    stats.round_done(record, 0.02, 1)
    stats.active = 3
    text = telemetry.scrape().decode()
    assert count(text, "svc_subscription_round_duration_seconds") == 1
    assert count(text, "db_client_operation_duration_seconds", svc_operation_type="query") == 1
    (_, _, active), *_ = samples(text, "svc_subscription_active")
    assert active == 3
    telemetry.shutdown()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_an_own_listener_serves_the_metrics_and_the_api_port_does_not(tmp_path, database_url):
    port = free_port()
    settings = {"telemetry": {"metrics": {"enabled": True, "listen": f"127.0.0.1:{port}"}}}
    async with running_service(tmp_path, database_url, settings) as service:
        assert (await service.client.post("/graphql", json={"query": QUERY})).status_code == 200
        assert (await service.client.get("/metrics")).status_code == 404
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as own:
            text = await scrape(own)
    assert count(text, "http_server_request_duration_seconds", http_route="/graphql") == 1


async def test_operation_names_are_capped_at_200_then_other(tmp_path, database_url):
    async with running_service(tmp_path, database_url, mode="dev") as service:
        for number in range(205):
            query = f"query Op{number} {{ authors {{ name }} }}"
            assert (await service.client.post("/graphql", json={"query": query})).status_code == 200
        text = await scrape(service.client)
    names = {labels["graphql_operation_name"]
             for name, labels, _ in samples(text, "svc_graphql_operation_duration_seconds")}  # fmt: skip
    assert len(names) == 201
    assert "_OTHER" in names and "Op0" in names and "Op199" in names and "Op200" not in names
    assert count(text, "svc_graphql_operation_duration_seconds", graphql_operation_name="_OTHER") == 5


@pytest.mark.slow
async def test_a_real_prometheus_scrapes_the_service(tmp_path, database_url):
    if PROMTOOL is None:
        pytest.skip("Debian's prometheus is not installed (.ci/run installs it)")
    async with running_service(tmp_path, database_url, mode="dev") as service:
        assert (await service.client.post("/graphql", json={"query": QUERY})).status_code == 200
        target = service.url.removeprefix("http://")
        with PrometheusServer(target) as prometheus:
            series = await trio.to_thread.run_sync(
                lambda: prometheus.wait_for_series("http_server_request_duration_seconds_count", timeout=40)
            )
            routes = {s["metric"].get("http_route") for s in series}
            assert "/graphql" in routes
            assert await trio.to_thread.run_sync(lambda: prometheus.query('svc_build_info{job="svc"}'))
            up = await trio.to_thread.run_sync(lambda: prometheus.query("up"))
            assert up[0]["value"][1] == "1"
