"""The shared HTTP/1.1 suite of the two edges (`server.http`: `fast`, svc's own on httptools, and `hypercorn`),
spoken over raw TCP where framing matters: keep-alive, HTTP/1.0, pipelining, Content-Length and chunked request
bodies, `Expect: 100-continue`, HEAD, the response headers (one content-length, a date, no server), chunked
streaming answers, half-closed sockets, the idle keep-alive timeout and the header-read deadline (issue 22, the
edge contract)."""

import json
import time
from email.utils import parsedate_to_datetime

import pytest
import trio

from tests.edge.wire import (
    EDGES,
    TYPENAME,
    TYPENAME_ANSWER,
    WAIT,
    chunked,
    connection,
    edge_service,
    exchange,
    graphql_post,
    request,
    send,
)


@pytest.fixture(params=EDGES)
def edge(request) -> str:
    return request.param


@pytest.fixture
async def service(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge) as running:
        yield running


def typename(alias: str) -> bytes:
    return json.dumps({"query": f"{{{alias}: __typename}}"}).encode()


def assert_typename(response, alias: str = "__typename") -> None:
    assert response.status == 200, response
    assert json.loads(response.body) == {"data": {alias: "Query"}}, response


# --- persistent connections -----------------------------------------------------------------------------------


async def test_keep_alive_serves_several_requests_on_one_connection(service):
    async with connection(service) as (stream, reader):
        for number in range(5):
            await send(stream, request("GET", "/live") if number % 2 == 0 else graphql_post(typename(f"n{number}")))
            with trio.fail_after(WAIT):
                response = await reader.response()
            assert response.version == "HTTP/1.1", response
            assert not response.closes, response
            if number % 2 == 0:
                assert (response.status, json.loads(response.body)) == (200, {"status": "ok"}), response
            else:
                assert_typename(response, f"n{number}")
        assert reader.buffer == b"", "bytes after the last answer"


async def test_http_1_0_without_keep_alive_is_closed_after_the_answer(service):
    async with connection(service) as (stream, reader):
        await send(stream, request("GET", "/live", version="HTTP/1.0"))
        with trio.fail_after(WAIT):
            response = await reader.response()
        assert (response.status, json.loads(response.body)) == (200, {"status": "ok"}), response
        assert await reader.closed() == b""


async def test_http_1_1_connection_close_is_closed_after_the_answer(service):
    async with connection(service) as (stream, reader):
        await send(stream, request("GET", "/live", [("Connection", "close")]))
        with trio.fail_after(WAIT):
            response = await reader.response()
        assert response.status == 200 and response.closes, response
        assert await reader.closed() == b""


async def test_pipelined_requests_are_answered_in_order(service):
    requests = [
        graphql_post(typename("first")),
        request("GET", "/live"),
        graphql_post(typename("second"), [("Transfer-Encoding", "chunked")]).replace(
            typename("second"), chunked(typename("second")[:7], typename("second")[7:])
        ),
        request("HEAD", "/live"),
        graphql_post(typename("third")),
    ]
    async with connection(service) as (stream, reader):
        await send(stream, b"".join(requests))
        with trio.fail_after(WAIT):
            first = await reader.response()
            live = await reader.response()
            second = await reader.response()
            head = await reader.response("HEAD")
            third = await reader.response()
    assert_typename(first, "first")
    assert (live.status, json.loads(live.body)) == (200, {"status": "ok"}), live
    assert_typename(second, "second")
    assert head.status == 200 and head.body == b"", head
    assert_typename(third, "third")
    assert reader.buffer == b"", "bytes after the last answer"


async def test_pipelined_requests_arriving_byte_by_byte_are_answered_in_order(service):
    data = graphql_post(typename("a")) + request("GET", "/live") + graphql_post(typename("b"))
    async with connection(service) as (stream, reader):
        with trio.fail_after(WAIT):
            for index in range(0, len(data), 7):
                await stream.send_all(data[index : index + 7])
            a, live, b = await reader.response(), await reader.response(), await reader.response()
    assert_typename(a, "a")
    assert live.status == 200, live
    assert_typename(b, "b")


# --- methods and upgrades -------------------------------------------------------------------------------------


