"""An OTLP/HTTP receiver on loopback for the telemetry tests (TOOLS.md item 6b): a stdlib HTTP/1.1 server in a daemon
thread that accepts POST /v1/traces, /v1/metrics and /v1/logs in protobuf (gzip or deflate allowed), decodes them with
`opentelemetry-proto`, answers the matching Export*ServiceResponse, and keeps what arrived as plain dicts.

    with OtlpReceiver() as receiver:
        ...  # point the exporter at f"{receiver.endpoint}/v1/traces"
        receiver.wait_for(lambda r: any(s["name"] == "GET /x" for s in r.spans()))

Ids are lowercase hex (trace 32 digits, span 16; "" when absent), enums are their short names ("SERVER", "ERROR",
"CUMULATIVE"), attributes are dicts of plain values (arrays as lists, kvlists as dicts, bytes as bytes).

A slow collector is `delay` seconds before answering; a failing one answers `status` (e.g. 503, with `Retry-After`
when `retry_after` is set) and keeps nothing of what it refused. Both may be changed while the receiver runs.

`python -m tests.telemetry.receiver PORT [--delay S] [--status N]` prints one JSON line per request (path, headers,
decoded items); its address goes to stderr.
"""

import argparse
import copy
import gzip
import json
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality, Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

try:  # googleapis-common-protos comes with the OTLP exporters; the error body is optional in OTLP/HTTP
    from google.rpc.status_pb2 import Status as RpcStatus
except ImportError:  # pragma: no cover
    RpcStatus = None

Item = dict[str, Any]
#: Called in the server's thread for every accepted request: path, headers (lowercase names), decoded items.
OnRequest = Callable[[str, dict[str, str], list[Item]], None]

PROTOBUF = "application/x-protobuf"


# Decoding: protobuf messages to plain dicts.


