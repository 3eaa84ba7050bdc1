"""Who a request is counted as (SPEC "Authentication" -> rate-limit identity, "Limits" -> rate limits): a verified
token by its `key_claim` (a dot path allowed), anything else by address: the peer's, or behind a trusted proxy the
last X-Forwarded-For entry no trusted proxy added; authenticated and anonymous clients at their own rates."""

from collections.abc import Mapping
from typing import Any

import pytest

from svc.auth import Principal
from svc.config import RateConfig, RateLimitConfig
from svc.http import Request
from svc.http._clients import ClientKeys, claim, parse_address
from svc.http._ratelimit import RateLimiter

PROXIES = ("10.0.0.0/8", "2001:db8:1::/48")


def request(
    peer: str | None = "203.0.113.7", *, forwarded: str | None = None, claims: Mapping[str, Any] | None = None
) -> Request:
    headers = {"x-forwarded-for": forwarded} if forwarded is not None else {}

    async def receive() -> dict[str, Any]:
        raise AssertionError("the body is never read")

    return Request(
        method="POST",
        path="/graphql",
        query_string=b"",
        headers=headers,
        request_id="r",
        snapshot=None,
        client=(peer, 40000) if peer is not None else None,
        receive=receive,
        principal=Principal(claims, None, {}),  # claims None: anonymous
    )


@pytest.fixture
def keys():
    return ClientKeys("sub", PROXIES)


# --- addresses ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("2001:DB8::0:1", "2001:db8::1"),
        (None, "unknown"),
    ],
)
def test_the_peer_address_without_proxies(keys, peer, address):
    assert keys.key(request(peer)) == ("address", address)


def test_forwarded_for_from_an_untrusted_peer_is_ignored(keys):
    assert keys.address(request("203.0.113.7", forwarded="198.51.100.1")) == "203.0.113.7"
    assert ClientKeys("sub", ()).address(request("10.0.0.1", forwarded="198.51.100.1")) == "10.0.0.1"


@pytest.mark.parametrize(
    ("forwarded", "address"),
    [
        ("198.51.100.1", "198.51.100.1"),
        # what the client wrote itself stays left of what the trusted proxy appended
        ("6.6.6.6, 198.51.100.1", "198.51.100.1"),
        ("6.6.6.6, 198.51.100.1, 10.1.1.1, 10.2.2.2", "198.51.100.1"),
        ("6.6.6.6,198.51.100.1 ,10.1.1.1", "198.51.100.1"),
        ("198.51.100.1:5123, 10.1.1.1", "198.51.100.1"),
        ("[2001:db8:2::5]:443, [2001:db8:1::9]", "2001:db8:2::5"),
        ("2001:db8:2::5", "2001:db8:2::5"),
        # every hop trusted: the first one is the client
        ("10.3.3.3, 10.1.1.1", "10.3.3.3"),
        # unreadable: counted by the trusted hop that reported it
        ("198.51.100.1, unknown, 10.1.1.1", "10.1.1.1"),
        ("garbage", "10.0.0.1"),
        ("", "10.0.0.1"),
        (None, "10.0.0.1"),
    ],
)
def test_forwarded_for_from_a_trusted_peer(keys, forwarded, address):
    assert keys.address(request("10.0.0.1", forwarded=forwarded)) == address


def test_addresses_as_proxies_write_them():
    assert str(parse_address(" 192.0.2.1:80 ")) == "192.0.2.1"
    assert str(parse_address("[::1]:80")) == "::1"
    assert parse_address("[::1") is None
    assert parse_address("unknown") is None


# --- claims ------------------------------------------------------------------------------------------------------


def test_a_verified_token_is_counted_by_its_key_claim(keys):
    assert keys.key(request(claims={"sub": "alice", "role": "x"})) == ("claim", "alice")
    assert keys.key(request(claims={"sub": 42})) == ("claim", "42")


@pytest.mark.parametrize("claims", [{}, {"sub": None}, {"sub": ""}, {"sub": ["a"]}, {"sub": {"id": 1}}, {"sub": True}])
def test_a_token_without_a_usable_key_claim_is_counted_by_address(keys, claims):
    assert keys.key(request(claims=claims)) == ("address", "203.0.113.7")


def test_key_claim_dot_paths():
    claims = {"org": {"member": {"id": "m-7"}}, "https://example.com/tenant": "t-1", "plain": "p"}
    assert claim(claims, "org.member.id") == "m-7"
    assert claim(claims, "https://example.com/tenant") == "t-1"  # a claim whose name holds dots
    assert claim(claims, "plain") == "p"
    assert claim(claims, "org.member") is None
    assert claim(claims, "org.nobody.id") is None
    assert claim(claims, "plain.id") is None
    assert ClientKeys("org.member.id", ()).key(request(claims=claims)) == ("claim", "m-7")


# --- kinds of clients --------------------------------------------------------------------------------------------


def limiter(**settings: Any) -> RateLimiter:
    config = RateLimitConfig(
        enabled=True,
        anonymous=RateConfig(requests_per_minute=1, burst=2),
        authenticated=RateConfig(requests_per_minute=1, burst=3),
        **settings,
    )
    return RateLimiter(config, clock=lambda: 0.0)


def admitted(limiter: RateLimiter, req: Request, attempts: int = 10) -> int:
    decisions = [limiter.check(req) for _ in range(attempts)]
    assert all(decision is not None for decision in decisions)
    return sum(decision.allowed for decision in decisions if decision is not None)


def test_authenticated_and_anonymous_clients_have_their_own_rates():
    rate_limiter = limiter()
    assert admitted(rate_limiter, request(claims={"sub": "alice"})) == 3
    assert admitted(rate_limiter, request(claims={"sub": "bob"})) == 3  # same address, another subject
    assert admitted(rate_limiter, request()) == 2  # the same address, anonymous
    assert admitted(rate_limiter, request("203.0.113.8")) == 2
    # a token without the key claim: counted by address at the authenticated rate, not in the anonymous bucket
    assert admitted(rate_limiter, request(claims={"iss": "x"})) == 3
    assert rate_limiter.clients == 5


def test_the_same_subject_is_one_client_from_any_address():
    rate_limiter = limiter()
    assert admitted(rate_limiter, request("203.0.113.7", claims={"sub": "alice"}), 2) == 2
    assert admitted(rate_limiter, request("198.51.100.1", claims={"sub": "alice"})) == 1


def test_a_kind_of_client_whose_rate_is_off_is_not_limited():
    config = RateLimitConfig(enabled=True, anonymous=RateConfig(requests_per_minute=None))
    rate_limiter = RateLimiter(config, clock=lambda: 0.0)
    assert rate_limiter.check(request()) is None
    decision = rate_limiter.check(request(claims={"sub": "alice"}))
    assert decision is not None and decision.limit == 600  # the burst defaults to the rate
    assert rate_limiter.clients == 1
