"""Telemetry out of the process: the OpenTelemetry SDK's metrics (scraped as Prometheus text, pushed over OTLP),
traces made from each request's record, and logs over OTLP (SPEC "Telemetry").

One source of truth for metrics: the SDK's `MeterProvider` holds every instrument; a Prometheus reader turns it
into the text exposition a scrape asks for, and a periodic reader pushes the same data over OTLP. prometheus-client
is used only to write the text format (through the SDK's Prometheus reader), never to keep counts of its own. The
instruments have OpenTelemetry's semantic-convention names (`http.server.request.duration`, unit `s`), which the
Prometheus reader writes as the spec's names (`http_server_request_duration_seconds`).

Nothing is exported on a request's path: a request's spans are handed to the SDK's batch processor (a bounded
queue, exported from its own thread), histograms are recorded in memory, and the gauges and counters that other
parts keep (pools, caches, the event dispatcher, the subscription poller) are read only when metrics are collected.
A collector that is down or slow costs requests nothing: what cannot be exported is dropped, counted, and logged
once per outage.
"""

import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.re import parse_env_headers
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

from ._logging import LOGGERS
from ._record import Record, cache_counts, record_var

log = logging.getLogger("svc.telemetry")

#: Histogram bucket bounds in seconds, 5 ms to 10 s (SPEC "Telemetry").
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
#: Distinct GraphQL operation names a label takes; later names are `_OTHER` (SPEC "Limits").
OPERATION_NAMES = 200
#: Request methods kept as labels; others are `_OTHER`.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"})
#: The text format a scrape is answered in (Prometheus 0.0.4; OpenMetrics is not offered).
METRICS_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
#: Spans (and log records) waiting for export, at most; more are dropped.
QUEUE_SIZE = 2048
#: Seconds one export may take before it counts as failed.
EXPORT_TIMEOUT = 5.0
#: Seconds shutdown waits for what is left to export.
FLUSH_TIMEOUT = 3.0

_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")


@attrs.frozen
class Settings:
    """`telemetry.*` as the exporters need it (SPEC "Telemetry"); the environment's OTEL_* fill what is unset."""

    service_name: str | None = None
    #: Serve the Prometheus exposition.
    metrics: bool = False
    endpoint: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict[str, str])
    traces: bool = True
    push_metrics: bool = True
    logs: bool = True
    #: Seconds between metric pushes.
    interval: float = 60.0
    sample_ratio: float = 1.0