def plain_value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [plain_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return plain_attributes(value.kvlist_value.values)
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return getattr(value, which)


def plain_attributes(attributes: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: plain_value(kv.value) for kv in attributes}


def _enum(enum: Any, number: int, prefix: str) -> str:
    try:
        return enum.Name(number).removeprefix(prefix)
    except ValueError:  # proto3 enums are open: an unknown number stays a number
        return str(number)


def _scope(scope: Any) -> dict[str, Any]:
    return {"name": scope.name, "version": scope.version, "attributes": plain_attributes(scope.attributes)}


def decode_spans(request: ExportTraceServiceRequest) -> list[Item]:
    items = []
    for resource_spans in request.resource_spans:
        resource = plain_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = _scope(scope_spans.scope)
            for span in scope_spans.spans:
                items.append(
                    {
                        "name": span.name,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "trace_state": span.trace_state,
                        "flags": span.flags,
                        "kind": _enum(Span.SpanKind, span.kind, "SPAN_KIND_"),
                        "status_code": _enum(Status.StatusCode, span.status.code, "STATUS_CODE_"),
                        "status_message": span.status.message,
                        "attributes": plain_attributes(span.attributes),
                        "events": [
                            {"name": e.name, "time_ns": e.time_unix_nano, "attributes": plain_attributes(e.attributes)}
                            for e in span.events
                        ],
                        "links": [
                            {
                                "trace_id": link.trace_id.hex(),
                                "span_id": link.span_id.hex(),
                                "attributes": plain_attributes(link.attributes),
                            }
                            for link in span.links
                        ],
                        "start_ns": span.start_time_unix_nano,
                        "end_ns": span.end_time_unix_nano,
                        "resource": resource,
                        "scope": scope,
                    }
                )
    return items


def _optional(message: Message, field: str) -> Any:
    return getattr(message, field) if message.HasField(field) else None


def _point(point: Any) -> Item:
    return {
        "attributes": plain_attributes(point.attributes),
        "start_ns": point.start_time_unix_nano,
        "time_ns": point.time_unix_nano,
    }


def _data_points(metric: Metric, kind: str) -> list[Item]:
    data = getattr(metric, kind)
    points = []
    for p in data.data_points:
        point = _point(p)
        if kind in ("gauge", "sum"):
            which = p.WhichOneof("value")
            point["value"] = getattr(p, which) if which else None
        elif kind == "histogram":
            point |= {
                "count": p.count,
                "sum": _optional(p, "sum"),
                "bucket_counts": list(p.bucket_counts),
                "explicit_bounds": list(p.explicit_bounds),
                "min": _optional(p, "min"),
                "max": _optional(p, "max"),
            }
        elif kind == "exponential_histogram":
            point |= {
                "count": p.count,
                "sum": _optional(p, "sum"),
                "scale": p.scale,
                "zero_count": p.zero_count,
                "positive": {"offset": p.positive.offset, "bucket_counts": list(p.positive.bucket_counts)},
                "negative": {"offset": p.negative.offset, "bucket_counts": list(p.negative.bucket_counts)},
                "min": _optional(p, "min"),
                "max": _optional(p, "max"),
            }
        elif kind == "summary":
            point |= {
                "count": p.count,
                "sum": p.sum,
                "quantiles": [(q.quantile, q.value) for q in p.quantile_values],
            }
        points.append(point)
    return points


def decode_metrics(request: ExportMetricsServiceRequest) -> list[Item]:
    items = []
    for resource_metrics in request.resource_metrics:
        resource = plain_attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            scope = _scope(scope_metrics.scope)
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                item: Item = {
                    "name": metric.name,
                    "description": metric.description,
                    "unit": metric.unit,
                    "kind": kind,
                    "resource": resource,
                    "scope": scope,
                    "data_points": _data_points(metric, kind) if kind else [],
                }
                if kind in ("sum", "histogram", "exponential_histogram"):
                    temporality = getattr(metric, kind).aggregation_temporality
                    item["temporality"] = _enum(AggregationTemporality, temporality, "AGGREGATION_TEMPORALITY_")
                if kind == "sum":
                    item["is_monotonic"] = metric.sum.is_monotonic
                items.append(item)
    return items


def decode_logs(request: ExportLogsServiceRequest) -> list[Item]:
    items = []
    for resource_logs in request.resource_logs:
        resource = plain_attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            scope = _scope(scope_logs.scope)
            for record in scope_logs.log_records:
                items.append(
                    {
                        # A string for the usual string body; a structured body stays a dict or list.
                        "body": plain_value(record.body),
                        "severity_text": record.severity_text,
                        "severity_number": record.severity_number,
                        "severity": _enum(SeverityNumber, record.severity_number, "SEVERITY_NUMBER_"),
                        "event_name": record.event_name,
                        "time_ns": record.time_unix_nano,
                        "observed_ns": record.observed_time_unix_nano,
                        "trace_id": record.trace_id.hex(),
                        "span_id": record.span_id.hex(),
                        "flags": record.flags,
                        "attributes": plain_attributes(record.attributes),
                        "resource": resource,
                        "scope": scope,
                    }
                )
    return items


# signal -> (request message, response message, decoder)
_ROUTES: dict[str, tuple[type[Message], type[Message], Callable[[Any], list[Item]]]] = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse, decode_spans),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse, decode_metrics),
    "/v1/logs": (ExportLogsServiceRequest, ExportLogsServiceResponse, decode_logs),
}


def _error_body(status: int, message: str) -> bytes:
    if RpcStatus is None:  # pragma: no cover
        return b""
    return RpcStatus(code=14 if status == 503 else 2, message=message).SerializeToString()


# The server.