@pytest.mark.parametrize("pieces", [1, 2], ids=["whole", "method-split"])
async def test_an_extension_method_reaches_the_app_which_answers_405(service, pieces):
    # RFC 9110 9.1: a method is any token; llhttp knows a fixed list, the app answers one it does not route (405),
    # also when the method arrives in pieces and on a connection that served a request before.
    data = request("FROB", "/graphql", [("Content-Length", "3")], b"abc")
    async with connection(service) as (stream, reader):
        await send(stream, request("GET", "/live"))
        with trio.fail_after(WAIT):
            assert (await reader.response()).status == 200
            if pieces == 2:
                await stream.send_all(data[:2])
                await trio.sleep(0.05)
                data = data[2:]
            await send(stream, data + request("GET", "/live"))
            frob, live = await reader.response(), await reader.response()
    assert frob.status == 405 and not frob.closes, frob
    assert "POST" in (frob.header("allow") or ""), frob
    assert live.status == 200, live


@pytest.mark.parametrize("upgrade", ["foo/2", "websocket"])
async def test_an_upgrade_the_edge_does_not_take_is_served_as_an_ordinary_request(service, upgrade):
    # `foo` is no protocol svc speaks; a WebSocket upgrade on a POST with a body is no handshake (RFC 6455 4.1):
    # both are answered over HTTP/1.1 with their body read, and the connection goes on (RFC 9110 7.8).
    headers = [("Connection", "Upgrade"), ("Upgrade", upgrade), ("Content-Type", "application/json")]
    async with connection(service) as (stream, reader):
        await send(stream, request("POST", "/graphql", headers, TYPENAME) + request("GET", "/live"))
        with trio.fail_after(WAIT):
            answer, live = await reader.response(), await reader.response()
    assert answer.status == 200 and json.loads(answer.body) == TYPENAME_ANSWER, answer
    assert live.status == 200, live


# --- request bodies -------------------------------------------------------------------------------------------


async def test_a_content_length_body(service):
    response = await exchange(service, graphql_post(TYPENAME))
    assert response.status == 200, response
    assert json.loads(response.body) == TYPENAME_ANSWER


@pytest.mark.parametrize(
    "body",
    [
        chunked(TYPENAME),
        chunked(TYPENAME[:1], TYPENAME[1:10], TYPENAME[10:]),
        chunked(TYPENAME[:5], TYPENAME[5:], extension=b";name=value"),
        chunked(TYPENAME)[:-2] + b"X-Trailer: yes\r\n\r\n",
        chunked(TYPENAME).replace(b"%x\r\n" % len(TYPENAME), b"%X\r\n" % len(TYPENAME)),
    ],
    ids=["one-chunk", "three-chunks", "extension", "trailer", "upper-hex"],
)
async def test_a_chunked_body(service, body):
    data = graphql_post(b"", [("Transfer-Encoding", "chunked")]) + body
    async with connection(service) as (stream, reader):
        await send(stream, data + request("GET", "/live"))  # the next request is read where the body ends
        with trio.fail_after(WAIT):
            response = await reader.response()
            after = await reader.response()
    assert response.status == 200, (data, str(response))
    assert json.loads(response.body) == TYPENAME_ANSWER
    assert after.status == 200, after


async def test_a_chunked_body_sent_slowly_in_pieces(service):
    body = chunked(TYPENAME[:4], TYPENAME[4:12], TYPENAME[12:])
    async with connection(service) as (stream, reader):
        await send(stream, graphql_post(b"", [("Transfer-Encoding", "chunked")]))
        for index in range(0, len(body), 5):
            await trio.sleep(0.01)
            await send(stream, body[index : index + 5])
        with trio.fail_after(WAIT):
            response = await reader.response()
    assert response.status == 200, response
    assert json.loads(response.body) == TYPENAME_ANSWER


# --- Expect: 100-continue -------------------------------------------------------------------------------------


async def test_expect_100_continue_answers_100_before_the_body_is_sent(service):
    head = graphql_post(b"", [("Expect", "100-continue"), ("Content-Length", str(len(TYPENAME)))])
    async with connection(service) as (stream, reader):
        await send(stream, head)
        with trio.fail_after(WAIT):
            interim = await reader.response(informational=True)
        assert interim.status == 100, interim
        assert reader.buffer == b"", "more than the 100 Continue before the body was sent"
        await send(stream, TYPENAME)
        with trio.fail_after(WAIT):
            response = await reader.response()
        assert response.status == 200, response
        assert json.loads(response.body) == TYPENAME_ANSWER
        # The connection goes on.
        await send(stream, request("GET", "/live"))
        with trio.fail_after(WAIT):
            assert (await reader.response()).status == 200


