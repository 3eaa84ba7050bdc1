"""The rate limiter actor (ARCHITECTURE.md "Actors", SPEC "Limits" -> rate limits): it sweeps the limiter's buckets
every interval, so the buckets of clients that went quiet leave memory once they are full again."""

import trio

from svc.actors import BucketSweeper
from svc.config import RateConfig, RateLimitConfig
from svc.http import Request
from svc.http._ratelimit import RateLimiter


async def test_the_sweeper_calls_sweep_every_interval(autojump_clock):
    calls: list[float] = []

    def sweep() -> int:
        calls.append(trio.current_time())
        return 0

    async with trio.open_nursery() as nursery:
        await nursery.start(BucketSweeper(sweep, interval=10).run)
        started = trio.current_time()
        await trio.sleep(35)
        nursery.cancel_scope.cancel()
    assert [round(call - started) for call in calls] == [10, 20, 30]


async def test_full_buckets_leave_memory(autojump_clock):
    config = RateLimitConfig(enabled=True, anonymous=RateConfig(requests_per_minute=60, burst=5))
    limiter = RateLimiter(config)  # on the Trio clock

    async def receive() -> dict:
        raise AssertionError("never read")

    def request(peer: str) -> Request:
        return Request("POST", "/graphql", b"", {}, "r", None, (peer, 1), receive)

    async with trio.open_nursery() as nursery:
        await nursery.start(BucketSweeper(limiter.sweep, interval=1).run)
        limiter.check(request("198.51.100.1"))  # full again 1 s later
        for _ in range(3):
            limiter.check(request("198.51.100.2"))  # 3 s later
        assert limiter.clients == 2
        await trio.sleep(1.5)
        assert limiter.clients == 1
        await trio.sleep(2)
        assert limiter.clients == 0
        nursery.cancel_scope.cancel()
