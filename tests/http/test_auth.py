"""Authentication and database-enforced authorization (SPEC "Authentication", "Errors" -> PERMISSION_DENIED), with
a real issuer on loopback (discovery + JWKS, keys rotated mid-test) and row-level security policies reading the
mapped claims."""

import base64
import hashlib
import hmac
import json
import time

import jwt
import pytest

from tests.support.graphql import graphql_service
from tests.support.issuer import running_issuer

DATABASE_FIXTURES = ["auth.sql"]
SECRET = "a-shared-secret-of-at-least-32-bytes!"


def settings(issuer_url: str | None = None, **auth) -> dict:
    return {
        "database": {"schemas": ["app"]},
        "graphql": {"sdl": True},
        "auth": {
            "issuer": issuer_url,
            "roles": {"authenticated": "svc_test_member", "anonymous": "svc_test_visitor"},
            "claims": {"sub": "app.user_id", "org.id": "app.org_id"},
            "jwks_refresh_floor": "0s",
            **auth,
        },
    }


@pytest.fixture
def issuer():
    with running_issuer() as issuer:
        yield issuer


@pytest.fixture
async def gql(tmp_path, database_url, issuer):
    async with graphql_service(
        tmp_path, database_url, settings(issuer.url), environ={"AUTH_JWT_SECRET": SECRET}
    ) as gql:
        yield gql


def hs256(claims: dict, issuer, secret: str = SECRET) -> str:
    """A token signed with the shared secret; `iss` is checked for every token when configured."""
    now = int(time.time())
    body = {"iss": issuer.url, "iat": now, "exp": now + 300, **claims}
    return jwt.encode(body, secret, algorithm="HS256")


async def ask(gql, query: str, token: str | None = None, variables=None):
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    body = {"query": query, **({"variables": variables} if variables else {})}
    response = await gql.client.post("/graphql", json=body, headers=headers)
    return response.status_code, response.json(), response.headers


async def refused(gql, token: str | None, *, authorization: str | None = None) -> tuple[dict, str]:
    headers = {"Authorization": authorization or f"Bearer {token}"}
    response = await gql.client.post("/graphql", json={"query": "{ whoami }"}, headers=headers)
    assert response.status_code == 401, response.text
    (error,) = response.json()["errors"]
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    return error, response.headers["www-authenticate"]


# --- who a request runs as --------------------------------------------------------------------------------------


async def test_two_users_see_their_own_rows_through_policies(gql, issuer):
    query = "{ notes(orderBy: ROW_ID_ASC) { body } }"
    _, alice, _ = await ask(gql, query, issuer.token({"sub": "alice"}, "RS256"))
    _, bob, _ = await ask(gql, query, hs256({"sub": "bob"}, issuer))
    assert alice == {"data": {"notes": [{"body": "alice 1"}, {"body": "alice 2"}]}}
    assert bob == {"data": {"notes": [{"body": "bob 1"}]}}


async def test_the_role_comes_from_configuration_never_from_the_token(gql, issuer):
    token = issuer.token({"sub": "alice", "role": "postgres"}, "ES256")
    _, body, _ = await ask(gql, "{ whoami }", token)
    assert body == {"data": {"whoami": "svc_test_member"}}
    _, body, _ = await ask(gql, "{ whoami }")
    assert body == {"data": {"whoami": "svc_test_visitor"}}


async def test_claims_reach_the_mapped_settings_and_the_claims_setting(gql, issuer):
    token = issuer.token({"sub": "carol", "org": {"id": 42}, "app.user_id": "mallory"}, "EdDSA")
    query = """{ user: setting(name: "app.user_id") org: setting(name: "app.org_id")
                 claims: setting(name: "request.jwt.claims") }"""
    _, body, _ = await ask(gql, query, token)
    data = body["data"]
    # A claim named like a setting is only a claim: `app.user_id` comes from `sub`, as configured.
    assert (data["user"], data["org"]) == ("carol", "42")
    assert jwt.decode(token, options={"verify_signature": False}) == json.loads(data["claims"])


