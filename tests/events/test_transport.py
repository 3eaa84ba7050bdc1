"""The transport deliveries go over (svc/events/_transport.py): HTTP/1.1 kept alive per origin, a kept connection the
receiver dropped while idle replaced without the caller noticing, and failures as httpx's own errors, which the
dispatcher reads as outcomes (not sent: retry; sent without an answer: unknown)."""

import ssl

import httpx
import pytest
import trio
import trustme

from svc.events import H11Transport
from tests.support.receiver import ANSWER_THEN_CLOSE, CLOSE, HANG, running_receiver


async def post(client: httpx.AsyncClient, url: str, body: bytes = b'{"n":1}', timeout: float = 5.0) -> httpx.Response:
    return await client.post(url, content=body, headers={"webhook-id": "e1"}, timeout=timeout)


async def test_requests_to_one_origin_share_a_kept_connection():
    async with running_receiver() as receiver, httpx.AsyncClient(transport=H11Transport()) as client:
        for n in range(5):
            response = await post(client, receiver.url, b'{"n":%d}' % n)
            assert response.status_code == 200
    assert receiver.connections == 1
    assert [r.json()["n"] for r in receiver.received] == [0, 1, 2, 3, 4]
    assert receiver.received[0].headers["content-length"] == "7"


async def test_a_connection_the_receiver_dropped_while_idle_is_replaced_once():
    async with running_receiver(lambda _: ANSWER_THEN_CLOSE) as receiver:
        async with httpx.AsyncClient(transport=H11Transport()) as client:
            for _ in range(3):
                assert (await post(client, receiver.url)).status_code == 200
                await trio.sleep(0.05)  # the close arrives while the connection is idle
    assert len(receiver.received) == 3  # each request sent once
    assert receiver.connections == 3


async def test_failures_are_httpx_errors():
    answers = iter([HANG, CLOSE, 503])
    async with running_receiver(lambda _: next(answers)) as receiver:
        async with httpx.AsyncClient(transport=H11Transport()) as client:
            with pytest.raises(httpx.ReadTimeout):
                await post(client, receiver.url, timeout=0.3)
            with pytest.raises(httpx.RemoteProtocolError):
                await post(client, receiver.url)
            assert (await post(client, receiver.url)).status_code == 503
            with pytest.raises(httpx.ConnectError):
                await post(client, "http://127.0.0.1:9/hook")


async def test_https_receivers_are_verified_against_the_trusted_authorities():
    authority = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server)
    trusting = ssl.create_default_context()
    authority.configure_trust(trusting)
    async with running_receiver(tls=server) as receiver:
        assert receiver.url.startswith("https://")
        async with httpx.AsyncClient(transport=H11Transport(ssl_context=trusting)) as client:
            for _ in range(2):
                assert (await post(client, receiver.url)).status_code == 200
        assert receiver.connections == 1
        async with httpx.AsyncClient(transport=H11Transport()) as client:  # the system's authorities only
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await post(client, receiver.url)
