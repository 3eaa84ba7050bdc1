"""Signatures per Standard Webhooks, checked against the `standardwebhooks` package (the reference implementation):
one `v1,` signature per secret, space-separated, so receivers holding the old or the new secret both verify while
secrets rotate; a changed body, id or timestamp does not verify."""

import base64
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from svc.events import signature

OLD, NEW = b"the-old-secret-key-0123", b"the-new-secret-key-4567"


def secret(key: bytes) -> str:
    return "whsec_" + base64.b64encode(key).decode()


def headers(event_id: str, at: int, value: str) -> dict[str, str]:
    return {"webhook-id": event_id, "webhook-timestamp": str(at), "webhook-signature": value}


def test_the_signature_is_the_reference_one():
    at = int(datetime.now(UTC).timestamp())
    body = b'{"id":"e1","op":"insert","new":{"name":"\xc3\xa9"}}'
    expected = Webhook(secret(NEW)).sign("e1", datetime.fromtimestamp(at, UTC), body.decode())
    assert signature([NEW], "e1", at, body) == expected


def test_while_rotating_either_secret_verifies():
    at = int(datetime.now(UTC).timestamp())
    body = b'{"id":"e2"}'
    value = signature([NEW, OLD], "e2", at, body)
    assert len(value.split(" ")) == 2
    for key in (NEW, OLD):
        assert Webhook(secret(key)).verify(body, headers("e2", at, value)) == {"id": "e2"}
    with pytest.raises(WebhookVerificationError):
        Webhook(secret(b"some-other-secret-key-89")).verify(body, headers("e2", at, value))


@pytest.mark.parametrize("change", ["body", "id", "timestamp"])
def test_anything_changed_does_not_verify(change):
    at = int(datetime.now(UTC).timestamp())
    value = signature([NEW], "e3", at, b'{"id":"e3"}')
    body, event_id, when = b'{"id":"e3"}', "e3", at
    if change == "body":
        body = b'{"id":"e4"}'
    elif change == "id":
        event_id = "e4"
    else:
        when = at + 1
    with pytest.raises(WebhookVerificationError):
        Webhook(secret(NEW)).verify(body, headers(event_id, when, value))
