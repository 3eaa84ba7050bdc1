"""What every subscription transport shares (SPEC "Subscriptions"): an operation sent to a live transport becomes a
live subscription (registered with the poller) or, for a query or a mutation, one result; plus the deadline a
token's expiry puts on a subscription.

The transports are `_socket.py` (WebSocket, graphql-transport-ws, at the GraphQL path), and `_streams.py` (GraphQL
over server-sent events at `/graphql/stream`, multipart HTTP at the GraphQL path with
`Accept: multipart/mixed;subscriptionSpec=1.0`).
"""

import math
import time
from collections.abc import Hashable

import attrs
import trio

from svc.actors import Poller, Subscription
from svc.auth import Principal
from svc.config import Config
from svc.errors import Code, SvcError
from svc.graphql import GraphqlRequest, GraphqlResponse, LiveQuery
from svc.pipeline import Pipeline
from svc.snapshot import Snapshot

from ._clients import ClientKeys
from ._messages import Request

EXPIRED = SvcError(Code.UNAUTHENTICATED, "the token has expired")


@attrs.frozen
class Once:
    """A query's or a mutation's result (or a refusal) sent on a live transport: one result, then the end."""

    response: GraphqlResponse


class Live:
    """Opens operations for the transports: subscriptions through the poller, the rest answered at once."""

    def __init__(self, config: Config, pipeline: Pipeline, poller: Poller | None) -> None:
        self.pipeline = pipeline
        self.poller = poller
        self.leeway = config.auth.leeway.seconds
        rate_limit = config.limits.rate_limit
        self.clients = ClientKeys(rate_limit.key_claim, rate_limit.trusted_proxies)

    async def open(
        self, snapshot: Snapshot, request: Request, graphql: GraphqlRequest, request_id: str
    ) -> Subscription | Once:
        endpoint = snapshot.api(request.role).endpoint
        live = endpoint.live(graphql, request_id) if self.poller is not None else None
        if live is None:
            return Once(await endpoint.execute(graphql, self.pipeline, request_id))
        if not isinstance(live, LiveQuery):
            return Once(live)
        assert self.poller is not None
        opened = await self.poller.open(graphql, request.role, live, self.client(request))
        return opened if isinstance(opened, Subscription) else Once(opened)

    def client(self, request: Request) -> Hashable:
        """Whom the per-client limit counts the subscription for: as rate limits count clients."""
        return self.clients.key(request)

    def expiry(self, principal: Principal | None) -> float:
        """The Trio time a subscription of the principal ends: when its token expires (`exp`, with the
        `auth.leeway` a token is still accepted within), or never."""
        claims = principal.claims if principal is not None else None
        exp = claims.get("exp") if claims is not None else None
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            return math.inf
        return trio.current_time() + (exp + self.leeway - time.time())
