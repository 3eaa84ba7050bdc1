"""The issuer's signing keys (SPEC "Authentication": OAuth 2.0 resource server).

Located by discovery (`<issuer>/.well-known/openid-configuration` -> `jwks_uri`) or by `auth.jwks_url`, cached by
`kid`, and fetched again when a token names a `kid` the cache lacks (key rotation), at most once per
`auth.jwks_refresh_floor`, so tokens with made-up `kid`s cannot make the service hammer the issuer. Concurrent
requests that need a fetch share one.
"""

import logging
import time
from typing import Any

import httpx
import jwt
import trio

from svc.errors import Code, SvcError

log = logging.getLogger("svc.auth")

_FETCH_TIMEOUT = 10.0


class KeySet:
    def __init__(self, *, issuer: str | None, jwks_url: str | None, refresh_floor: float) -> None:
        self._issuer = issuer
        self._jwks_url = jwks_url
        self._refresh_floor = refresh_floor
        self._keys: list[dict[str, Any]] = []
        self._fetched_at: float | None = None
        self._lock = trio.Lock()

    @property
    def configured(self) -> bool:
        return bool(self._issuer or self._jwks_url)

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The public key that verifies a token signed with `algorithm` under `kid`; SvcError when none does."""
        found = self._find(kid, algorithm)
        if found is None and self._may_fetch():
            async with self._lock:
                if self._may_fetch():  # another request may have fetched while this one waited
                    await self._fetch()
            found = self._find(kid, algorithm)
        if found is None:
            raise LookupError(f"no signing key {kid!r} for {algorithm}" if kid else f"no signing key for {algorithm}")
        try:
            return jwt.PyJWK(found, algorithm=algorithm)
        except (jwt.PyJWKError, jwt.InvalidKeyError) as exc:  # a key of another type than the algorithm needs
            raise LookupError(f"the signing key {kid!r} does not fit {algorithm}: {exc}") from None

    def _may_fetch(self) -> bool:
        return self._fetched_at is None or time.monotonic() - self._fetched_at >= self._refresh_floor

    def _find(self, kid: str | None, algorithm: str) -> dict[str, Any] | None:
        candidates = [
            key
            for key in self._keys
            if key.get("use", "sig") == "sig"
            and key.get("alg", algorithm) == algorithm
            and (kid is None or key.get("kid") == kid)
        ]
        # Without a `kid` the key must be the only one that fits.
        return candidates[0] if len(candidates) == 1 or (kid is not None and candidates) else None

    async def _fetch(self) -> None:
        self._fetched_at = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=_FETCH_TIMEOUT, follow_redirects=True) as client:
                url = self._jwks_url or await _discover(client, self._issuer or "")
                response = await client.get(url)
                response.raise_for_status()
                document = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("the signing keys could not be fetched: %s", exc)
            raise SvcError(
                Code.SOURCE_UNAVAILABLE, "the token issuer's signing keys could not be fetched; retry later"
            ) from None
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            raise SvcError(Code.SOURCE_UNAVAILABLE, "the token issuer's key set is not a JWKS document")
        self._keys = [key for key in keys if isinstance(key, dict)]
        log.info("fetched %d signing key(s)", len(self._keys))


async def _discover(client: httpx.AsyncClient, issuer: str) -> str:
    response = await client.get(f"{issuer.rstrip('/')}/.well-known/openid-configuration")
    response.raise_for_status()
    document = response.json()
    jwks_uri = document.get("jwks_uri") if isinstance(document, dict) else None
    if not isinstance(jwks_uri, str):
        raise ValueError("the discovery document has no jwks_uri")
    return jwks_uri
