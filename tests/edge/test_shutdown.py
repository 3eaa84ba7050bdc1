"""Graceful shutdown under load, on both HTTP edges (issue 22, CONTRACT "Graceful shutdown"): a real `svc run`
process serving 16 keep-alive clients that create rows through GraphQL gets SIGTERM; it answers every request whose
bytes it read (with `connection: close`), commits no write it does not answer, closes idle keep-alive connections at
once, refuses new connections, and exits 0 as soon as nothing is in flight, well under `server.shutdown_timeout`."""

import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import trio

from tests.support.postgres import fetch
from tests.support.process import SVC, service_process

pytestmark = pytest.mark.slow

DATABASE_FIXTURES = ["writes.sql"]
#: Both edges: hypercorn's HTTP/1.1 connections are closed by svc.edge._HandedOver only when no request they read is
#: unanswered, since hypercorn's own shutdown closed keep-alive connections while a request was arriving on them.
EDGES = ["fast", "hypercorn"]

CLIENTS = 16
LOAD_SECONDS = 3.0
SHUTDOWN_TIMEOUT = 20  # seconds, in svc.yaml; the exit must come well before it
EXIT_BOUND = 5.0
#: How long the server may take to notice SIGTERM at the latest; until a response shows it noticed (one carrying
#: `connection: close`), an answer without it may still come from before the notice.
NOTICE_BOUND = 1.0

CREATE = "mutation($label: String!) { createTag(input: {label: $label}) { tag { rowId label } } }"


def _write_config(tmp_path, edge: str) -> None:
    (tmp_path / "svc.yaml").write_text(
        f"server: {{host: 127.0.0.1, port: 0, http: {edge}, shutdown_timeout: {SHUTDOWN_TIMEOUT}s}}\n"
        "database: {schemas: [app]}\n"
    )


@dataclass
class Answer:
    client: int
    label: str
    sent_at: float
    received_at: float
    status: int
    acknowledged: bool
    closes: bool  # the response carried `connection: close`
    stream: Any  # the connection it came on (held, so identity is unique)


@dataclass
class Load:
    sent: list[str] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)
    answers: list[Answer] = field(default_factory=list)
    refused: int = 0  # a new connection refused: the client's normal end
    dropped: list[tuple[int, str, str]] = field(default_factory=list)  # (client, label, error) with no answer
    sigterm_at: float | None = None
    exited_at: float | None = None


async def _client(url: str, prefix: str, number: int, load: Load) -> None:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=SHUTDOWN_TIMEOUT + 5) as client:
        counter = 0
        while True:
            label = f"{prefix}{number}-{counter}"
            counter += 1
            load.sent.append(label)
            sent_at = trio.current_time()
            try:
                response = await client.post("/graphql", json={"query": CREATE, "variables": {"label": label}})
            except httpx.ConnectError:
                load.refused += 1
                return
            except httpx.HTTPError as exc:
                load.dropped.append((number, label, f"{type(exc).__name__}: {exc}"))
                return
            try:
                body = response.json()
            except ValueError:
                body = {}
            data = body.get("data") if isinstance(body, dict) else None
            acknowledged = bool(data and data.get("createTag") and data["createTag"]["tag"]["label"] == label)
            if acknowledged:
                load.acknowledged.add(label)
            load.answers.append(
                Answer(
                    client=number,
                    label=label,
                    sent_at=sent_at,
                    received_at=trio.current_time(),
                    status=response.status_code,
                    acknowledged=acknowledged,
                    closes="close" in response.headers.get("connection", "").lower(),
                    stream=response.extensions.get("network_stream"),
                )
            )


