"""A Trio TCP proxy between the service and PostgreSQL that can delay, drop and cut, or go down and come back.

Modes: `pass` forwards bytes as they come; `delay` waits `delay` seconds before forwarding each chunk; `drop`
holds every byte (a black hole: connections stay open, nothing arrives). `cut()` closes every proxied
connection at once, mid-statement if one is running. `down()` cuts and stops listening, so new connections are
refused as by a stopped server; `up()` listens again on the same port.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import trio

Mode = Literal["pass", "delay", "drop"]


class FaultProxy:
    def __init__(self, upstream: tuple[str, int] | str, nursery: trio.Nursery) -> None:
        self.upstream = upstream
        self.mode: Mode = "pass"
        self.delay = 0.0
        self.port = 0
        self.connections_made = 0
        #: Round trips per link (by the client's stream), counted as turns of the conversation: the client sending
        #: after it heard from the server (or first). A link's count stays after it closes.
        self.round_trips: dict[trio.abc.Stream, int] = {}
        self._answered: dict[trio.abc.Stream, bool] = {}
        self._nursery = nursery
        self._links: set[trio.CancelScope] = set()
        self._listening: trio.CancelScope | None = None
        self._mode_changed = trio.Event()

    def set_mode(self, mode: Mode, delay: float = 0.0) -> None:
        self.mode, self.delay = mode, delay
        self._mode_changed.set()
        self._mode_changed = trio.Event()

    def cut(self) -> None:
        for scope in list(self._links):
            scope.cancel()

    def down(self) -> None:
        self.cut()
        if self._listening is not None:
            self._listening.cancel()
            self._listening = None

    async def up(self) -> None:
        await self._nursery.start(self._listen)

    async def _listen(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        listener = listeners[0]
        self.port = listener.socket.getsockname()[1]
        with trio.CancelScope() as scope:
            self._listening = scope
            task_status.started()
            async with listener:
                while True:
                    client = await listener.accept()
                    self._nursery.start_soon(self._link, client)

    async def _link(self, client: trio.SocketStream) -> None:
        self.connections_made += 1
        with trio.CancelScope() as scope:
            self._links.add(scope)
            try:
                async with client, await self._connect_upstream() as server:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._pump, client, server, nursery.cancel_scope, True)
                        nursery.start_soon(self._pump, server, client, nursery.cancel_scope, False)
            except* (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # one side went away: the link is over (the pumps' errors arrive as a group)
            finally:
                self._links.discard(scope)
                self._answered.pop(client, None)

    async def _connect_upstream(self) -> trio.abc.Stream:
        if isinstance(self.upstream, str):
            return await trio.open_unix_socket(self.upstream)
        return await trio.open_tcp_stream(*self.upstream)

    async def _pump(self, source: trio.abc.Stream, sink: trio.abc.Stream, link: trio.CancelScope, upward: bool) -> None:
        try:
            while chunk := await source.receive_some(65536):
                client = source if upward else sink
                if upward and self._answered.get(client, True):
                    self.round_trips[client] = self.round_trips.get(client, 0) + 1
                self._answered[client] = not upward
                while self.mode == "drop":
                    await self._mode_changed.wait()
                if self.mode == "delay":
                    await trio.sleep(self.delay)
                await sink.send_all(chunk)
        finally:
            link.cancel()


@asynccontextmanager
async def open_fault_proxy(upstream: tuple[str, int] | str) -> AsyncIterator[FaultProxy]:
    async with trio.open_nursery() as nursery:
        proxy = FaultProxy(upstream, nursery)
        await proxy.up()
        try:
            yield proxy
        finally:
            nursery.cancel_scope.cancel()
