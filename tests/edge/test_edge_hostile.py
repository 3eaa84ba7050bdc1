"""Hostile HTTP/1.1 on both edges (`server.http`: `fast` and `hypercorn`), over raw TCP: request smuggling shapes
(Content-Length with Transfer-Encoding, conflicting lengths, obfuscated codings), bad chunk sizes, an over-long
request line, an over-large header section, too many header fields, invalid bytes, bare LF, garbage, and a fuzz of
raw request bytes. Each refusal is one 4xx (400, 413, 414 or 431) carrying `connection: close`, or for garbage no
answer at all, and then the connection closed; never a 5xx, never a second answer, never a hang (issue 22, the
edge contract, "Limits both edges enforce")."""

import functools
import json

import pytest
import trio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.edge.wire import EDGES, TYPENAME, Outcome, attempt, chunked, edge_service, exchange, graphql_post, request

REFUSALS = {400, 413, 414, 431}
#: A request that must never be answered: it is smuggled after (or inside) the body of a refused one.
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture(params=EDGES)
def edge(request) -> str:
    return request.param


@pytest.fixture
async def service(tmp_path, database_url, edge):
    async with edge_service(tmp_path, database_url, edge, {"limits": {"request_body_bytes": 1024}}) as running:
        yield running


def refusal_problems(outcome: Outcome, allowed: set[int], *, silent: bool = False) -> list[str]:
    """What is wrong with how a hostile request was handled: it must be one answer with an allowed status and
    `connection: close` (or, when `silent`, no answer), then the connection closed."""
    problems = []
    if outcome.unparsed:
        problems.append(f"bytes that are not an HTTP response ({outcome.unparsed})")
    statuses = [response.status for response in outcome.responses]
    if any(status >= 500 for status in statuses):
        problems.append(f"a 5xx answer {statuses}")
    if not statuses:
        if not silent:
            problems.append(f"no answer (expected one of {sorted(allowed)})")
    else:
        if len(statuses) > 1:
            problems.append(f"{len(statuses)} answers {statuses} (expected one)")
        if statuses[0] not in allowed:
            problems.append(f"status {statuses[0]} (expected one of {sorted(allowed)})")
        elif not outcome.responses[0].closes:
            problems.append("the refusal lacks `connection: close`")
    if not outcome.closed:
        problems.append("the connection was not closed")
    return problems


async def check_refused(service, cases: dict[str, bytes], allowed: set[int], *, silent: bool = False) -> None:
    """Each case on its own connection; every problem of every case reported together, then the service still
    answers."""
    report = []
    for name, data in cases.items():
        outcome = await attempt(service, data)
        if problems := refusal_problems(outcome, allowed, silent=silent):
            report.append(f"{name}: {'; '.join(problems)}\n    {outcome}")
    live = await exchange(service, request("GET", "/live"))
    assert live.status == 200, live
    assert not report, "\n".join(report)


