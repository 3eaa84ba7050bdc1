"""Self-tests of the telemetry test tools: the OTLP receiver with the OpenTelemetry SDK as the sender, promtool, and a
real Prometheus scraping a loopback target. Everything stays on 127.0.0.1 and every wait is bounded."""

import gzip
import json
import logging
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from tests.telemetry.prometheus import PROMETHEUS, PROMTOOL, PrometheusServer, promtool_check
from tests.telemetry.receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[2]
RESOURCE = Resource.create({"service.name": "tooling-test", "deployment.environment": "test"})

needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool missing: apt-get install prometheus (TOOLS.md 5a)"
)
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None, reason="prometheus missing: apt-get install prometheus (TOOLS.md 5c)"
)


# OTLP receiver, with the OpenTelemetry SDK as the sender.


def test_parent_and_child_spans_arrive_decoded() -> None:
    with OtlpReceiver() as receiver:
        provider = TracerProvider(resource=RESOURCE)
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{receiver.endpoint}/v1/traces", timeout=5)))
        tracer = provider.get_tracer("tooling")
        with tracer.start_as_current_span("GET /items", kind=SpanKind.SERVER, attributes={"http.route": "/items"}) as p:
            with tracer.start_as_current_span("SELECT", kind=SpanKind.CLIENT, attributes={"db.rows": 3}) as child:
                child.set_attribute("db.tags", ["a", "b"])
                child.add_event("sent", {"bytes": 12})
                child.set_status(StatusCode.ERROR, "boom")
            p.set_status(StatusCode.OK)
        provider.shutdown()

        spans = {s["name"]: s for s in receiver.wait_for(lambda r: len(r.spans()) >= 2 and r.spans())}
        parent, child_span = spans["GET /items"], spans["SELECT"]
        context = p.get_span_context()
        assert parent["trace_id"] == format(context.trace_id, "032x")
        assert parent["span_id"] == format(context.span_id, "016x")
        assert len(parent["trace_id"]) == 32 and len(parent["span_id"]) == 16
        assert parent["parent_span_id"] == ""
        assert child_span["trace_id"] == parent["trace_id"]
        assert child_span["parent_span_id"] == parent["span_id"]
        assert (parent["kind"], child_span["kind"]) == ("SERVER", "CLIENT")
        assert (parent["status_code"], child_span["status_code"]) == ("OK", "ERROR")
        assert child_span["status_message"] == "boom"
        assert parent["attributes"] == {"http.route": "/items"}
        assert child_span["attributes"] == {"db.rows": 3, "db.tags": ["a", "b"]}
        assert [(e["name"], e["attributes"]) for e in child_span["events"]] == [("sent", {"bytes": 12})]
        assert parent["start_ns"] <= child_span["start_ns"] <= child_span["end_ns"] <= parent["end_ns"]
        assert parent["resource"]["service.name"] == "tooling-test"
        assert parent["resource"]["telemetry.sdk.language"] == "python"
        assert parent["scope"]["name"] == "tooling"
        # SimpleSpanProcessor: one request per span, the child first (it ends first).
        paths = [path for path, _ in receiver.requests]
        assert paths == ["/v1/traces", "/v1/traces"]
        assert receiver.requests[0][1]["content-type"] == "application/x-protobuf"


def test_gzip_requests_are_decoded() -> None:
    with OtlpReceiver() as receiver:
        exporter = OTLPSpanExporter(f"{receiver.endpoint}/v1/traces", timeout=5, compression=Compression.Gzip)
        provider = TracerProvider(resource=RESOURCE)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        with provider.get_tracer("tooling").start_as_current_span("zipped"):
            pass
        provider.shutdown()
        receiver.wait_for(lambda r: r.spans())
        assert receiver.spans()[0]["name"] == "zipped"
        assert receiver.requests[0][1]["content-encoding"] == "gzip"


