"""The edge ceiling (bench/run.py's op `edge`): a constant ASGI app served by one of svc's HTTP edges.

    .venv/bin/python bench/edge_app.py --http fast|hypercorn --port N

Every HTTP request is answered 200 with the same small JSON body (EDGE_BODY, with content-type and content-length),
after its request body is read to the end (an app that left it unread would make the fast edge close the connection
after the response). No routing, GraphQL or database: what wrk gets out of it is what the edge itself costs, the
ceiling of any app served by that edge on this machine. The app is served by `svc.edge.serve_http` with
`EdgeSettings(http=...)` on 127.0.0.1 until SIGTERM or SIGINT, which set the shutdown event (in-flight requests are
answered, then the process exits 0).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import trio

from svc.edge import EdgeSettings, serve_http

#: The answer to every request; bench/run.py checks both edges give exactly this body.
EDGE_BODY = b'{"data":{"ok":true}}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(EDGE_BODY)).encode())]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": EDGE_BODY})


async def main(http: str, port: int) -> None:
    settings = EdgeSettings(http=http, host="127.0.0.1", port=port, shutdown_timeout=10.0)
    shutdown = trio.Event()
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(serve_http, app, settings, shutdown)
            print(f"edge_app: {http} edge serving on {', '.join(binds)}", flush=True)
            async for _ in signals:
                shutdown.set()
                break


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--http", choices=("fast", "hypercorn"), required=True, help="the edge that serves the app")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    args = parser.parse_args()
    trio.run(main, args.http, args.port)
    sys.exit(0)