async def test_expect_100_continue_with_a_chunked_body(service):
    head = graphql_post(b"", [("Expect", "100-continue"), ("Transfer-Encoding", "chunked")])
    async with connection(service) as (stream, reader):
        await send(stream, head)
        with trio.fail_after(WAIT):
            interim = await reader.response(informational=True)
        assert interim.status == 100, interim
        await send(stream, chunked(TYPENAME[:9], TYPENAME[9:]))
        with trio.fail_after(WAIT):
            response = await reader.response()
        assert response.status == 200, response
        assert json.loads(response.body) == TYPENAME_ANSWER


async def test_expect_100_continue_with_a_too_large_content_length_answers_413_without_100(
    tmp_path, database_url, edge
):
    async with edge_service(tmp_path, database_url, edge, {"limits": {"request_body_bytes": 1024}}) as service:
        head = graphql_post(b"", [("Expect", "100-continue"), ("Content-Length", "100000")])
        async with connection(service) as (stream, reader):
            await send(stream, head)
            with trio.fail_after(WAIT):
                interim, response = await reader.final()
            assert interim == [], "100 Continue for a body that is refused by its length"
            assert response.status == 413, response
            assert "PAYLOAD_TOO_LARGE" in response.body.decode(), response
            assert response.closes, response
            assert await reader.closed() == b""
        # A body within the limit is still served on a new connection.
        response = await exchange(service, graphql_post(TYPENAME, [("Expect", "100-continue")]))
        assert response.status == 200, response


async def test_a_too_large_content_length_without_expect_is_answered_413_and_closed(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, {"limits": {"request_body_bytes": 1024}}) as service:
        async with connection(service) as (stream, reader):
            # Only part of the body is sent: the answer must not wait for the rest.
            await send(stream, graphql_post(b"", [("Content-Length", "100000")]) + b"x" * 2048)
            with trio.fail_after(WAIT):
                response = await reader.response()
            assert response.status == 413, response
            assert response.closes, response
            assert await reader.closed() == b""


# --- HEAD and response headers --------------------------------------------------------------------------------


async def test_head_answers_the_headers_of_get_without_a_body(service):
    async with connection(service) as (stream, reader):
        # The GET after the HEAD is read right after the HEAD's head: a body sent for HEAD would break it.
        await send(stream, request("HEAD", "/live") + request("GET", "/live"))
        with trio.fail_after(WAIT):
            head = await reader.response("HEAD")
            get = await reader.response()
    assert head.status == 200, head
    assert get.status == 200 and json.loads(get.body) == {"status": "ok"}, get
    assert head.header("content-length") == get.header("content-length") == str(len(get.body)), (head, get)
    assert head.header("content-type") == get.header("content-type")


async def test_response_headers_one_content_length_a_date_and_no_server(service):
    requests = [
        ("GET", request("GET", "/live")),
        ("POST", graphql_post(TYPENAME)),
        ("GET", request("GET", "/no/such/path")),
        ("HEAD", request("HEAD", "/live")),
        ("POST", graphql_post(b"{not json")),
    ]
    before = time.time()
    for method, data in requests:
        response = await exchange(service, data, method)
        assert len(response.values("content-length")) == 1, response.head
        assert response.values("transfer-encoding") == [], response.head
        assert response.values("server") == [], response.head
        dates = response.values("date")
        assert len(dates) == 1, response.head
        assert abs(parsedate_to_datetime(dates[0]).timestamp() - before) < 60, dates
        assert dates[0].endswith(" GMT"), dates


async def test_a_streaming_answer_uses_chunked_framing(tmp_path, database_url, edge):
    # GraphQL over server-sent events (subscriptions on): a query is answered with one `next` and a `complete`, as a
    # streamed body, so neither edge knows its length in advance.
    settings = {"subscriptions": {"enabled": True}}
    async with edge_service(tmp_path, database_url, edge, settings) as service:
        data = request(
            "POST",
            "/graphql/stream",
            [("Content-Type", "application/json"), ("Accept", "text/event-stream")],
            TYPENAME,
        )
        async with connection(service) as (stream, reader):
            await send(stream, data + request("GET", "/live"))
            with trio.fail_after(WAIT):
                response = await reader.response()
                after = await reader.response()
        assert response.status == 200, response
        assert response.header("content-type").startswith("text/event-stream"), response
        assert response.framing == "chunked", response.head
        assert response.values("content-length") == [], response.head
        assert b"event: next" in response.body and b"event: complete" in response.body, response.body
        assert b'"__typename":"Query"' in response.body, response.body
        assert after.status == 200, after  # the stream ended cleanly and the connection goes on