def test_histogram_and_counter_arrive_decoded() -> None:
    with OtlpReceiver() as receiver:
        exporter = OTLPMetricExporter(f"{receiver.endpoint}/v1/metrics", timeout=5)
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=60_000)
        provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
        meter = provider.get_meter("tooling")
        histogram = meter.create_histogram("svc.request.duration", unit="s", description="Request duration")
        for seconds in (0.003, 0.2, 7.0):
            histogram.record(seconds, {"route": "/items"})
        meter.create_counter("svc.requests").add(2, {"route": "/items"})
        assert provider.force_flush(timeout_millis=5000)
        provider.shutdown(timeout_millis=5000)

        metrics = receiver.wait_for(lambda r: r.metrics())
        by_name = {m["name"]: m for m in metrics}  # a later export of the same metric replaces the earlier one
        duration = by_name["svc.request.duration"]
        assert (duration["kind"], duration["unit"], duration["temporality"]) == ("histogram", "s", "CUMULATIVE")
        assert duration["resource"]["service.name"] == "tooling-test"
        [point] = duration["data_points"]
        assert point["attributes"] == {"route": "/items"}
        assert point["count"] == 3
        assert point["sum"] == pytest.approx(7.203)
        assert (point["min"], point["max"]) == (0.003, 7.0)
        assert len(point["bucket_counts"]) == len(point["explicit_bounds"]) + 1
        assert sum(point["bucket_counts"]) == 3
        counter = by_name["svc.requests"]
        assert (counter["kind"], counter["is_monotonic"]) == ("sum", True)
        assert [(p["attributes"], p["value"]) for p in counter["data_points"]] == [({"route": "/items"}, 2)]


# The product's log path (svc.telemetry.export) uses the SDK's LoggingHandler, deprecated since the SDK moved it to
# opentelemetry-instrumentation-logging; the test follows the product.
@pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated:DeprecationWarning")
def test_log_record_arrives_with_its_trace_context() -> None:
    with OtlpReceiver() as receiver:
        provider = LoggerProvider(resource=RESOURCE)
        provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(f"{receiver.endpoint}/v1/logs")))
        logger = logging.getLogger("tests.telemetry.tooling")
        handler = LoggingHandler(level=logging.INFO, logger_provider=provider)
        logger.addHandler(handler)
        logger.propagate = False
        try:
            tracer = TracerProvider(resource=RESOURCE).get_tracer("tooling")
            with tracer.start_as_current_span("around") as span:
                logger.warning("hello %s", "world", extra={"user.id": 7})
        finally:
            logger.removeHandler(handler)
            logger.propagate = True
            provider.shutdown()

        [record] = receiver.wait_for(lambda r: r.logs())
        assert record["body"] == "hello world"
        assert record["severity_text"] == "WARN"
        assert record["severity"] == "WARN"
        assert record["trace_id"] == format(span.get_span_context().trace_id, "032x")
        assert record["span_id"] == format(span.get_span_context().span_id, "016x")
        assert record["attributes"]["user.id"] == 7
        assert record["resource"]["service.name"] == "tooling-test"


def _empty_traces() -> bytes:
    return ExportTraceServiceRequest().SerializeToString()


