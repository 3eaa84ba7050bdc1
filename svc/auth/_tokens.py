"""Who a request is (SPEC "Authentication"): a verified bearer token's claims, or nobody.

A token is a JWT verified with the shared HMAC secret (`AUTH_JWT_SECRET`; HS* algorithms only) or with the issuer's
public keys (RS*, PS*, ES256, ES384, EdDSA; never the secret), so a token signed with HMAC over a public key is
refused. `alg` must be in `auth.algorithms`; `none` never is. `exp`/`nbf` allow `auth.leeway`; `iss` and `aud` are
checked when configured. A claim holding NUL is refused (PostgreSQL settings cannot carry it).

The database role comes from configuration (authenticated or anonymous), never from the token; claims become the
session settings `auth.claims` names, plus all claims as JSON in `auth.claims_setting`. Each setting is written by
one entry only (checked with the configuration), so no claim can replace another setting.
"""

import json
from collections.abc import Mapping
from typing import Any

import attrs
import jwt

from svc.config import AuthConfig
from svc.errors import Code, SvcError

from ._keys import KeySet


@attrs.frozen
class Principal:
    """The verified claims (None: anonymous), the database role and the session settings of a request."""

    claims: Mapping[str, Any] | None
    role: str | None
    settings: Mapping[str, str]


class Unauthenticated(SvcError):
    """401 with the RFC 6750 challenge to send in `WWW-Authenticate`."""

    def __init__(self, message: str, *, error: str | None = "invalid_token") -> None:
        super().__init__(Code.UNAUTHENTICATED, message)
        challenge = 'Bearer realm="svc"'
        if error is not None:
            description = message.replace("\\", "\\\\").replace('"', '\\"')
            challenge += f', error="{error}", error_description="{description}"'
        self.challenge = challenge


class Authenticator:
    def __init__(self, config: AuthConfig, secret: str | None) -> None:
        self._config = config
        self._secret = secret
        self._keys = KeySet(
            issuer=config.issuer, jwks_url=config.jwks_url, refresh_floor=config.jwks_refresh_floor.seconds
        )
        self._anonymous = Principal(None, config.roles.anonymous, {})

    async def authenticate(self, authorization: str | None) -> Principal:
        if not authorization:
            if not self._config.anonymous:
                raise Unauthenticated("this service needs a bearer token", error=None)
            return self._anonymous
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthenticated("send the token as Authorization: Bearer <token>", error="invalid_request")
        claims = await self._verify(token)
        if _holds_nul(claims):
            raise Unauthenticated("a claim of the token contains a NUL character")
        return Principal(claims, self._config.roles.authenticated, self._settings(claims))

    async def _verify(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Unauthenticated("the token is not a JWT") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self._config.algorithms:
            raise Unauthenticated(f"tokens signed with {algorithm!r} are not accepted")
        key: Any
        if algorithm.startswith("HS"):
            if not self._secret:
                raise Unauthenticated("HMAC-signed tokens are not accepted: no shared secret is configured")
            key = self._secret
        else:
            if not self._keys.configured:
                raise Unauthenticated(f"{algorithm} tokens are not accepted: no issuer or JWKS is configured")
            kid = header.get("kid")
            try:
                key = await self._keys.key(kid if isinstance(kid, str) else None, algorithm)
            except LookupError as exc:
                raise Unauthenticated(str(exc)) from None
        config = self._config
        try:
            return jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=list(config.audience) or None,
                issuer=config.issuer,
                leeway=config.leeway.seconds,
                options={"verify_aud": bool(config.audience), "verify_iss": config.issuer is not None},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise Unauthenticated("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise Unauthenticated("the token is not meant for this service (aud)") from None
        except jwt.InvalidIssuerError:
            raise Unauthenticated("the token comes from another issuer (iss)") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the token is invalid: {exc}") from None

    def _settings(self, claims: Mapping[str, Any]) -> dict[str, str]:
        settings = {}
        for path, name in self._config.claims.items():
            value = _claim(claims, path)
            if value is not None:
                settings[name] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if self._config.claims_setting is not None:
            settings[self._config.claims_setting] = json.dumps(claims, ensure_ascii=False, separators=(",", ":"))
        return settings


def _claim(claims: Mapping[str, Any], path: str) -> Any:
    """A claim by name, else by dot path into nested objects (`org.id`)."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False
