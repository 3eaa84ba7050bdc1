"""A webhook receiver on loopback for the event tests: a real HTTP/1.1 server (Trio and h11, keep-alive like a
production receiver) that records every request and answers as the test says: a status code, `HANG` (never
answers; the connection stays open), `CLOSE` (drops the connection without an answer), `ANSWER_THEN_CLOSE`, or
`Slow(seconds, status)`.

Signatures are verified with the PyPI `standardwebhooks` package, the reference implementation, not our code.
"""

import json
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import h11
import trio
from standardwebhooks import Webhook

HANG = "hang"
CLOSE = "close"
#: Answers 200, then closes the connection without saying so (as a receiver dropping idle connections does).
ANSWER_THEN_CLOSE = "answer-then-close"


@attrs.frozen
class Slow:
    """Answers `status` after `seconds`."""

    seconds: float
    status: int = 200


Answer = int | str | Slow


@attrs.frozen
class Received:
    headers: dict[str, str]
    body: bytes
    #: trio.current_time() when the whole request had arrived.
    at: float
    path: str

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def id(self) -> str:
        return self.headers["webhook-id"]

    def verified(self, secret: str) -> Any:
        """The payload, after `standardwebhooks` checked the signature against `secret` (raises if it does not)."""
        return Webhook(secret).verify(self.body, self.headers)


class Receiver:
    def __init__(self, answer: Callable[[Received], Answer], tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls
        self.received: list[Received] = []
        self.port = 0
        self.changed = trio.Event()
        #: Connections accepted so far.
        self.connections = 0

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/hook"

    def of(self, event_id: str) -> list[Received]:
        return [r for r in self.received if r.id == event_id]

    async def wait_for(self, predicate: Callable[[list[Received]], bool], *, timeout: float = 10.0) -> None:
        """Wait until `predicate(received)` holds; fail the test after `timeout` seconds."""
        with trio.fail_after(timeout):
            while not predicate(self.received):
                self.changed = trio.Event()
                await self.changed.wait()

    async def _serve(self, tcp: trio.SocketStream) -> None:
        stream: trio.abc.Stream = tcp
        if self.tls is not None:
            stream = trio.SSLStream(tcp, self.tls, server_side=True)
        conn = h11.Connection(h11.SERVER)
        self.connections += 1
        request: h11.Request | None = None
        body = b""
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await stream.receive_some(65536)
                    if not data:
                        return
                    conn.receive_data(data)
                elif isinstance(event, h11.Request):
                    request, body = event, b""
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    assert request is not None
                    headers = {k.decode().lower(): v.decode() for k, v in request.headers}
                    received = Received(headers, body, trio.current_time(), request.target.decode())
                    self.received.append(received)
                    self.changed.set()
                    answer = self.answer(received)
                    if isinstance(answer, Slow):
                        await trio.sleep(answer.seconds)
                        answer = answer.status
                    if answer == HANG:
                        await trio.sleep_forever()
                    if answer == CLOSE:
                        return
                    status = 200 if answer == ANSWER_THEN_CLOSE else answer
                    assert isinstance(status, int)
                    response = h11.Response(status_code=status, headers=[("content-length", "0")])
                    await stream.send_all(conn.send(response) + conn.send(h11.EndOfMessage()))
                    if answer == ANSWER_THEN_CLOSE:
                        return
                    conn.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError, ssl.SSLError):
            return
        finally:
            await stream.aclose()


@asynccontextmanager
async def running_receiver(
    answer: Callable[[Received], Answer] = lambda _: 200, *, tls: ssl.SSLContext | None = None
) -> AsyncIterator[Receiver]:
    """A receiver on 127.0.0.1 and an ephemeral port (https with the `tls` server context), answering each request
    with `answer(request)`."""
    receiver = Receiver(answer, tls)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, receiver._serve, 0, host="127.0.0.1"))
        receiver.port = listeners[0].socket.getsockname()[1]
        yield receiver
        nursery.cancel_scope.cancel()
