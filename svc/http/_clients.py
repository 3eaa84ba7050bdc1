"""Who a request counts as for rate limiting (SPEC "Authentication" -> rate-limit identity, "Limits" -> rate limits).

A verified token is counted by its `key_claim`: a claim name, or a dot-separated path into nested claims (a claim
whose own name holds dots, such as `https://example.com/id`, is found first). A token without that claim, and any
request without a token, is counted by the client's address: the peer's, or when the peer is inside a
`trusted_proxies` network, the last `X-Forwarded-For` entry not added by a trusted proxy. Entries are read from the
right (each proxy appends the address it saw); trusted ones are skipped, the first untrusted one is the client. When
every entry is trusted the leftmost one is; an unreadable entry ends the walk at the trusted hop that reported it,
since only a trusted proxy could have written it there. Entries of an untrusted peer are never read: a client can
write anything into the header itself.
"""

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from ._messages import Request

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: The key of requests whose peer has no address (a Unix socket).
UNKNOWN_ADDRESS = "unknown"


class ClientKeys:
    """Turns a request into the key of its client's bucket: `("claim", value)` or `("address", ip)`."""

    def __init__(self, key_claim: str, trusted_proxies: Iterable[str]) -> None:
        self._key_claim = key_claim
        self._trusted = tuple(ipaddress.ip_network(network, strict=False) for network in trusted_proxies)

    def key(self, request: Request) -> tuple[str, str]:
        if request.claims is not None:
            value = claim(request.claims, self._key_claim)
            if value is not None:
                return ("claim", value)
        return ("address", self.address(request))

    def address(self, request: Request) -> str:
        """The client's address, normalized (IPv4-mapped IPv6 addresses as IPv4)."""
        if request.client is None:
            return UNKNOWN_ADDRESS
        peer = parse_address(request.client[0])
        if peer is None:
            return request.client[0] or UNKNOWN_ADDRESS
        if not self._is_trusted(peer):
            return str(peer)
        hop = peer
        forwarded = request.header("x-forwarded-for")
        for entry in reversed(forwarded.split(",") if forwarded else ()):
            address = parse_address(entry)
            if address is None:
                break
            hop = address
            if not self._is_trusted(address):
                break
        return str(hop)

    def _is_trusted(self, address: IPAddress) -> bool:
        return any(address in network for network in self._trusted)


def claim(claims: Mapping[str, Any], path: str) -> str | None:
    """The claim at `path` as text; None when missing, empty, or not a string or number."""
    value: Any = claims.get(path)
    if value is None and "." in path:
        value = claims
        for name in path.split("."):
            if not isinstance(value, Mapping):
                return None
            value = value.get(name)
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
        return None
    return str(value)


def parse_address(text: str) -> IPAddress | None:
    """An address as proxies write it (`1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:5678`); None when unreadable."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