class Telemetry:
    """What one process reports: metrics (when scraped or pushed), traces and logs (when exported over OTLP)."""

    def __init__(self, settings: "Settings", *, version: str, environ: Mapping[str, str] = os.environ) -> None:
        self.resource = Resource.create(
            {
                "service.name": settings.service_name or environ.get("OTEL_SERVICE_NAME") or "svc",
                "service.version": version,
            }
        )
        endpoint = (settings.endpoint or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").rstrip("/")
        headers = {**parse_env_headers(environ.get("OTEL_EXPORTER_OTLP_HEADERS", ""), liberal=True),
                   **settings.headers}  # fmt: skip
        readers: list[MetricReader] = []
        #: The Prometheus exposition's registry (None: metrics are not served).
        self.registry: CollectorRegistry | None = None
        if settings.metrics:
            self.registry = CollectorRegistry(auto_describe=False)
            readers.append(PrometheusMetricReader(scope_info_enabled=False, registry=self.registry))
        if endpoint and settings.push_metrics:
            push = OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics", headers=headers, timeout=EXPORT_TIMEOUT)
            readers.append(
                PeriodicExportingMetricReader(
                    _GuardedMetrics(push, "metrics", endpoint), settings.interval * 1000, EXPORT_TIMEOUT * 1000
                )
            )
        self.metrics = Metrics(self.resource, readers, version) if readers else None
        self.tracing = None
        if endpoint and settings.traces:
            spans = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", headers=headers, timeout=EXPORT_TIMEOUT)
            self.tracing = Tracing(self.resource, spans, endpoint, settings.sample_ratio)
        self.logs = None
        if endpoint and settings.logs:
            records = OTLPLogExporter(endpoint=f"{endpoint}/v1/logs", headers=headers, timeout=EXPORT_TIMEOUT)
            self.logs = OtlpLogs(self.resource, records, endpoint)
        _QUEUE_FULL.install()

    # --- a request --------------------------------------------------------------------------------------------

    def begin(self, record: Record, method: str, headers: Mapping[str, str]) -> None:
        """A request starts: its server span (when traced), the active-requests gauge, its trace id for logs."""
        if self.tracing is not None:
            span = record.span = self.tracing.start(record, method, headers)
            context = span.get_span_context()
            if context.is_valid:
                record.trace_id = format(context.trace_id, "032x")
        elif (traceparent := headers.get("traceparent")) is not None and (found := _TRACEPARENT.match(traceparent)):
            record.trace_id = found.group(1)  # not traced here, but logs name the caller's trace
        if self.metrics is not None:
            self.metrics.active += 1

    def end(self, record: Record, method: str, status: int, ended: float) -> None:
        """A request is answered (`ended`: when, on the record's clock): spans and histograms from its record."""
        if self.metrics is not None:
            self.metrics.active -= 1
            self.metrics.request(record, method, status, ended)
        if self.tracing is not None and isinstance(record.span, trace.Span):
            self.tracing.end(record.span, record, method, status, ended)

    def observe_rounds(self, stats: Any) -> None:
        """Subscription rounds (the poller's `Stats`): its gauges and counts when metrics are collected; each
        round's duration, its statements' durations and an internal span `subscription.round` as it ends."""
        if self.metrics is not None:
            self.metrics.observe_subscriptions(stats)

        def round_done(record: Record, seconds: float) -> None:
            if self.metrics is not None:
                self.metrics.round.record(seconds)
                self.metrics.operations(record)
            if self.tracing is not None:
                self.tracing.background(record, "subscription.round", time.perf_counter())

        stats.round_observers.append(round_done)

    # --- metrics ----------------------------------------------------------------------------------------------

    def scrape(self) -> bytes:
        """The metrics in the Prometheus text format 0.0.4."""
        assert self.registry is not None
        return generate_latest(self.registry)

    # --- the process ------------------------------------------------------------------------------------------

    def start(self) -> None:
        """The service's log records are exported too (with the trace they were written in)."""
        if self.logs is not None:
            for name in LOGGERS:
                logging.getLogger(name).addHandler(self.logs.handler)

    def shutdown(self) -> None:
        """Export what is left (bounded), then stop the exporters' threads. Blocking: run it in a thread."""
        if self.logs is not None:
            for name in LOGGERS:
                logging.getLogger(name).removeHandler(self.logs.handler)
            self.logs.provider.shutdown()
        if self.tracing is not None:
            self.tracing.provider.force_flush(int(FLUSH_TIMEOUT * 1000))
            self.tracing.provider.shutdown()
        if self.metrics is not None:
            self.metrics.provider.shutdown(timeout_millis=FLUSH_TIMEOUT * 1000)


# --- metrics --------------------------------------------------------------------------------------------------


class Metrics:
    """Every instrument of the spec's metric table, on one `MeterProvider` its readers share."""

    def __init__(self, resource: Resource, readers: list[MetricReader], version: str) -> None:
        seconds = {"unit": "s", "explicit_bucket_boundaries_advisory": BUCKETS}
        # No exemplars: sampling one per bucket would cost every recording a look at the current span.
        self.provider = MeterProvider(
            resource=resource, metric_readers=readers, exemplar_filter=AlwaysOffExemplarFilter()
        )
        meter = self.provider.get_meter("svc", version)
        #: Requests being answered (read when collected).
        self.active = 0
        self._names: set[str] = set()
        self._http = meter.create_histogram(
            "http.server.request.duration", description="Duration of HTTP server requests.", **seconds
        )
        self._graphql = meter.create_histogram(
            "svc.graphql.operation.duration", description="Duration of GraphQL operations.", **seconds
        )
        self._database = meter.create_histogram(
            "db.client.operation.duration", description="Duration of database client operations.", **seconds
        )
        self._planning = meter.create_histogram(
            "svc.planning.duration",
            description="Duration of planning and compiling an operation whose compiled form was not cached.",
            **seconds,
        )
        self.round = meter.create_histogram(
            "svc.subscription.round.duration", description="Duration of subscription polling rounds.", **seconds
        )
        meter.create_observable_up_down_counter(
            "http.server.active_requests",
            [lambda _: [Observation(self.active)]],
            unit="{request}",
            description="Number of active HTTP server requests.",
        )
        meter.create_observable_counter(
            "svc.cache.requests",
            [_caches],
            unit="{request}",
            description="Lookups of the document and operation caches.",
        )
        meter.create_observable_gauge(
            "svc.build_info", [lambda _: [Observation(1, {"version": version})]], description="The build serving."
        )
        started = _process_start()
        meter.create_observable_gauge(
            "process.start_time",
            [lambda _: [Observation(started)]],
            unit="s",
            description="Start time of the process since the Unix epoch.",
        )
        self._meter = meter

    def request(self, record: Record, method: str, status: int, ended: float) -> None:
        method = method if method in METHODS else "_OTHER"
        attributes = {
            "http.request.method": method,
            "http.route": record.route,
            "http.response.status_code": status,
        }
        self._http.record(ended - record.started, attributes)
        if record.operation is not None:
            kind, name = record.operation
            if name not in self._names:
                if len(self._names) < OPERATION_NAMES:
                    self._names.add(name)
                else:
                    name = "_OTHER"
            stages = record.stages
            duration = stages[-1][2] - stages[0][1] if stages else ended - record.started
            labels = {"graphql.operation.type": kind, "graphql.operation.name": name}
            if record.error is not None:
                labels["error.type"] = record.error
            self._graphql.record(duration, labels)
        if record.planned_afresh:
            api = "graphql" if record.operation is not None or record.route.startswith("/graphql") else "rest"
            planning = sum(end - start for name, start, end in record.stages if name.endswith(_PLANNING))
            self._planning.record(planning, {"svc.api": api})
        self.operations(record)

    def operations(self, record: Record) -> None:
        for operation in record.operations:
            labels = {"db.system.name": "postgresql", "svc.operation.type": operation.kind}
            if operation.sqlstate is not None:
                labels["error.type"] = operation.sqlstate
            self._database.record(operation.ended - operation.started, labels)

    def observe_pools(self, pools: Callable[[], Iterable[Any]]) -> None:
        """Connection gauges of each pool (`PoolStats`: name, size, idle, used, pending) that `pools` lists."""

        def counts(_: CallbackOptions) -> Iterable[Observation]:
            for stats in pools():
                name = {"db.client.connection.pool.name": stats.name}
                yield Observation(stats.idle, {**name, "db.client.connection.state": "idle"})
                yield Observation(stats.used, {**name, "db.client.connection.state": "used"})

        def each(value: Callable[[Any], int]) -> Callable[[CallbackOptions], Iterable[Observation]]:
            return lambda _: [Observation(value(s), {"db.client.connection.pool.name": s.name}) for s in pools()]

        self._meter.create_observable_up_down_counter(
            "db.client.connection.count", [counts], unit="{connection}", description="Connections by state."
        )
        self._meter.create_observable_up_down_counter(
            "db.client.connection.max",
            [each(lambda s: s.size)],
            unit="{connection}",
            description="The most connections a pool opens.",
        )
        self._meter.create_observable_up_down_counter(
            "db.client.connection.pending_requests",
            [each(lambda s: s.pending)],
            unit="{request}",
            description="Requests waiting for a connection.",
        )

    def observe_deliveries(self, deliveries: Mapping[tuple[str, str], int]) -> None:
        """Event delivery attempts by (trigger, outcome), as the dispatcher counts them."""
        self._meter.create_observable_counter(
            "svc.event.deliveries",
            [
                lambda _: [
                    Observation(count, {"svc.event.trigger": trigger, "svc.event.outcome": outcome})
                    for (trigger, outcome), count in list(deliveries.items())
                ]
            ],  # fmt: skip
            unit="{delivery}",
            description="Webhook delivery attempts by trigger and outcome.",
        )

    def observe_subscriptions(self, stats: Any) -> None:
        """The subscription poller's gauges and counts (its `Stats`), read when collected."""
        self._meter.create_observable_up_down_counter(
            "svc.subscription.active",
            [lambda _: [Observation(stats.active)]],
            unit="{subscription}",
            description="Live subscriptions.",
        )
        self._meter.create_observable_counter(
            "svc.subscription.results",
            [lambda _: [Observation(stats.results)]],
            unit="{result}",
            description="Subscription results sent.",
        )


#: Stages that plan and compile (the planning histogram sums them when the compiled form was made afresh).
_PLANNING = (".plan", ".compile")


def _caches(_: CallbackOptions) -> Iterable[Observation]:
    for (cache, result), count in cache_counts().items():
        yield Observation(count, {"svc.cache.name": cache, "svc.cache.result": result})


def _process_start() -> float:
    """When this process started, in seconds since the epoch (Linux: from /proc; else when this was first asked)."""
    try:
        with open("/proc/self/stat") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as system:
            boot = next(int(line.split()[1]) for line in system if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration, IndexError):
        return time.time()


# --- traces ---------------------------------------------------------------------------------------------------


class Tracing:
    """Spans of requests: the server span, started when the request arrives (logs during it name its trace), and
    its children made from the record when it is answered."""

    def __init__(self, resource: Resource, exporter: SpanExporter, endpoint: str, sample_ratio: float) -> None:
        self.provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(sample_ratio)))
        self.provider.add_span_processor(
            BatchSpanProcessor(_GuardedSpans(exporter, "traces", endpoint), max_queue_size=QUEUE_SIZE)
        )
        self.tracer = self.provider.get_tracer("svc")
        self._propagator = TraceContextTextMapPropagator()

    def start(self, record: Record, method: str, headers: Mapping[str, str]) -> trace.Span:
        """The request's server span (named by the route the table matched; `end` renames it when the handler
        named a better one), continuing the caller's trace when it sends `traceparent`."""
        parent = self._propagator.extract(headers) if "traceparent" in headers else None
        return self.tracer.start_span(
            _span_name(method, record.route),
            context=parent,
            kind=SpanKind.SERVER,
            start_time=record.started_ns,
            attributes={"http.request.method": method, "request_id": record.request_id},
        )

    def end(self, span: trace.Span, record: Record, method: str, status: int, ended: float) -> None:
        if not span.is_recording():
            return
        span.update_name(_span_name(method, record.route))
        span.set_attribute("http.route", record.route)
        span.set_attribute("http.response.status_code", status)
        if record.operation is not None:
            span.set_attribute("graphql.operation.type", record.operation[0])
            span.set_attribute("graphql.operation.name", record.operation[1])
        if status >= 500:
            span.set_attribute("error.type", str(status))
            span.set_status(Status(StatusCode.ERROR))
        self._children(span, record)
        span.end(end_time=record.wall_ns(ended))

    def background(self, record: Record, name: str, ended: float) -> None:
        span = self.tracer.start_span(
            name, kind=SpanKind.INTERNAL, start_time=record.started_ns, attributes={"request_id": record.request_id}
        )
        if span.is_recording():
            self._children(span, record)
        span.end(end_time=record.wall_ns(ended))

    def _children(self, span: trace.Span, record: Record) -> None:
        """The stages (children of `span`) and the database operations (children of the stage they ran in)."""
        within = trace.set_span_in_context(span)
        stages: list[tuple[float, float, Any]] = []
        tag = {"request_id": record.request_id}
        for name, start, end in record.stages:
            child = self.tracer.start_span(name, context=within, start_time=record.wall_ns(start), attributes=tag)
            child.end(end_time=record.wall_ns(end))
            stages.append((start, end, trace.set_span_in_context(child)))
        for operation in record.operations:
            parent = next((c for s, e, c in reversed(stages) if s <= operation.started <= e), within)
            text = operation.text()
            attributes: dict[str, Any] = {
                **tag,
                "db.system.name": "postgresql",
                "db.query.text": text,
                "svc.operation.type": operation.kind,
            }
            if operation.sqlstate is not None:
                attributes["db.response.status_code"] = operation.sqlstate
                attributes["error.type"] = operation.sqlstate
            child = self.tracer.start_span(
                _statement_name(text),
                context=parent,
                kind=SpanKind.CLIENT,
                start_time=record.wall_ns(operation.started),
                attributes=attributes,
            )
            if operation.sqlstate is not None:
                child.set_status(Status(StatusCode.ERROR))
            child.end(end_time=record.wall_ns(operation.ended))


