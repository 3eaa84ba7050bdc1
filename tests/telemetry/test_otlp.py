"""OTLP export received by a real OTLP/HTTP protobuf receiver (tests/telemetry/receiver.py, TOOLS.md 6b): the server
span per request named by its route, the stage spans and one database client span per statement under it,
`traceparent` continued, sampling, resource attributes, headers, metrics pushed with the same names, log records with
trace ids, and a collector that is down or slow costing requests nothing (SPEC "Telemetry")."""

import io
import json
import logging
import statistics
import time

import trio

from svc.errors import Code, SvcError
from svc.http import Request, Response, Route
from svc.telemetry import configure_logging
from tests.support.service import running_service
from tests.telemetry.receiver import OtlpReceiver

DATABASE_FIXTURES = ["basic.sql", "telemetry.sql"]

QUERY = "query Authors { authors { name } }"
DUPLICATE = 'mutation Duplicate { createTag(input: {name: "first"}) { tag { id } } }'
CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


async def boom(request: Request) -> Response:
    logging.getLogger("svc.test").warning("about to fail")
    raise RuntimeError("boom")


async def unavailable(request: Request) -> Response:
    raise SvcError(Code.DATABASE_UNAVAILABLE, "the database is away")


ROUTES = [Route("/boom", frozenset({"GET"}), boom), Route("/away", frozenset({"GET"}), unavailable)]


def otlp(receiver: OtlpReceiver, **more: object) -> dict[str, object]:
    return {"telemetry": {"service_name": "svc-test", "otlp": {"endpoint": receiver.endpoint, **more}}}


async def wait_for(receiver: OtlpReceiver, predicate, timeout: float = 10.0):
    return await trio.to_thread.run_sync(lambda: receiver.wait_for(predicate, timeout))


def by_name(spans: list[dict]) -> dict[str, list[dict]]:
    named: dict[str, list[dict]] = {}
    for span in spans:
        named.setdefault(span["name"], []).append(span)
    return named


async def test_a_request_is_a_server_span_with_its_stages_and_statements_as_children(
    tmp_path, database_url, monkeypatch
):
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=data")
    with OtlpReceiver() as receiver:
        async with running_service(tmp_path, database_url, otlp(receiver), routes=ROUTES) as service:
            client = service.client
            graphql = await client.post("/graphql", json={"query": QUERY}, headers={"x-request-id": "req-graphql"})
            assert graphql.status_code == 200
            assert (await client.get("/rest/authors/1")).status_code == 200
            failed = await client.post("/graphql", json={"query": DUPLICATE}, headers={"x-request-id": "req-dup"})
            assert failed.json()["errors"][0]["extensions"]["code"] == "NAME_TAKEN"
            assert (await client.get("/boom")).status_code == 500
            assert (await client.get("/away")).status_code == 503
            traceparent = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
            assert (await client.get("/rest/authors", headers={"traceparent": traceparent})).status_code == 200
        # Leaving the service flushed what was queued.
        spans = receiver.spans()
    named = by_name(spans)

    (server,) = [s for s in named["POST /graphql"] if s["attributes"]["request_id"] == "req-graphql"]
    assert server["kind"] == "SERVER" and server["parent_span_id"] == ""
    assert server["attributes"]["http.route"] == "/graphql"
    assert server["attributes"]["http.response.status_code"] == 200
    assert server["attributes"]["graphql.operation.name"] == "Authors"
    assert server["resource"]["service.name"] == "svc-test"
    assert server["resource"]["service.version"]
    assert server["resource"]["deployment.environment"] == "test" and server["resource"]["team"] == "data"
    in_trace = [s for s in spans if s["trace_id"] == server["trace_id"]]
    children = {s["name"]: s for s in in_trace if s["parent_span_id"] == server["span_id"]}
    assert set(children) == {"graphql.parse", "graphql.plan", "graphql.compile", "graphql.execute"}
    (statement,) = [s for s in in_trace if s["kind"] == "CLIENT"]
    assert statement["parent_span_id"] == children["graphql.execute"]["span_id"]
    assert statement["attributes"]["db.system.name"] == "postgresql"
    assert statement["attributes"]["svc.operation.type"] == "query"
    assert "authors" in statement["attributes"]["db.query.text"]
    assert statement["status_code"] == "UNSET"
    assert {s["attributes"]["request_id"] for s in in_trace} == {"req-graphql"}
    execute = children["graphql.execute"]
    assert execute["start_ns"] <= statement["start_ns"] <= statement["end_ns"] <= execute["end_ns"]
    assert server["start_ns"] <= children["graphql.parse"]["start_ns"] and execute["end_ns"] <= server["end_ns"]

    (row,) = named["GET /rest/{resource}/{key}"]
    rest_children = {s["name"] for s in spans if s["parent_span_id"] == row["span_id"]}
    assert rest_children == {"rest.parse", "rest.plan", "rest.compile", "rest.execute"}

    (duplicate,) = [s for s in named["POST /graphql"] if s["attributes"]["request_id"] == "req-dup"]
    failing = [s for s in spans if s["trace_id"] == duplicate["trace_id"] and s["status_code"] == "ERROR"]
    assert [s["kind"] for s in failing] == ["CLIENT"]
    assert failing[0]["attributes"]["error.type"] == "23505"
    assert failing[0]["attributes"]["svc.operation.type"] == "mutation"
    assert duplicate["status_code"] == "UNSET"  # a typed error answered 200 is not a server error

    (crashed,) = named["GET /boom"]
    assert crashed["status_code"] == "ERROR" and crashed["attributes"]["http.response.status_code"] == 500
    (away,) = named["GET /away"]
    assert away["status_code"] == "ERROR" and away["attributes"]["error.type"] == "503"

    (continued,) = named["GET /rest/{resource}"]
    assert continued["trace_id"] == CALLER_TRACE and continued["parent_span_id"] == CALLER_SPAN