# --- half-closed sockets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_half_closed_client_still_gets_the_answer(service, method):
    data = request("GET", "/live") if method == "GET" else graphql_post(TYPENAME)
    async with connection(service) as (stream, reader):
        await send(stream, data)
        await stream.send_eof()
        with trio.fail_after(WAIT):
            response = await reader.response()
        assert response.status == 200, response
        if method == "POST":
            assert json.loads(response.body) == TYPENAME_ANSWER
        # Nothing more can come from the client: the server closes its side too.
        assert await reader.closed() == b""


async def test_half_closed_after_pipelined_requests_answers_them_all(service):
    async with connection(service) as (stream, reader):
        await send(stream, graphql_post(typename("x")) + request("GET", "/live") + graphql_post(typename("y")))
        await stream.send_eof()
        with trio.fail_after(WAIT):
            x, live, y = await reader.response(), await reader.response(), await reader.response()
        assert_typename(x, "x")
        assert live.status == 200, live
        assert_typename(y, "y")
        assert await reader.closed() == b""


# --- timeouts -------------------------------------------------------------------------------------------------


async def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, keep_alive_timeout="300ms") as service:
        async with connection(service) as (stream, reader):
            await send(stream, request("GET", "/live"))
            with trio.fail_after(WAIT):
                response = await reader.response()
            assert response.status == 200 and not response.closes, response
            started = trio.current_time()
            assert await reader.closed(timeout=3) == b""
            idle = trio.current_time() - started
            assert 0.2 <= idle <= 1.0, f"closed after {idle:.2f}s idle (keep_alive_timeout 300ms)"


async def test_a_busy_keep_alive_connection_is_not_closed_by_the_keep_alive_timeout(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, keep_alive_timeout="300ms") as service:
        async with connection(service) as (stream, reader):
            for _ in range(6):  # 6 x 150 ms: longer than the timeout in all, never idle that long
                await send(stream, request("GET", "/live"))
                with trio.fail_after(WAIT):
                    assert (await reader.response()).status == 200
                await trio.sleep(0.15)


async def test_a_client_sending_its_head_too_slowly_is_closed_by_the_header_timeout(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, header_timeout="300ms") as service:
        head = request("GET", "/live", [("X-Slow", "a" * 100)])  # 100 ms a byte: ~15 s to send it all
        async with connection(service) as (stream, reader):
            started = trio.current_time()
            answered = b""
            async with trio.open_nursery() as nursery:

                async def trickle() -> None:
                    for byte in head:
                        if not await send(stream, bytes([byte])):
                            return
                        await trio.sleep(0.1)

                nursery.start_soon(trickle)
                answered = await reader.closed(timeout=4)
                nursery.cancel_scope.cancel()
            elapsed = trio.current_time() - started
        assert elapsed <= 2.0, f"closed after {elapsed:.2f}s (header_timeout 300ms)"
        assert answered == b"" or answered.startswith(b"HTTP/1.1 408 "), answered
        # A prompt client is served meanwhile.
        response = await exchange(service, request("GET", "/live"))
        assert response.status == 200, response


async def test_a_connection_that_never_sends_is_closed_by_the_header_timeout(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, header_timeout="300ms") as service:
        async with connection(service) as (_, reader):
            started = trio.current_time()
            answered = await reader.closed(timeout=4)
            elapsed = trio.current_time() - started
        assert answered == b"" or answered.startswith(b"HTTP/1.1 408 "), answered
        assert elapsed <= 2.0, f"a silent new connection closed after {elapsed:.2f}s (header_timeout 300ms)"


async def test_a_slow_but_steady_body_is_not_cut_by_the_header_timeout(tmp_path, database_url, edge):
    # The header deadline bounds the head only: a body may take longer in all, as long as it keeps coming.
    async with edge_service(tmp_path, database_url, edge, header_timeout="300ms") as service:
        body = chunked(*[TYPENAME[index : index + 4] for index in range(0, len(TYPENAME), 4)])
        async with connection(service) as (stream, reader):
            await send(stream, graphql_post(b"", [("Transfer-Encoding", "chunked")]))
            for index in range(0, len(body), len(body) // 6 + 1):
                await send(stream, body[index : index + len(body) // 6 + 1])
                await trio.sleep(0.1)
            with trio.fail_after(WAIT):
                response = await reader.response()
            assert response.status == 200, response
            assert json.loads(response.body) == TYPENAME_ANSWER