@pytest.mark.parametrize("edge", EDGES)
async def test_sigterm_under_load_answers_what_it_commits_and_exits_promptly(tmp_path, database_url, edge):
    _write_config(tmp_path, edge)
    load = Load()
    with trio.fail_after(55):
        async with service_process([SVC, "run"], cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
            assert service.url is not None, service.log

            async def watch_exit() -> None:
                await service.exited.wait()
                load.exited_at = trio.current_time()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch_exit)
                for number in range(CLIENTS):
                    nursery.start_soon(_client, service.url, f"{edge}-load-", number, load)
                await trio.sleep(LOAD_SECONDS)
                load.sigterm_at = trio.current_time()
                service.send_signal(signal.SIGTERM)
            returncode = await service.wait(timeout=5)

    sigterm_at, exited_at = load.sigterm_at, load.exited_at
    assert exited_at is not None
    exit_seconds = exited_at - sigterm_at
    unanswered = sorted(set(load.sent) - load.acknowledged)
    committed = {
        label for (label,) in fetch(database_url, "select label from app.tags where label like %s", [f"{edge}-load-%"])
    }
    committed_without_answer = sorted(committed & set(unanswered))
    acknowledged_not_committed = sorted(load.acknowledged - committed)
    before = [a for a in load.answers if a.acknowledged and a.received_at < sigterm_at]
    after = [a for a in load.answers if a.received_at >= sigterm_at]

    # After the server noticed SIGTERM (at the latest NOTICE_BOUND after it; at the earliest when the first answer
    # carrying `connection: close` arrived), an answer on a connection without `connection: close` must be that
    # connection's last one: a later request on it would race the server closing it.
    first_close = min((a.received_at for a in after if a.closes), default=float("inf"))
    noticed_by = min(first_close, sigterm_at + NOTICE_BOUND)
    last_on_connection: dict[int, Answer] = {}
    for answer in sorted(load.answers, key=lambda a: a.received_at):
        last_on_connection[id(answer.stream)] = answer
    kept_open = [
        (a.client, a.label, round(a.sent_at - sigterm_at, 3), a.status)
        for a in after
        if a.sent_at >= noticed_by and not a.closes and last_on_connection[id(a.stream)] is not a
    ]

    # The same without the allowance for the moment of notice (for the report only: it races the signal's delivery).
    not_closing_nor_last = [a for a in after if not a.closes and last_on_connection[id(a.stream)] is not a]

    summary = (
        f"edge={edge} sent={len(load.sent)} acknowledged={len(load.acknowledged)} "
        f"answered_before_sigterm={len(before)} answered_after_sigterm={len(after)} "
        f"(with connection: close {sum(a.closes for a in after)}) refused={load.refused} "
        f"answered_with_errors={sum(not a.acknowledged for a in load.answers)} "
        f"dropped={len(load.dropped)} committed_without_answer={len(committed_without_answer)} "
        f"acknowledged_not_committed={len(acknowledged_not_committed)} kept_open_after_notice={len(kept_open)} "
        f"(before notice: {len(not_closing_nor_last)}) "
        f"exit_seconds={exit_seconds:.2f} returncode={returncode}"
    )
    print(summary)
    print("dropped:", load.dropped[:5])
    print("statuses:", sorted({a.status for a in load.answers}))

    assert {a.client for a in before} == set(range(CLIENTS)), summary  # every client was served before SIGTERM
    assert returncode == 0, summary + "\n" + service.log[-3000:]
    assert exit_seconds < EXIT_BOUND, summary
    assert committed_without_answer == [], summary
    assert acknowledged_not_committed == [], summary
    assert kept_open == [], summary + f" first kept open: {kept_open[:5]}"