def _span_name(method: str, route: str) -> str:
    method = method if method in METHODS else "HTTP"
    return f"{method} {route}" if route else method


def _statement_name(statement: str) -> str:
    """A database span's name: the statement's first keyword (`select`, `with`, `insert`...) and the system."""
    head = statement.lstrip().split(None, 1)
    return f"{head[0].lower()} postgresql" if head else "postgresql"


# --- logs -----------------------------------------------------------------------------------------------------


class OtlpLogs:
    """Log records of the service's loggers exported over OTLP, each with the trace and span it was written in."""

    def __init__(self, resource: Resource, exporter: LogRecordExporter, endpoint: str) -> None:
        self.provider = LoggerProvider(resource=resource)
        self.provider.add_log_record_processor(
            BatchLogRecordProcessor(_GuardedLogs(exporter, "logs", endpoint), max_queue_size=QUEUE_SIZE)
        )
        self.handler = _OtlpHandler(self.provider)


class _OtlpHandler(logging.Handler):
    """A log record as an OTLP log record: its message, level, logger, request id and exception, in the context of
    the request's server span (so it carries the trace and span ids)."""

    def __init__(self, provider: LoggerProvider) -> None:
        super().__init__()
        self._logger = provider.get_logger("svc")

    def emit(self, record: logging.LogRecord) -> None:
        request = record_var.get()
        span = request.span if request is not None else None
        attributes: dict[str, Any] = {"logger": record.name}
        if request is not None:
            attributes["request_id"] = request.request_id
        if record.exc_info and record.exc_info[1] is not None:
            attributes["exception.type"] = type(record.exc_info[1]).__name__
            attributes["exception.message"] = str(record.exc_info[1])
        self._logger.emit(
            timestamp=int(record.created * 1e9),
            context=trace.set_span_in_context(span) if isinstance(span, trace.Span) else None,
            severity_number=_SEVERITY.get(record.levelno, SeverityNumber.INFO),
            severity_text=record.levelname,
            body=record.getMessage(),
            attributes=attributes,
        )