async def test_sample_ratio_drops_new_traces_but_keeps_sampled_callers(tmp_path, database_url):
    with OtlpReceiver() as receiver:
        settings = {**otlp(receiver), "telemetry": {**otlp(receiver)["telemetry"], "traces": {"sample_ratio": 0.0}}}
        async with running_service(tmp_path, database_url, settings) as service:
            for _ in range(5):
                assert (await service.client.get("/rest/authors")).status_code == 200
            unsampled = f"00-{'1' * 32}-{CALLER_SPAN}-00"
            assert (await service.client.get("/rest/authors", headers={"traceparent": unsampled})).status_code == 200
            sampled = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
            assert (await service.client.get("/rest/authors", headers={"traceparent": sampled})).status_code == 200
        spans = receiver.spans()
    assert {s["trace_id"] for s in spans} == {CALLER_TRACE}
    assert len([s for s in spans if s["kind"] == "SERVER"]) == 1


async def test_metrics_are_pushed_with_their_names_and_labels(tmp_path, database_url):
    with OtlpReceiver() as receiver:
        async with running_service(tmp_path, database_url, otlp(receiver, interval="1s", traces=False)) as service:
            assert (await service.client.post("/graphql", json={"query": QUERY})).status_code == 200
            found = await wait_for(
                receiver, lambda r: {m["name"]: m for m in r.metrics()}.get("http.server.request.duration")
            )
        metrics = {m["name"]: m for m in receiver.metrics()}
        spans = receiver.spans()
    assert found["kind"] == "histogram"
    (point,) = [p for p in found["data_points"] if p["attributes"]["http.route"] == "/graphql"]
    assert point["attributes"] == {
        "http.request.method": "POST",
        "http.route": "/graphql",
        "http.response.status_code": 200,
    }
    assert point["explicit_bounds"][0] == 0.005 and point["explicit_bounds"][-1] == 10.0
    assert found["resource"]["service.name"] == "svc-test"
    for name in (
        "svc.graphql.operation.duration",
        "db.client.operation.duration",
        "db.client.connection.count",
        "svc.cache.requests",
        "svc.build_info",
        "process.start_time",
    ):
        assert name in metrics, name
    assert spans == []  # otlp.traces: false