def test_failing_slow_and_bad_requests() -> None:
    headers = {"Content-Type": "application/x-protobuf"}
    with OtlpReceiver(status=503, retry_after=0) as receiver:
        answer = httpx.post(f"{receiver.endpoint}/v1/traces", content=_empty_traces(), headers=headers, timeout=5)
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "0"

        # The SDK retries a 503 (honouring Retry-After), then gives up within its timeout.
        provider = TracerProvider(resource=RESOURCE)
        exporter = OTLPSpanExporter(f"{receiver.endpoint}/v1/traces", timeout=3)
        with provider.get_tracer("tooling").start_as_current_span("refused") as span:
            pass
        assert exporter.export([span]) is SpanExportResult.FAILURE
        assert len(receiver.requests) >= 3
        assert receiver.spans() == []

        receiver.status = 200  # the collector recovers
        assert exporter.export([span]) is SpanExportResult.SUCCESS
        assert [s["name"] for s in receiver.spans()] == ["refused"]
        exporter.shutdown()

        garbage = httpx.post(f"{receiver.endpoint}/v1/traces", content=b"\xff\xff\xff", headers=headers, timeout=5)
        assert garbage.status_code == 400
        unzipped = {**headers, "Content-Encoding": "gzip"}
        assert httpx.post(f"{receiver.endpoint}/v1/logs", content=b"x", headers=unzipped, timeout=5).status_code == 400
        json_body = {"Content-Type": "application/json"}
        assert (
            httpx.post(f"{receiver.endpoint}/v1/logs", content=b"{}", headers=json_body, timeout=5).status_code == 415
        )
        assert httpx.post(f"{receiver.endpoint}/v2/x", content=b"", headers=headers, timeout=5).status_code == 404

    with OtlpReceiver(delay=0.5) as receiver:
        started = time.monotonic()
        zipped = gzip.compress(_empty_traces())
        answer = httpx.post(
            f"{receiver.endpoint}/v1/traces",
            content=zipped,
            headers={**headers, "Content-Encoding": "gzip"},
            timeout=5,
        )
        assert time.monotonic() - started >= 0.5
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/x-protobuf"
        ExportTraceServiceResponse.FromString(answer.content)
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{receiver.endpoint}/v1/traces", content=_empty_traces(), headers=headers, timeout=0.1)


def test_wait_for_reports_what_arrived_on_timeout() -> None:
    with OtlpReceiver() as receiver:
        with pytest.raises(AssertionError, match=r"0 requests .*spans \[\]"):
            receiver.wait_for(lambda r: r.spans(), timeout=0.2)


def test_receiver_runs_as_a_module() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.telemetry.receiver", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        endpoint = json.loads(_read_line(process.stderr, timeout=15))["listening"]
        provider = TracerProvider(resource=RESOURCE)
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces", timeout=5)))
        with provider.get_tracer("tooling").start_as_current_span("printed"):
            pass
        provider.shutdown()
        line = json.loads(_read_line(process.stdout, timeout=10))
        assert line["path"] == "/v1/traces"
        assert line["headers"]["content-type"] == "application/x-protobuf"
        [span] = line["items"]
        assert span["name"] == "printed"
        assert len(span["trace_id"]) == 32
    finally:
        process.terminate()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()


def _read_line(stream: Any, timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, f"no line within {timeout}s"
    return stream.readline()


# Prometheus.


@needs_promtool
def test_promtool_accepts_a_prometheus_client_exposition() -> None:
    registry = CollectorRegistry()
    Counter("svc_requests", "Requests served", ["route"], registry=registry).labels("/items").inc()
    Histogram("svc_request_duration_seconds", "Request duration", registry=registry).observe(0.2)
    code, output = promtool_check(generate_latest(registry).decode())
    assert (code, output) == (0, "")


@needs_promtool
def test_promtool_rejects_garbage_and_flags_lint() -> None:
    code, output = promtool_check("this is { not metrics\n")
    assert code == 1, output
    code, output = promtool_check("# TYPE svc_hits counter\nsvc_hits 1\n")
    assert code == 3, output  # lint only: no HELP, a counter without _total
    assert "no help text" in output


EXPOSITION = b"""\
# HELP tooling_requests_total Requests served.
# TYPE tooling_requests_total counter
tooling_requests_total{route="/items"} 42
"""


@contextmanager
def exposition_server(body: bytes) -> Iterator[str]:
    """A stdlib server on loopback answering `body` on /metrics; yields "127.0.0.1:PORT"."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@needs_prometheus
def test_prometheus_scrapes_a_loopback_target() -> None:
    with exposition_server(EXPOSITION) as target, PrometheusServer(target, "/metrics") as prometheus:
        [series] = prometheus.wait_for_series("tooling_requests_total", timeout=30)
        assert series["metric"] == {
            "__name__": "tooling_requests_total",
            "instance": target,
            "job": "svc",
            "route": "/items",
        }
        assert float(series["value"][1]) == 42
        [up] = prometheus.query('up{job="svc"}')
        assert up["value"][1] == "1"
        [active] = prometheus.targets()
        assert (active["health"], active["scrapeUrl"]) == ("up", f"http://{target}/metrics")