_SEVERITY = {
    logging.DEBUG: SeverityNumber.DEBUG,
    logging.INFO: SeverityNumber.INFO,
    logging.WARNING: SeverityNumber.WARN,
    logging.ERROR: SeverityNumber.ERROR,
    logging.CRITICAL: SeverityNumber.FATAL,
}


# --- exporting without failing requests -------------------------------------------------------------------------


class _Outage:
    """Counts what a signal failed to export and logs once when exporting starts failing and once when it
    recovers (never per batch)."""

    def __init__(self, signal: str, endpoint: str) -> None:
        self.signal = signal
        self.endpoint = endpoint
        self.failing = False
        self.dropped = 0

    def failed(self, items: int) -> None:
        self.dropped += items
        if not self.failing:
            self.failing = True
            log.warning("OTLP %s export to %s failed: dropping %s until it answers (%d dropped so far)",
                        self.signal, self.endpoint, self.signal, self.dropped)  # fmt: skip

    def succeeded(self) -> None:
        if self.failing:
            self.failing = False
            log.info("OTLP %s export to %s works again (%d dropped in all)", self.signal, self.endpoint, self.dropped)

    def export(self, export: Callable[[], Any], items: int, success: Any, failure: Any) -> Any:
        """Run one export (an exporter that raises fails its batch, never the thread exporting it) and count it."""
        try:
            result = export()
        except Exception:
            result = failure
        if result is success:
            self.succeeded()
        else:
            self.failed(items)
        return result


