"""A real token issuer on loopback: OpenID discovery and a JWKS document served over HTTP by a stdlib server in a
thread, with RSA, EC P-256 and Ed25519 signing keys that can be rotated while a test runs, and a count of fetches."""

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

_KINDS = {"RS256": "rsa", "PS256": "rsa", "ES256": "ec", "EdDSA": "okp"}


class Issuer:
    def __init__(self, url: str) -> None:
        self.url = url
        self.fetches = 0
        self._generation = 0
        self._keys: dict[str, tuple[str, Any]] = {}  # kind -> (kid, private key)
        self.rotate()

    def rotate(self) -> None:
        """New keys of every kind under new kids; the old ones leave the JWKS."""
        self._generation += 1
        g = self._generation
        self._keys = {
            "rsa": (f"rsa-{g}", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
            "ec": (f"ec-{g}", ec.generate_private_key(ec.SECP256R1())),
            "okp": (f"okp-{g}", ed25519.Ed25519PrivateKey.generate()),
        }

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kind, (kid, private) in self._keys.items():
            codec = {"rsa": RSAAlgorithm, "ec": ECAlgorithm, "okp": OKPAlgorithm}[kind]
            key = json.loads(codec.to_jwk(private.public_key()))
            keys.append({**key, "kid": kid, "use": "sig"})
        return {"keys": keys}

    def public_pem(self, kind: str = "rsa") -> bytes:
        public = self._keys[kind][1].public_key()
        return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def token(
        self, claims: Mapping[str, Any], algorithm: str = "RS256", *, kid: str | None = None, **extra: Any
    ) -> str:
        """A token signed with the current key of the algorithm's kind; `iss` and a 5-minute `exp` by default."""
        default_kid, key = self._keys[_KINDS[algorithm]]
        now = int(time.time())
        body = {"iss": self.url, "iat": now, "exp": now + 300, **claims}
        return jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid or default_kid, **extra})


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    issuer: Issuer | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            assert issuer is not None
            if self.path == "/.well-known/openid-configuration":
                body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks.json"}
            elif self.path == "/jwks.json":
                issuer.fetches += 1
                body = issuer.jwks()
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer = Issuer(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
