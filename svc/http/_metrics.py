"""The metrics exposition (SPEC "Telemetry", "Endpoints"): GET `telemetry.metrics.path` answers the Prometheus text
format 0.0.4, never rate-limited and without a token, on the API port or, with `telemetry.metrics.listen`, on a
listener of its own (the server then leaves it off the API port).
"""

from svc.telemetry.export import METRICS_CONTENT_TYPE, Telemetry

from ._messages import Request, Response
from ._routing import Route


class MetricsRoutes:
    def __init__(self, path: str, telemetry: Telemetry) -> None:
        self._path = path
        self._telemetry = telemetry

    def routes(self) -> list[Route]:
        return [Route(self._path, frozenset({"GET"}), self.metrics, needs_snapshot=False)]

    async def metrics(self, request: Request) -> Response:
        return Response(200, self._telemetry.scrape(), METRICS_CONTENT_TYPE)
