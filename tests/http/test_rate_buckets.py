"""The GCRA token buckets of rate limiting (SPEC "Limits" -> rate limits) with a fake clock: a bucket holds `burst`
requests and refills at the per-minute rate, refused requests use nothing, the headers' numbers, the `max_clients`
bound (least recently used evicted), and the sweep of full buckets."""

import pytest

from svc.config import RateConfig
from svc.http._ratelimit import SECOND, Buckets, Decision, Rate

#: 5 requests at once, then one every 12 s.
RATE = Rate.per_minute(5)
INTERVAL = 12 * SECOND


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0  # seconds, like trio.current_time()

    def __call__(self) -> float:
        return self.now

    def advance(self, nanoseconds: int) -> None:
        self.now += nanoseconds / SECOND


@pytest.fixture
def clock():
    return Clock()


def buckets(clock: Clock, max_clients: int = 100) -> Buckets:
    return Buckets(max_clients, clock)


def test_rates_from_the_configuration():
    assert Rate.per_minute(5) == Rate(burst=5, interval=12 * SECOND)
    assert Rate.per_minute(60, burst=10) == Rate(burst=10, interval=SECOND)
    assert Rate.per_minute(7).interval == 8_571_428_572  # rounded up: never faster than the configured rate
    assert Rate.from_config(RateConfig(requests_per_minute=600)) == Rate(burst=600, interval=SECOND // 10)
    assert Rate.from_config(RateConfig(requests_per_minute=None, burst=5)) is None  # off: not limited


def test_a_new_bucket_takes_exactly_burst_requests_at_once(clock):
    table = buckets(clock)
    decisions = [table.check("a", RATE) for _ in range(7)]
    assert decisions[:5] == [
        Decision(True, 5, remaining, (5 - remaining) * INTERVAL, 0) for remaining in (4, 3, 2, 1, 0)
    ]
    assert decisions[5:] == [Decision(False, 5, 0, 5 * INTERVAL, INTERVAL)] * 2


def test_refused_requests_use_nothing(clock):
    table = buckets(clock)
    for _ in range(5):
        table.check("a", RATE)
    for _ in range(100):
        assert not table.check("a", RATE).allowed
    clock.advance(INTERVAL - 1)
    assert table.check("a", RATE) == Decision(False, 5, 0, 5 * INTERVAL - (INTERVAL - 1), 1)
    clock.advance(1)  # exactly one interval after the burst: exactly one more request
    assert table.check("a", RATE) == Decision(True, 5, 0, 5 * INTERVAL, 0)
    assert table.check("a", RATE) == Decision(False, 5, 0, 5 * INTERVAL, INTERVAL)


def test_the_bucket_refills_at_the_rate_up_to_burst(clock):
    table = buckets(clock)
    for _ in range(5):
        table.check("a", RATE)
    clock.advance(3 * INTERVAL)
    assert [table.check("a", RATE).allowed for _ in range(4)] == [True, True, True, False]
    clock.advance(100 * INTERVAL)  # full again, never more than burst
    assert [table.check("a", RATE).remaining for _ in range(5)] == [4, 3, 2, 1, 0]
    assert not table.check("a", RATE).allowed


def test_a_steady_client_at_the_rate_is_never_refused(clock):
    table = buckets(clock)
    for _ in range(50):
        assert table.check("a", RATE) == Decision(True, 5, 4, INTERVAL, 0)
        clock.advance(INTERVAL)


def test_clients_have_their_own_buckets(clock):
    table = buckets(clock)
    for _ in range(5):
        table.check("a", RATE)
    assert not table.check("a", RATE).allowed
    assert table.check("b", RATE).remaining == 4


def test_headers_are_whole_seconds_rounded_up():
    allowed = Decision(True, 5, 3, 24 * SECOND + 1, 0)
    assert allowed.headers() == [("RateLimit-Limit", "5"), ("RateLimit-Remaining", "3"), ("RateLimit-Reset", "25")]
    refused = Decision(False, 5, 0, 60 * SECOND, 1)
    assert refused.headers() == [
        ("RateLimit-Limit", "5"),
        ("RateLimit-Remaining", "0"),
        ("RateLimit-Reset", "60"),
        ("Retry-After", "1"),
    ]


def test_max_clients_evicts_the_least_recently_used(clock):
    table = buckets(clock, max_clients=2)
    for _ in range(5):
        table.check("a", RATE)
    table.check("b", RATE)
    assert not table.check("a", RATE).allowed  # a refused request is a use: "a" is now the most recent
    table.check("c", RATE)  # evicts "b"
    assert ("a" in table, "b" in table, "c" in table, len(table)) == (True, False, True, 2)
    table.check("d", RATE)  # evicts "a", whose bucket starts afresh when it comes back
    assert "a" not in table
    assert table.check("a", RATE).remaining == 4
    assert len(table) == 2


def test_sweep_drops_full_buckets_from_the_least_recently_used_end(clock):
    table = buckets(clock)
    table.check("a", RATE)  # full again after one interval
    for _ in range(5):
        table.check("b", RATE)  # after five
    table.check("c", RATE)
    assert table.sweep() == 0
    clock.advance(INTERVAL)
    assert table.sweep() == 1  # "a"; "b" is still filling, and "c" waits behind it
    assert ("a" in table, "b" in table, "c" in table) == (False, True, True)
    clock.advance(4 * INTERVAL)
    assert table.sweep() == 2
    assert len(table) == 0
    assert table.check("b", RATE).remaining == 4  # dropping a full bucket changed no answer