class _Server(ThreadingHTTPServer):
    """Keeps its open connections, so that closing the receiver also ends the clients' keep-alive connections."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], receiver: "OtlpReceiver"):
        self.receiver = receiver
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        receiver = self.server.receiver
        path = self.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in self.headers.items()}
        body = self._read_body()
        receiver._record_request(path, headers)
        if receiver.delay > 0 and receiver._closing.wait(receiver.delay):
            self.close_connection = True
            return
        route = _ROUTES.get(path)
        if route is None:
            self._answer(404, b"not an OTLP path\n", "text/plain")
            return
        status = receiver.status
        if not 200 <= status < 300:
            extra = {"Retry-After": f"{receiver.retry_after:g}"} if receiver.retry_after is not None else {}
            self._answer(status, _error_body(status, "simulated failure"), PROTOBUF, extra)
            return
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != PROTOBUF:
            self._answer(415, _error_body(415, f"only {PROTOBUF} is accepted, not {content_type!r}"), PROTOBUF)
            return
        encoding = headers.get("content-encoding", "identity").strip().lower()
        try:
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            elif encoding != "identity":
                self._answer(415, _error_body(415, f"unknown Content-Encoding {encoding!r}"), PROTOBUF)
                return
            request_type, response_type, decode = route
            items = decode(request_type.FromString(body))
        except (OSError, EOFError, zlib.error, DecodeError) as error:
            self._answer(400, _error_body(400, f"cannot decode the request: {error}"), PROTOBUF)
            return
        receiver._store(path, headers, items)
        self._answer(200, response_type().SerializeToString(), PROTOBUF)

    def do_GET(self) -> None:
        self._answer(405, b"POST only\n", "text/plain", {"Allow": "POST"})

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _answer(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
        pass


class OtlpReceiver:
    """An OTLP/HTTP protobuf receiver on 127.0.0.1 (port 0 = a free port), for use as a context manager."""

    def __init__(
        self,
        *,
        port: int = 0,
        delay: float = 0.0,
        status: int = 200,
        retry_after: float | None = None,
        on_request: OnRequest | None = None,
    ) -> None:
        #: Seconds to wait before answering each request (a slow collector); may be changed while running.
        self.delay = delay
        #: The status of every answer; anything but 2xx refuses the data (a failing collector).
        self.status = status
        #: Sent as `Retry-After` with a failing status (the OTel SDK honours it instead of its own backoff).
        self.retry_after = retry_after
        self.on_request = on_request
        self._port = port
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._spans: list[Item] = []
        self._metrics: list[Item] = []
        self._logs: list[Item] = []
        self._requests: list[tuple[str, dict[str, str]]] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="otlp-receiver", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._server is None:
            return
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the receiver is not running"
        return self._server.server_address[1]

    @property
    def endpoint(self) -> str:
        """The base URL ("http://127.0.0.1:PORT"); the SDK's exporters want f"{endpoint}/v1/traces" and so on."""
        return f"http://127.0.0.1:{self.port}"

    def spans(self) -> list[Item]:
        with self._lock:
            return copy.deepcopy(self._spans)

    def metrics(self) -> list[Item]:
        """Every metric of every request, in arrival order: a periodic reader's metric appears once per export."""
        with self._lock:
            return copy.deepcopy(self._metrics)

    def logs(self) -> list[Item]:
        with self._lock:
            return copy.deepcopy(self._logs)

    @property
    def requests(self) -> list[tuple[str, dict[str, str]]]:
        """(path, headers) of every request, refused ones included; header names are lowercase."""
        with self._lock:
            return copy.deepcopy(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._spans.clear()
            self._metrics.clear()
            self._logs.clear()
            self._requests.clear()

    def wait_for(self, predicate: Callable[["OtlpReceiver"], Any], timeout: float = 10.0) -> Any:
        """Poll until `predicate(self)` is truthy and return its value; AssertionError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate(self)
            if result:
                return result
            if time.monotonic() >= deadline:
                raise AssertionError(f"OTLP receiver: condition not met after {timeout:g}s; {self.summary()}")
            time.sleep(0.02)

    def summary(self) -> str:
        with self._lock:
            spans = [s["name"] for s in self._spans]
            metrics = sorted({m["name"] for m in self._metrics})
            logs = [str(entry["body"])[:60] for entry in self._logs]
            paths = [path for path, _ in self._requests]
        return f"{len(paths)} requests {paths[:20]}; spans {spans[:30]}; metrics {metrics[:30]}; logs {logs[:20]}"

    def _record_request(self, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append((path, headers))

    def _store(self, path: str, headers: dict[str, str], items: list[Item]) -> None:
        with self._lock:
            {"/v1/traces": self._spans, "/v1/metrics": self._metrics, "/v1/logs": self._logs}[path].extend(items)
        if self.on_request is not None:
            self.on_request(path, headers, copy.deepcopy(items))


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.telemetry.receiver", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int, help="port on 127.0.0.1 (0 = a free one, printed on stderr)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--status", type=int, default=200, help="status of every answer (non-2xx refuses the data)")
    args = parser.parse_args(argv)

    def show(path: str, headers: dict[str, str], items: list[Item]) -> None:
        print(json.dumps({"path": path, "headers": headers, "items": items}, default=_jsonable), flush=True)

    with OtlpReceiver(port=args.port, delay=args.delay, status=args.status, on_request=show) as receiver:
        print(json.dumps({"listening": receiver.endpoint}), file=sys.stderr, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
