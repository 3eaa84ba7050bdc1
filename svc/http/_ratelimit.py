"""Per-client rate limits of API routes (SPEC "Limits" -> rate limits): one GCRA token bucket per client, in memory.

The generic cell rate algorithm keeps one number per client: the theoretical arrival time (TAT), the moment its
bucket is full again. With `interval` the time one request takes to refill (a minute over the rate), a request at
`now` conforms when `max(TAT, now) + interval - now <= burst * interval`; it then moves TAT on by one interval. A
refused request changes nothing (SPEC: refused requests do not consume). So a check is O(1), and it is synchronous:
Trio runs every request on one thread and nothing awaits between the read and the write, so no lock is needed.

Times are integer nanoseconds, so the bucket's arithmetic is exact (after waiting exactly one interval, exactly one
more request conforms). The clock is `trio.current_time` unless a test injects one.

The table keeps at most `max_clients` buckets, least recently used first; a new client evicts the least recently
used one (a refused request counts as a use, so a client being refused keeps its bucket). A full bucket answers
like a missing one, so `sweep()` (run by the rate limiter actor) drops full buckets without changing any answer.
"""

from collections import OrderedDict
from collections.abc import Callable, Hashable

import attrs
import trio

from svc.config import RateConfig, RateLimitConfig

from ._clients import ClientKeys
from ._messages import Request

#: Nanoseconds in a second.
SECOND = 1_000_000_000


@attrs.frozen
class Rate:
    """A bucket of `burst` requests refilling one every `interval` nanoseconds."""

    burst: int
    interval: int

    @classmethod
    def per_minute(cls, requests: int, burst: int | None = None) -> "Rate":
        """SPEC: the burst defaults to the per-minute rate. The interval is rounded up, never above the rate."""
        return cls(burst if burst is not None else requests, -(-60 * SECOND // requests))

    @classmethod
    def from_config(cls, config: RateConfig) -> "Rate | None":
        """None for `requests_per_minute: off`: this kind of client is not limited."""
        if config.requests_per_minute is None:
            return None
        return cls.per_minute(config.requests_per_minute, config.burst)


@attrs.frozen
class Decision:
    """One request's outcome and the bucket's state after it; durations in nanoseconds."""

    allowed: bool
    limit: int
    remaining: int
    #: Until the bucket is full again.
    reset_after: int
    #: Until the next request conforms (0 when this one was allowed).
    retry_after: int

    @property
    def reset_seconds(self) -> int:
        return _whole_seconds(self.reset_after)

    @property
    def retry_after_seconds(self) -> int:
        return _whole_seconds(self.retry_after)

    def headers(self) -> list[tuple[str, str]]:
        """`RateLimit-Limit` (the burst), `RateLimit-Remaining` (whole requests left), `RateLimit-Reset` (seconds
        until the bucket is full, rounded up), as in draft-ietf-httpapi-ratelimit-headers; a refusal adds
        `Retry-After` (seconds until a request conforms, rounded up, so at least 1)."""
        headers = [
            ("RateLimit-Limit", str(self.limit)),
            ("RateLimit-Remaining", str(self.remaining)),
            ("RateLimit-Reset", str(self.reset_seconds)),
        ]
        if not self.allowed:
            headers.append(("Retry-After", str(self.retry_after_seconds)))
        return headers


def _whole_seconds(nanoseconds: int) -> int:
    return -(-nanoseconds // SECOND)


class Buckets:
    """The GCRA bucket table: client key -> TAT (nanoseconds), least recently used first, at most `max_clients`."""

    def __init__(self, max_clients: int, clock: Callable[[], float] = trio.current_time) -> None:
        self._max_clients = max_clients
        self._clock = clock
        self._tats: OrderedDict[Hashable, int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tats)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._tats

    def check(self, key: Hashable, rate: Rate) -> Decision:
        """Count one request of `key`'s client when it conforms to `rate`; a refusal leaves the bucket as it was."""
        now = self._now()
        tat = self._tats.get(key)
        if tat is None or tat < now:
            tat = now
        if key in self._tats:
            self._tats.move_to_end(key)
        new_tat = tat + rate.interval
        conforms_at = new_tat - rate.burst * rate.interval
        if now < conforms_at:
            return Decision(False, rate.burst, 0, tat - now, conforms_at - now)
        self._tats[key] = new_tat
        if len(self._tats) > self._max_clients:
            self._tats.popitem(last=False)
        return Decision(True, rate.burst, (now - conforms_at) // rate.interval, new_tat - now, 0)

    def sweep(self) -> int:
        """Drop full buckets from the least recently used end; the number dropped.

        It stops at the first bucket still filling: each bucket is full at most `burst * interval` after its last
        use, so whatever stays was used within that time, and the work is proportional to what is dropped.
        """
        now = self._now()
        dropped = 0
        while self._tats:
            key, tat = next(iter(self._tats.items()))
            if tat > now:
                break
            del self._tats[key]
            dropped += 1
        return dropped

    def _now(self) -> int:
        return round(self._clock() * SECOND)


class RateLimiter:
    """The buckets of API requests: anonymous and authenticated clients at their own rates (SPEC "Limits").

    An authenticated client (a request with verified claims) is counted at the authenticated rate, anyone else at the
    anonymous rate; the two kinds never share a bucket, even when a token lacks `key_claim` and its client is counted
    by address. GraphQL and REST routes share a client's bucket.
    """

    def __init__(self, config: RateLimitConfig, *, clock: Callable[[], float] = trio.current_time) -> None:
        self._anonymous = Rate.from_config(config.anonymous)
        self._authenticated = Rate.from_config(config.authenticated)
        self._clients = ClientKeys(config.key_claim, config.trusted_proxies)
        self._buckets = Buckets(config.max_clients, clock)

    def check(self, request: Request) -> Decision | None:
        """Count the request against its client's bucket; None when its kind of client is unlimited."""
        kind, rate = (
            ("authenticated", self._authenticated) if request.claims is not None else ("anonymous", self._anonymous)
        )
        if rate is None:
            return None
        return self._buckets.check((kind, *self._clients.key(request)), rate)

    def sweep(self) -> int:
        """Drop the buckets that are full again (see `Buckets.sweep`); the number dropped."""
        return self._buckets.sweep()

    @property
    def clients(self) -> int:
        """Buckets in memory."""
        return len(self._buckets)
