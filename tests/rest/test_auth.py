"""Authentication and database-enforced authorization through the REST API (SPEC "Authentication", "Errors" ->
REST 401/403): the same tokens, roles, claims and policies as GraphQL, answered as problem documents."""

import pytest

from tests.http.test_auth import hs256, settings
from tests.support.issuer import running_issuer
from tests.support.service import running_service

DATABASE_FIXTURES = ["auth.sql"]
SECRET = "a-shared-secret-of-at-least-32-bytes!"


@pytest.fixture
def issuer():
    with running_issuer() as issuer:
        yield issuer


@pytest.fixture
async def client(tmp_path, database_url, issuer):
    environ = {"AUTH_JWT_SECRET": SECRET}
    async with running_service(tmp_path, database_url, settings(issuer.url), environ=environ) as service:
        yield service.client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_two_users_see_their_own_rows_through_policies(client, issuer):
    alice = await client.get("/rest/notes?fields=body&order=id", headers=bearer(issuer.token({"sub": "alice"})))
    bob = await client.get("/rest/notes?fields=body&order=id", headers=bearer(hs256({"sub": "bob"}, issuer)))
    assert alice.status_code == bob.status_code == 200
    assert alice.json() == [{"body": "alice 1"}, {"body": "alice 2"}]
    assert bob.json() == [{"body": "bob 1"}]
    # A row the policy hides is no row at all.
    hidden = await client.get("/rest/notes/3", headers=bearer(issuer.token({"sub": "alice"})))
    assert hidden.status_code == 404


async def test_the_role_comes_from_configuration_and_claims_reach_settings(client, issuer):
    token = issuer.token({"sub": "carol", "org": {"id": 7}, "role": "postgres"}, "ES256")
    who = await client.get("/rest/rpc/whoami", headers=bearer(token))
    org = await client.get("/rest/rpc/setting?name=app.org_id", headers=bearer(token))
    assert (who.json(), org.json()) == ("svc_test_member", "7")
    anonymous = await client.get("/rest/rpc/whoami")
    assert anonymous.json() == "svc_test_visitor"


async def test_a_bad_token_is_401_with_a_challenge_on_every_rest_path(client, issuer):
    for path in ("/rest", "/rest/posts", "/rest/posts/1", "/rest/rpc/whoami", "/rest/nothing"):
        response = await client.get(path, headers=bearer("not.a.jwt"))
        assert response.status_code == 401, path
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["www-authenticate"].startswith('Bearer realm="svc", error="invalid_token"')
        body = response.json()
        assert body["code"] == "UNAUTHENTICATED" and body["type"] == "about:blank" and body["instance"] == path
    expired = issuer.token({"sub": "alice", "exp": 1})
    assert (await client.get("/rest/posts", headers=bearer(expired))).status_code == 401


async def test_the_rest_index_is_authenticated_when_anonymous_access_is_off(tmp_path, database_url, issuer):
    async with running_service(tmp_path, database_url, settings(issuer.url, anonymous=False)) as service:
        response = await service.client.get("/rest")
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == 'Bearer realm="svc"'
        allowed = await service.client.get("/rest", headers=bearer(issuer.token({"sub": "alice"})))
        assert allowed.status_code == 200 and "notes" in {r["name"] for r in allowed.json()["resources"]}


async def test_a_missing_privilege_is_403_permission_denied(client):
    response = await client.get("/rest/notes")  # the visitor has no grant on notes
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "PERMISSION_DENIED" and "permission denied" in body["detail"]
    write = await client.post("/rest/posts", json={"id": 2, "title": "no"})
    assert write.status_code == 403 and write.json()["code"] == "PERMISSION_DENIED"


async def test_a_write_refused_by_a_policy_is_403_and_writes_nothing(client, issuer, database_url):
    alice = bearer(issuer.token({"sub": "alice"}))
    forged = await client.post("/rest/notes", json={"owner": "bob", "body": "forged"}, headers=alice)
    assert forged.status_code == 403 and forged.json()["code"] == "PERMISSION_DENIED"
    mine = await client.post("/rest/notes", json={"body": "mine"}, headers=alice)
    assert mine.status_code == 201
    assert {k: mine.json()[k] for k in ("owner", "body")} == {"owner": "alice", "body": "mine"}
    # Bob cannot change Alice's note: the policy hides it, so there is no such row for him.
    bob = bearer(hs256({"sub": "bob"}, issuer))
    assert (await client.patch("/rest/notes/1", json={"body": "bob was here"}, headers=bob)).status_code == 404
    assert (await client.delete("/rest/notes/1", headers=bob)).status_code == 404
    kept = await client.get("/rest/notes/1?fields=body", headers=alice)
    assert kept.json() == {"body": "alice 1"}