class _GuardedSpans(SpanExporter):
    def __init__(self, inner: SpanExporter, signal: str, endpoint: str) -> None:
        self._inner = inner
        self.outage = _Outage(signal, endpoint)

    def export(self, spans: Any) -> SpanExportResult:
        return self.outage.export(
            lambda: self._inner.export(spans), len(spans), SpanExportResult.SUCCESS, SpanExportResult.FAILURE
        )

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class _GuardedLogs(LogRecordExporter):
    def __init__(self, inner: LogRecordExporter, signal: str, endpoint: str) -> None:
        self._inner = inner
        self.outage = _Outage(signal, endpoint)

    def export(self, batch: Any) -> LogRecordExportResult:
        return self.outage.export(
            lambda: self._inner.export(batch), len(batch), LogRecordExportResult.SUCCESS, LogRecordExportResult.FAILURE
        )

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class _GuardedMetrics(MetricExporter):
    def __init__(self, inner: MetricExporter, signal: str, endpoint: str) -> None:
        super().__init__()  # cumulative, the default aggregations: as the scrape sees them
        self._inner = inner
        self.outage = _Outage(signal, endpoint)

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        items = sum(len(s.metrics) for r in metrics_data.resource_metrics for s in r.scope_metrics)
        return self.outage.export(
            lambda: self._inner.export(metrics_data, timeout_millis),
            items,
            MetricExportResult.SUCCESS,
            MetricExportResult.FAILURE,
        )

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._inner.shutdown(timeout_millis=timeout_millis)


class _QueueFull(logging.Filter):
    """The SDK's batch processors log a warning for each span or log record a full queue drops (a collector slower
    than the service): each is counted here, and one warning per burst is let through."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0
        self._last = 0.0

    def install(self) -> None:
        logger = logging.getLogger("opentelemetry.sdk._shared_internal")
        if self not in logger.filters:
            logger.addFilter(self)
        # Each failed export is reported once per outage by `_Outage`; the exporters' own lines would repeat it.
        logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Queue full"):
            return True
        self.dropped += 1
        now = time.monotonic()
        quiet, self._last = now - self._last < _QUIET_SECONDS, now
        return not quiet


#: A burst of drops from a full queue is logged once; a drop after this long a pause starts a new burst.
_QUIET_SECONDS = 60.0
_QUEUE_FULL = _QueueFull()
