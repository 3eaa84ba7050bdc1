"""`python -m tests.support.slow_service <svc.yaml>`: the service exactly as `svc run` starts it (svc.server.run),
plus a route `/slow?seconds=N` standing in for a long API request, for shutdown tests in a separate process."""

import sys
from urllib.parse import parse_qs

import trio

from svc import server
from svc.config import load_config
from svc.http import Request, Response, Route
from svc.telemetry import configure_logging


async def slow(request: Request) -> Response:
    seconds = float(parse_qs(request.query_string.decode()).get("seconds", ["1"])[0])
    await trio.sleep(seconds)
    return Response.json({"slept": seconds})


def main() -> int:
    loaded = load_config(path=sys.argv[1])
    configure_logging()
    return server.run(loaded, routes=[Route("/slow", frozenset({"GET"}), slow)])


if __name__ == "__main__":
    sys.exit(main())
