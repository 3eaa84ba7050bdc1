"""Clients' JSON (bodies, URL parameters, import lines) is read by orjson and, where orjson refuses a text or reads it
otherwise, by json, whose reading is the rule (svc.plan.parse_json): whatever the text, the value or the refusal is
json's, nesting past MAX_JSON_DEPTH refused either way."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.errors import SvcError
from svc.plan import MAX_JSON_DEPTH, parse_json


def _json(text: bytes):
    """What json reads (the rule), or the refusal."""
    try:
        return "value", json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "refused", None


def _read(text: bytes):
    try:
        return "value", parse_json(text)
    except SvcError:
        return "refused", None


def _same(a, b) -> bool:
    """Equal values of equal types (1 and 1.0 differ: a whole number read as a float is read wrong)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@pytest.mark.parametrize(
    "text",
    [
        b'\xef\xbb\xbf{"a": 1}',  # a BOM: json reads it, orjson refuses
        '{"a": "é"}'.encode("utf-16"),  # UTF-16: json detects it
        b"NaN",
        b'{"f": Infinity}',
        b'"\\ud800"',  # a lone surrogate
        b"123456789012345678901234567890",  # past 64 bits: orjson would read a float
        b'{"big": -9223372036854775809, "n": [18446744073709551616]}',
        b"18446744073709551615",
        b"1e400",
        b'{"a": 1, "a": 2}',
        b'"\\u0000"',
        b"-0",
        b"1.5e300",
        b' [1, 2.5, {"x": null}] \r\n',
        b'{"a": 1}\x00',
        b'"\xff"',
        b"",
        b"[1,]",
    ],
)
def test_a_text_is_read_as_json_reads_it(text):
    (kind, value), (rule, expected) = _read(text), _json(text)
    assert kind == rule and _same(value, expected), (value, expected)


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**80), max_value=2**80)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
        max_leaves=12,
    )
)
def test_any_json_value_reads_back_as_itself(value):
    text = json.dumps(value).encode()
    kind, read = _read(text)
    assert kind == "value" and _same(read, json.loads(text))


@given(st.binary(max_size=40))
def test_any_bytes_are_read_or_refused_as_json_does(text):
    (kind, value), (rule, expected) = _read(text), _json(text)
    assert kind == rule and (kind == "refused" or _same(value, expected))


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 2000])
def test_nesting_past_the_limit_is_refused_either_way(depth):
    text = ("[" * depth + "]" * depth).encode()
    if depth <= MAX_JSON_DEPTH:
        assert parse_json(text) is not None
    else:
        with pytest.raises(SvcError, match="nested more than"):
            parse_json(text)