@pytest.mark.parametrize("edge", EDGES)
async def test_sigterm_closes_an_idle_keep_alive_connection_at_once_while_a_request_is_in_flight(
    tmp_path, database_url, edge
):
    _write_config(tmp_path, edge)
    entry = [sys.executable, "-m", "tests.support.slow_service", str(tmp_path / "svc.yaml")]
    with trio.fail_after(40):
        async with service_process(entry, cwd=tmp_path, env={"DATABASE_URL": database_url}) as service:
            assert service.url is not None, service.log
            host, port = service.url.removeprefix("http://").rsplit(":", 1)

            # An idle keep-alive connection: one request, its whole answer, and nothing since.
            idle = await trio.open_tcp_stream(host, int(port))
            await idle.send_all(f"GET /live HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            head, rest = await _read_response(idle)
            assert head.startswith(b"HTTP/1.1 200"), head
            assert b"connection: close" not in head.lower(), head

            slow: list[tuple[int, Any, str, float]] = []
            async with httpx.AsyncClient(base_url=service.url, timeout=30) as client, trio.open_nursery() as nursery:

                async def slow_request() -> None:
                    response = await client.get("/slow", params={"seconds": "3"})
                    slow.append((response.status_code, response.json(), response.headers.get("connection", ""),
                                 trio.current_time()))  # fmt: skip

                nursery.start_soon(slow_request)
                await trio.sleep(0.5)  # the slow request is in flight
                sigterm_at = trio.current_time()
                service.send_signal(signal.SIGTERM)

                # The idle connection is closed at once, not when the slow request ends.
                late_bytes = rest
                with trio.move_on_after(5):
                    while True:
                        try:
                            chunk = await idle.receive_some(65536)
                        except (trio.BrokenResourceError, ConnectionError):
                            chunk = b""
                        if not chunk:
                            break
                        late_bytes += chunk
                idle_closed_after = trio.current_time() - sigterm_at
                await idle.aclose()

                # A new connection is refused while the slow request is still in flight.
                await trio.sleep(max(0.0, sigterm_at + 0.3 - trio.current_time()))
                refused_at = trio.current_time() - sigterm_at
                try:
                    fresh = await trio.open_tcp_stream(host, int(port))
                except OSError:
                    refused = True
                else:
                    refused = False
                    await fresh.aclose()
                in_flight_when_refused = not slow

            returncode = await service.wait(timeout=10)
            exited_after = trio.current_time() - sigterm_at

    summary = (
        f"edge={edge} idle_closed_after={idle_closed_after:.2f}s bytes_on_idle_after_sigterm={late_bytes!r} "
        f"refused={refused} (at {refused_at:.2f}s, slow request in flight: {in_flight_when_refused}) "
        f"slow={slow} exited_after={exited_after:.2f}s returncode={returncode}"
    )
    print(summary)
    assert idle_closed_after < 1.0, summary
    assert late_bytes == b"", summary
    assert in_flight_when_refused and refused, summary
    ((status, body, connection, answered_at),) = slow
    assert (status, body) == (200, {"slept": 3.0}), summary
    assert "close" in connection.lower(), summary
    assert returncode == 0, summary
    assert exited_after < EXIT_BOUND, summary


async def _read_response(stream: trio.SocketStream) -> tuple[bytes, bytes]:
    """One response with a Content-Length body: its head, and whatever came after its body (should be nothing)."""
    buffer = b""
    with trio.fail_after(5):
        while b"\r\n\r\n" not in buffer:
            chunk = await stream.receive_some(65536)
            assert chunk, buffer
            buffer += chunk
        head, _, body = buffer.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")[1:]
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            chunk = await stream.receive_some(65536)
            assert chunk, buffer
            body += chunk
    return head, body[length:]


async def test_a_connection_handed_to_hypercorn_before_its_server_runs_is_left_for_the_next_look():
    """Shutdown can come between handing a connection to hypercorn and hypercorn naming its protocol: the edge's look
    at it then does nothing (it asks again), rather than failing the edge's shutdown."""
    import socket as stdlib_socket

    from hypercorn.trio.tcp_server import TCPServer
    from hypercorn.typing import ConnectionState

    from svc.edge import EdgeSettings, _Edge, _HandedOver, _hypercorn_config

    async def app(scope, receive, send) -> None:
        raise AssertionError("never called")

    settings = EdgeSettings(http="hypercorn")
    edge = _Edge(app, settings, _hypercorn_config(settings))
    a, b = stdlib_socket.socketpair()
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(a))
    handed = _HandedOver(edge, stream)
    handed.server = TCPServer(handed.app, edge.hc, handed.context, ConnectionState({}), stream)
    await handed.shutdown(readable=False)
    assert not handed.context.terminated.is_set()
    await stream.aclose()
    b.close()