def post_head(*headers: str, target: str = "/graphql") -> bytes:
    lines = [f"POST {target} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# --- request smuggling ----------------------------------------------------------------------------------------


async def test_content_length_with_transfer_encoding_is_refused_and_the_smuggled_request_not_answered(service):
    body = chunked(TYPENAME)
    # CL.TE: a front reading Content-Length passes the smuggled request along inside the body.
    inside = b"0\r\n\r\n" + SMUGGLED
    # TE.CL: a front reading the chunks passes a body whose first 4 bytes end it for a Content-Length reader.
    hidden = b"%x\r\n" % len(SMUGGLED) + SMUGGLED + b"\r\n0\r\n\r\n"
    cases = {
        "CL then TE": post_head(f"Content-Length: {len(body)}", "Transfer-Encoding: chunked") + body + SMUGGLED,
        "TE then CL": post_head("Transfer-Encoding: chunked", f"Content-Length: {len(body)}") + body + SMUGGLED,
        "CL.TE": post_head(f"Content-Length: {len(inside)}", "Transfer-Encoding: chunked") + inside,
        "TE.CL": post_head("Content-Length: 4", "Transfer-Encoding: chunked") + hidden,
        "CL 0 with TE": post_head("Content-Length: 0", "Transfer-Encoding: chunked") + body + SMUGGLED,
    }
    await check_refused(service, cases, {400})


async def test_obfuscated_transfer_encodings_are_refused(service):
    body = chunked(TYPENAME)
    length = f"Content-Length: {len(body)}"
    cases = {
        "TE xchunked + CL": post_head(length, "Transfer-Encoding: xchunked") + body + SMUGGLED,
        "TE chunked twice + CL": post_head(length, "Transfer-Encoding: chunked", "Transfer-Encoding: chunked")
        + body
        + SMUGGLED,
        "TE identity, chunked": post_head("Transfer-Encoding: identity, chunked") + body + SMUGGLED,
        "TE chunked, identity": post_head("Transfer-Encoding: chunked, identity") + body + SMUGGLED,
        "TE gzip": post_head("Transfer-Encoding: gzip") + body + SMUGGLED,
        "TE with space before colon": post_head("Transfer-Encoding : chunked", length) + body + SMUGGLED,
        "TE with a vertical tab": post_head("Transfer-Encoding:\x0bchunked", length) + body + SMUGGLED,
    }
    await check_refused(service, cases, {400})


async def test_a_folded_transfer_encoding_is_refused_or_joined_never_read_as_a_header(service):
    # RFC 9112 5.2: a server rejects obs-fold with 400 or replaces it with spaces. The Content-Length covers the
    # smuggled request, so a server joining the fold answers once (the body is no JSON), one reading the folded
    # line as Transfer-Encoding answers the smuggled request too.
    body = chunked(TYPENAME) + SMUGGLED
    data = post_head("X-Pad: a", " Transfer-Encoding: chunked", f"Content-Length: {len(body)}", "Connection: close")
    outcome = await attempt(service, data + body)
    statuses = [response.status for response in outcome.responses]
    assert statuses in ([400], [413]), outcome
    assert outcome.responses[0].closes and outcome.closed, outcome


async def test_conflicting_or_invalid_content_lengths_are_refused(service):
    body = TYPENAME
    n = len(body)
    cases = {
        "two different CL headers": post_head(f"Content-Length: {n}", f"Content-Length: {n + 5}") + body + SMUGGLED,
        "two different CL in one header": post_head(f"Content-Length: {n}, {n + 5}") + body + SMUGGLED,
        "negative CL": post_head("Content-Length: -1") + body + SMUGGLED,
        "non-numeric CL": post_head("Content-Length: abc") + body + SMUGGLED,
        "CL with a plus": post_head(f"Content-Length: +{n}") + body + SMUGGLED,
        "CL with inner space": post_head(f"Content-Length: {n} 5") + body + SMUGGLED,
        "CL hex": post_head(f"Content-Length: 0x{n:x}") + body + SMUGGLED,
        "CL overflowing 64 bits": post_head("Content-Length: 184467440737095516160") + body + SMUGGLED,
    }
    await check_refused(service, cases, {400, 413})


async def test_bad_chunk_sizes_are_refused(service):
    head = post_head("Transfer-Encoding: chunked")
    part = TYPENAME
    cases = {
        "non-hex size": head + b"zz\r\n" + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "negative size": head + b"-1\r\n" + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "overflowing size": head + b"ffffffffffffffffff\r\n" + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "0x-prefixed size": head + b"0x%x\r\n" % len(part) + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "empty size line": head + b"\r\n" + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "data longer than its size": head + b"%x\r\n" % (len(part) - 3) + part + b"\r\n0\r\n\r\n" + SMUGGLED,
        "size with inner space": head + b"1 8\r\n" + part + b"\r\n0\r\n\r\n" + SMUGGLED,
    }
    await check_refused(service, cases, {400, 413})


# --- sizes ----------------------------------------------------------------------------------------------------


async def test_a_request_target_over_8_kib_is_refused(service):
    cases = {
        "9 KiB target": request("GET", "/live?" + "a" * (9 * 1024)),
        "9 KiB path": request("GET", "/" + "a" * (9 * 1024)),
        "20 KiB target": request("GET", "/live?" + "a" * (20 * 1024)),
        "100 KiB target, no end": b"GET /" + b"a" * (100 * 1024),
    }
    await check_refused(service, cases, {414, 400, 431})
    # 8 KiB exactly is still served.
    assert (await exchange(service, request("GET", "/live?" + "a" * (8 * 1024 - 6)))).status == 200


async def test_a_header_section_over_16_kib_is_refused(service):
    cases = {
        "one 17 KiB header": request("GET", "/live", [("X-Big", "a" * (17 * 1024))]),
        "34 headers of 512 bytes": request("GET", "/live", [(f"X-H{n}", "a" * 512) for n in range(34)]),
        "64 KiB header, no end": b"GET /live HTTP/1.1\r\nX-Big: " + b"a" * (64 * 1024),
    }
    await check_refused(service, cases, {431, 400})
    # 15 KiB of headers is still served.
    assert (await exchange(service, request("GET", "/live", [(f"X-H{n}", "a" * 500) for n in range(30)]))).status == 200


async def test_more_than_100_header_fields_are_refused(service):
    cases = {
        "101 fields": request("GET", "/live", [(f"X-F{n}", "v") for n in range(100)]),  # + Host: 101
        "300 fields": request("GET", "/live", [(f"X-F{n}", "v") for n in range(300)]),
    }
    await check_refused(service, cases, {431, 400})
    # 100 fields are served.
    assert (await exchange(service, request("GET", "/live", [(f"X-F{n}", "v") for n in range(99)]))).status == 200


# --- invalid bytes --------------------------------------------------------------------------------------------


async def test_invalid_bytes_in_the_head_are_refused(service):
    cases = {
        "NUL in a header value": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n",
        "control char in a header name": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nX\x01A: b\r\n\r\n",
        "DEL in a header name": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nX\x7fA: b\r\n\r\n",
        "space in a header name": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nX A: b\r\n\r\n",
        "space before the colon": b"GET /live HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n",
        "bare CR in a header value": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\rb\r\n\r\n",
        "a header line without colon": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColon\r\n\r\n",
        "empty header name": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\n: value\r\n\r\n",
        "non-ASCII method": "GÉT /live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(),
        "latin-1 method": b"G\xc9T /live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "NUL in the target": b"GET /li\x00ve HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "space in the target": b"GET /li ve HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "bad version": b"GET /live HTTP/1.x\r\nHost: 127.0.0.1\r\n\r\n",
        "lower-case protocol": b"GET /live http/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "no version": b"GET /live\r\nHost: 127.0.0.1\r\n\r\n",
        "leading whitespace in the first header": b"GET /live HTTP/1.1\r\n Host: 127.0.0.1\r\n\r\n",
    }
    await check_refused(service, cases, {400})


async def test_garbage_is_refused_or_closed(service):
    cases = {
        "TLS client hello": bytes.fromhex("160301020001000200030300") + b"\x00" * 40,
        "NUL bytes": b"\x00" * 64,
        "a line of words": b"hello there\r\n\r\n",
        "binary": bytes(range(256)),
        "CRLFs then garbage": b"\r\n\r\n\x01\x02\x03\r\n\r\n",
    }
    await check_refused(service, cases, REFUSALS, silent=True)


async def test_bare_lf_is_either_served_once_or_refused(service):
    # RFC 9112 lets a server accept a bare LF as a line end; either way: one answer, never a 5xx, never a
    # second answer, and with `Connection: close` (or a refusal) the connection ends.
    cases = {
        "bare LF everywhere": b"GET /live HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n" + SMUGGLED,
        "bare LF ending the head": b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\n\n" + SMUGGLED,
        "bare LF in a chunk": post_head("Transfer-Encoding: chunked", "Connection: close")
        + b"%x\n" % len(TYPENAME)
        + TYPENAME
        + b"\n0\n\n"
        + SMUGGLED,
    }
    report = []
    for name, data in cases.items():
        outcome = await attempt(service, data)
        statuses = [response.status for response in outcome.responses]
        problems = refusal_problems(outcome, {200, 400})
        if statuses == [200] and not outcome.responses[0].closes:
            problems.append("`Connection: close` not honoured")
        if problems:
            report.append(f"{name}: {'; '.join(problems)}\n    {outcome}")
    assert not report, "\n".join(report)


@pytest.mark.parametrize("protocol", ["websocket", "h2c", "foo"])
async def test_upgrade_headers_do_not_let_hostile_requests_past_the_checks(service, protocol):
    # The fast edge hands WebSocket and h2c upgrades to hypercorn (and nothing else): what it refuses without the
    # Upgrade header it refuses with it too, and never answers a 5xx.
    upgrade = ["Connection: Upgrade, HTTP2-Settings", f"Upgrade: {protocol}", "HTTP2-Settings: AAMAAABkAAQAAP__"]
    if protocol == "websocket":
        upgrade = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol: graphql-transport-ws"]  # fmt: skip
    body = chunked(TYPENAME)
    cases = {
        "CL with TE": post_head(*upgrade, f"Content-Length: {len(body)}", "Transfer-Encoding: chunked")
        + body
        + SMUGGLED,
        "TE gzip": post_head(*upgrade, "Transfer-Encoding: gzip") + body + SMUGGLED,
        "two different CLs": post_head(*upgrade, "Content-Length: 24", "Content-Length: 25") + TYPENAME + SMUGGLED,
        "overflowing chunk size": post_head(*upgrade, "Transfer-Encoding: chunked")
        + b"ffffffffffffffffff\r\n"
        + TYPENAME
        + b"\r\n0\r\n\r\n",
        "9 KiB target": (
            "GET /graphql?" + "a" * 9216 + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "\r\n".join(upgrade) + "\r\n\r\n"
        ).encode(),
        "101 fields": request(
            "GET",
            "/graphql",
            [*(tuple(line.split(": ", 1)) for line in upgrade), *((f"X-F{n}", "v") for n in range(100))],
        ),
        "NUL in a value": post_head(*upgrade, "X-A: a\x00b", "Content-Length: 24") + TYPENAME,
    }
    await check_refused(service, cases, REFUSALS)


async def test_bytes_after_a_request_that_closes_are_not_answered_and_the_service_goes_on(service):
    # A request ending its connection (Connection: close, HTTP/1.0) followed by more bytes: one answer, the
    # connection closed, nothing more answered, and the service keeps accepting connections.
    cases = {
        "Connection: close, then a request": request("GET", "/live", [("Connection", "close")]) + SMUGGLED,
        "HTTP/1.0, then a request": request("GET", "/live", version="HTTP/1.0") + SMUGGLED,
        "Connection: close, then garbage": graphql_post(TYPENAME, [("Connection", "close")]) + b"\x00\xff garbage\r\n",
    }
    report = []
    for name, data in cases.items():
        for half_close in (False, True, False):
            outcome = await attempt(service, data, half_close=half_close)
            if problems := refusal_problems(outcome, {200}):
                report.append(f"{name} (half-closed: {half_close}): {'; '.join(problems)}\n    {outcome}")
    live = await attempt(service, request("GET", "/live", [("Connection", "close")]))
    if [response.status for response in live.responses] != [200]:
        report.append(f"afterwards GET /live: {live}")
    assert not report, "\n".join(report)


# --- fuzz -----------------------------------------------------------------------------------------------------

VALID = [
    request("GET", "/live"),
    request("GET", "/ready", [("Accept", "*/*")]),
    graphql_post(TYPENAME),
    graphql_post(b"", [("Transfer-Encoding", "chunked")]) + chunked(TYPENAME[:10], TYPENAME[10:]),
    graphql_post(TYPENAME, [("Expect", "100-continue")]),
    request("GET", "/graphql?query=%7B__typename%7D", [("Accept", "application/json"), ("Connection", "close")]),
    request("OPTIONS", "/graphql", [("Origin", "http://x"), ("Access-Control-Request-Method", "POST")]),
]
SPECIAL = st.sampled_from(
    [b"\r\n", b"\n", b"\r", b"\x00", b" ", b":", b"\t", b"0\r\n\r\n", b"Content-Length: 5\r\n",
     b"Transfer-Encoding: chunked\r\n", b"\xff", b"ffffffffffffffffffff", b"-1", b"\r\n\r\n", b"HTTP/1.1", b"%00"]
)  # fmt: skip


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        operation = draw(st.sampled_from(["insert", "delete", "replace", "special", "truncate", "repeat"]))
        if operation == "insert":
            data[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif operation == "delete":
            del data[position : position + draw(st.integers(1, 16))]
        elif operation == "replace" and position < len(data):
            data[position] = draw(st.integers(0, 255))
        elif operation == "special":
            data[position:position] = draw(SPECIAL)
        elif operation == "truncate":
            del data[position:]
        elif operation == "repeat":
            data += data[position:]
    return bytes(data)


RAW_REQUESTS = st.one_of(
    mutated(),
    st.lists(st.sampled_from(VALID), min_size=1, max_size=3)
    .map(b"".join)
    .flatmap(lambda valid: mutated().map(lambda tail: valid + tail)),
    st.binary(max_size=300),
    st.tuples(st.sampled_from([b"GET ", b"POST ", b"GET /live HTTP/1.1\r\n"]), st.binary(max_size=120)).map(b"".join),
)


@functools.cache
def fuzz_inputs(count: int = 400) -> tuple[bytes, ...]:
    """The fuzz's requests, drawn once (the same on both edges and on every run)."""
    found: list[bytes] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(RAW_REQUESTS)
    def collect(data: bytes) -> None:
        found.append(data)

    collect()
    return tuple(found)


def fuzz_problems(outcome: Outcome) -> list[str]:
    """Whatever bytes came in, what came out is well-formed responses, none a 5xx, nothing after one that closes,
    and the connection closed (the client shut its write side down after its bytes; the keep-alive timeout is 500 ms,
    the header timeout 1 s)."""
    problems = []
    if outcome.unparsed:
        problems.append(f"bytes that are not an HTTP response ({outcome.unparsed})")
    for index, response in enumerate(outcome.responses):
        if response.status >= 500:
            problems.append(f"a 5xx answer {response.status}")
        if response.closes and index < len(outcome.responses) - 1:
            problems.append(f"an answer after one with `connection: close` {[r.status for r in outcome.responses]}")
        if response.status >= 400 and response.values("x-request-id") == [] and not response.closes:
            # Made by the edge itself (the app's answers carry a request id): a refusal, which ends the connection.
            problems.append(f"a {response.status} refusal by the edge without `connection: close`")
    if not outcome.closed:
        problems.append("the connection was not closed after the client's end")
    return problems


async def test_fuzzed_raw_requests_never_get_a_5xx_a_malformed_answer_or_a_hang(tmp_path, database_url, edge):
    inputs = fuzz_inputs()
    report = []
    settings = {"limits": {"request_body_bytes": 1024}}
    async with edge_service(
        tmp_path, database_url, edge, settings, keep_alive_timeout="500ms", header_timeout="1s"
    ) as service:
        with trio.fail_after(45):
            previous = b""
            for data in inputs:
                outcome = await attempt(service, data, half_close=True)
                if problems := fuzz_problems(outcome):
                    report.append(f"{'; '.join(problems)}\n    {outcome}")
                if outcome.unparsed and "NO LONGER ACCEPTS" in outcome.unparsed:
                    report.append(f"the service stopped accepting connections after {previous!r}")
                    break
                previous = data
        # The service still answers on a new connection.
        live = await attempt(service, request("GET", "/live", [("Connection", "close")]))
        answers = [(response.status, json.loads(response.body)) for response in live.responses]
        if answers != [(200, {"status": "ok"})]:
            report.append(f"after the fuzz, GET /live: {live}")
    assert not report, f"{len(report)} problems with {len(inputs)} inputs:\n" + "\n".join(report[:15])