async def test_log_records_carry_the_request_and_trace_ids_in_json_and_over_otlp(tmp_path, database_url):
    stream = io.StringIO()
    svc_logger = logging.getLogger("svc")
    saved = (list(svc_logger.handlers), svc_logger.level, svc_logger.propagate)
    configure_logging("info", "json", stream)
    try:
        with OtlpReceiver() as receiver:
            async with running_service(tmp_path, database_url, otlp(receiver), routes=ROUTES) as service:
                response = await service.client.get("/boom", headers={"x-request-id": "req-boom"})
                assert response.status_code == 500
            spans = receiver.spans()
            logs = receiver.logs()
    finally:
        svc_logger.handlers[:], svc_logger.level, svc_logger.propagate = saved
    (server,) = [s for s in spans if s["name"] == "GET /boom"]
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    during = [line for line in lines if line.get("request_id") == "req-boom"]
    assert {line["message"] for line in during} >= {"about to fail", "unhandled error in GET /boom"}
    assert {line["trace_id"] for line in during} == {server["trace_id"]}
    exported = [entry for entry in logs if entry["attributes"].get("request_id") == "req-boom"]
    assert {entry["body"] for entry in exported} >= {"about to fail", "unhandled error in GET /boom"}
    assert {entry["trace_id"] for entry in exported} == {server["trace_id"]}
    assert {entry["span_id"] for entry in exported} == {server["span_id"]}
    (warning,) = [entry for entry in exported if entry["body"] == "about to fail"]
    assert warning["severity_text"] == "WARNING" and warning["resource"]["service.name"] == "svc-test"


async def test_headers_from_the_configuration_and_the_environment_and_the_endpoint_from_the_environment(
    tmp_path, database_url, monkeypatch
):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=acme,authorization=Bearer%20env")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        settings = {"telemetry": {"otlp": {"headers": {"authorization": "Bearer ${OTLP_TOKEN}"}}}}
        environ = {"OTLP_TOKEN": "s3cret"}
        async with running_service(tmp_path, database_url, settings, environ=environ) as service:
            assert (await service.client.get("/rest/authors")).status_code == 200
        requests = receiver.requests
        spans = receiver.spans()
    traces = [headers for path, headers in requests if path == "/v1/traces"]
    assert traces and all(h["authorization"] == "Bearer s3cret" and h["x-tenant"] == "acme" for h in traces)
    assert {s["resource"]["service.name"] for s in spans} == {"from-env"}


async def latencies(client, count: int = 40) -> list[float]:
    took = []
    for _ in range(count):
        started = time.perf_counter()
        assert (await client.post("/graphql", json={"query": QUERY})).status_code == 200
        took.append(time.perf_counter() - started)
    return took


async def test_a_slow_or_dead_collector_does_not_slow_requests_and_failures_are_logged_once(
    tmp_path, database_url, caplog
):
    async with running_service(tmp_path / "plain", database_url) as service:
        await latencies(service.client, 10)  # warm
        without = await latencies(service.client)
    with OtlpReceiver(delay=3.0) as slow:
        # A collector taking 3 s per export, exported to every 0.2 s (metrics) and flushed on stop.
        settings = otlp(slow, interval="1s")
        async with running_service(tmp_path / "slow", database_url, settings) as service:
            await latencies(service.client, 10)
            with_slow = await latencies(service.client)
    dead = OtlpReceiver()
    dead.start()
    endpoint = dead.endpoint
    dead.close()  # nothing listens there any more
    caplog.set_level(logging.INFO, logger="svc.telemetry")
    settings = {"telemetry": {"otlp": {"endpoint": endpoint, "interval": "1s"}}}
    async with running_service(tmp_path / "dead", database_url, settings) as service:
        with_dead = await latencies(service.client)
        await trio.sleep(2.5)  # metric pushes fail meanwhile
        more = await latencies(service.client, 10)
    assert max(with_slow + with_dead + more) < 1.0
    typical = statistics.median(without)
    assert statistics.median(with_slow) < 3 * typical + 0.01, (typical, statistics.median(with_slow))
    assert statistics.median(with_dead) < 3 * typical + 0.01, (typical, statistics.median(with_dead))
    failures = [m for r in caplog.records if (m := r.getMessage()).startswith("OTLP") and f"to {endpoint} failed" in m]
    assert len([m for m in failures if m.startswith("OTLP metrics export")]) == 1, failures  # once, not per push
    assert len([m for m in failures if m.startswith("OTLP traces export")]) == 1, failures