async def test_settings_do_not_outlive_the_request(gql, issuer):
    await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}))
    _, body, _ = await ask(gql, '{ setting(name: "app.user_id") }')
    assert body["data"]["setting"] in (None, "")


# --- keys ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["RS256", "PS256", "ES256", "EdDSA"])
async def test_tokens_signed_by_the_issuers_keys(gql, issuer, algorithm):
    _, body, _ = await ask(gql, "{ notesConnection { totalCount } }", issuer.token({"sub": "alice"}, algorithm))
    assert body == {"data": {"notesConnection": {"totalCount": 2}}}


async def test_rotated_keys_are_fetched_again(gql, issuer):
    _, body, _ = await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}))
    assert "errors" not in body and issuer.fetches == 1
    old = issuer.token({"sub": "alice"})
    issuer.rotate()
    _, body, _ = await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}, "ES256"))
    assert body == {"data": {"whoami": "svc_test_member"}} and issuer.fetches == 2
    await refused(gql, old)  # its kid left the key set


async def test_unknown_kids_refetch_at_most_once_per_floor(tmp_path, database_url, issuer):
    config = settings(issuer.url, jwks_refresh_floor="1h")
    async with graphql_service(tmp_path, database_url, config) as gql:
        await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}))
        assert issuer.fetches == 1
        for n in range(3):
            _, challenge = await refused(gql, issuer.token({"sub": "alice"}, kid=f"made-up-{n}"))
            assert 'error="invalid_token"' in challenge
        assert issuer.fetches == 1


async def test_keys_by_jwks_url_without_discovery(tmp_path, database_url, issuer):
    config = settings(None, jwks_url=f"{issuer.url}/jwks.json")
    async with graphql_service(tmp_path, database_url, config) as gql:
        _, body, _ = await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}, "ES256"))
        assert body == {"data": {"whoami": "svc_test_member"}}


async def test_an_unreachable_issuer_is_a_retryable_503(tmp_path, database_url, issuer):
    config = settings("http://127.0.0.1:9")  # discard port: nothing listens
    async with graphql_service(tmp_path, database_url, config) as gql:
        status, body, _ = await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}))
        assert status == 503 and body["errors"][0]["extensions"]["code"] == "SOURCE_UNAVAILABLE"


# --- refusals ----------------------------------------------------------------------------------------------------


async def test_expired_and_not_yet_valid_tokens_respect_the_leeway(gql, issuer):
    now = int(time.time())
    assert (await ask(gql, "{ whoami }", issuer.token({"sub": "a", "exp": now - 10})))[0] == 200  # within 30 s
    error, challenge = await refused(gql, issuer.token({"sub": "a", "exp": now - 60}))
    assert error["message"] == "the token has expired"
    assert challenge == 'Bearer realm="svc", error="invalid_token", error_description="the token has expired"'
    error, _ = await refused(gql, issuer.token({"sub": "a", "nbf": now + 120}))
    assert error["message"] == "the token is not valid yet"


async def test_issuer_and_audience_are_checked(tmp_path, database_url, issuer):
    async with graphql_service(tmp_path, database_url, settings(issuer.url, audience=["svc-api"])) as gql:
        assert (await ask(gql, "{ whoami }", issuer.token({"sub": "a", "aud": "svc-api"})))[0] == 200
        error, _ = await refused(gql, issuer.token({"sub": "a", "aud": "other"}))
        assert "aud" in error["message"]
        error, _ = await refused(gql, issuer.token({"sub": "a", "aud": "svc-api", "iss": "https://evil.example"}))
        assert "iss" in error["message"]


async def test_unsigned_and_confused_algorithms_are_refused(gql, issuer):
    unsigned = jwt.encode({"sub": "alice"}, None, algorithm="none")
    error, _ = await refused(gql, unsigned)
    assert error["message"] == "tokens signed with 'none' are not accepted"
    # HMAC over the issuer's public key: HS* tokens are checked with the shared secret only.
    forged = _hmac_token({"sub": "alice", "iss": issuer.url}, issuer.public_pem())
    await refused(gql, forged)
    # An RSA kid named in an EC token.
    await refused(gql, issuer.token({"sub": "alice"}, "ES256", kid="rsa-1"))


async def test_an_algorithm_left_out_of_the_allow_list(tmp_path, database_url, issuer):
    async with graphql_service(tmp_path, database_url, settings(issuer.url, algorithms=["ES256"])) as gql:
        error, _ = await refused(gql, issuer.token({"sub": "a"}, "RS256"))
        assert error["message"] == "tokens signed with 'RS256' are not accepted"


async def test_hmac_tokens_need_the_shared_secret(tmp_path, database_url, issuer):
    async with graphql_service(tmp_path, database_url, settings(issuer.url)) as gql:  # no AUTH_JWT_SECRET
        error, _ = await refused(gql, hs256({"sub": "a"}, issuer))
        assert "no shared secret" in error["message"]
    async with graphql_service(
        tmp_path, database_url, settings(issuer.url), environ={"AUTH_JWT_SECRET": SECRET}
    ) as gql:
        await refused(gql, hs256({"sub": "a"}, issuer, secret="another-secret-of-at-least-32-bytes!!"))


async def test_a_claim_holding_nul_is_refused(gql, issuer):
    error, _ = await refused(gql, issuer.token({"sub": "alice\x00admin"}))
    assert "NUL" in error["message"]
    await refused(gql, hs256({"sub": "bob", "tags": ["ok", {"k\x00": 1}]}, issuer))


async def test_malformed_authorization_headers(gql):
    _, challenge = await refused(gql, None, authorization="Basic YWxpY2U6c2VjcmV0")
    assert 'error="invalid_request"' in challenge
    await refused(gql, None, authorization="Bearer not.a.jwt")
    await refused(gql, None, authorization="Bearer")


async def test_anonymous_requests_refused_when_anonymous_access_is_off(tmp_path, database_url, issuer):
    async with graphql_service(tmp_path, database_url, settings(issuer.url, anonymous=False)) as gql:
        response = await gql.client.post("/graphql", json={"query": "{ whoami }"})
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == 'Bearer realm="svc"'
        assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        # Probes and the SDL take no token.
        assert (await gql.client.get("/health")).status_code == 200
        assert (await gql.client.get("/schema.graphql")).status_code == 200
        _, body, _ = await ask(gql, "{ whoami }", issuer.token({"sub": "alice"}))
        assert body == {"data": {"whoami": "svc_test_member"}}


# --- authorization is the database's -------------------------------------------------------------------------------


async def test_a_missing_privilege_is_permission_denied_in_every_mode(gql):
    status, body, _ = await ask(gql, "{ notes { body } }")  # the visitor has no grant on notes
    assert status == 403
    assert body["errors"][0]["extensions"]["code"] == "PERMISSION_DENIED"
    assert "permission denied" in body["errors"][0]["message"]


async def test_a_write_refused_by_a_policy_is_permission_denied(gql, issuer):
    token = issuer.token({"sub": "alice"})
    mutation = 'mutation { createNote(input: {owner: "bob", body: "forged"}) { note { rowId } } }'
    status, body, _ = await ask(gql, mutation, token)
    assert status == 200 and body["data"] == {"createNote": None}
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "PERMISSION_DENIED" and error["path"] == ["createNote"]
    _, body, _ = await ask(gql, 'mutation { createNote(input: {body: "mine"}) { note { owner body } } }', token)
    assert body == {"data": {"createNote": {"note": {"owner": "alice", "body": "mine"}}}}
    # Bob cannot change Alice's note: the policy hides it, so the update finds no row.
    _, body, _ = await ask(
        gql,
        'mutation { updateNote(rowId: 1, set: {body: "bob was here"}) { note { body } } }',
        hs256({"sub": "bob"}, issuer),
    )
    assert body == {"data": {"updateNote": {"note": None}}}


def _hmac_token(claims: dict, key: bytes) -> str:
    """HS256 over a PEM public key, built by hand: PyJWT itself refuses to sign with a PEM as an HMAC secret."""

    def part(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    header = part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = part(json.dumps(claims).encode())
    signature = part(hmac.new(key, header + b"." + payload, hashlib.sha256).digest())
    return (header + b"." + payload + b"." + signature).decode()
