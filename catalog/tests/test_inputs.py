"""Integers and JSON read from requests (`catalog.inputs`): pure rules, tested directly."""

from __future__ import annotations

import json

import pytest

from catalog.inputs import (
    BadInteger,
    BadJson,
    JsonTooDeep,
    JsonTooLarge,
    loads_bounded,
    nesting_depth,
    parse_bounded_int,
)

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize(("raw", "number"), [("1", 1), ("100000", 100_000), ("007", 7), ("-5", -5), ("0", 0)])
def test_ascii_integers_within_the_bounds_are_read(raw, number):
    assert parse_bounded_int(raw, low=-10, high=100_000) == number


@pytest.mark.parametrize(
    "raw",
    [
        "\u00b2",  # "²": isdigit() is true, int() raises
        "\u2460",  # "①"
        "\u0663",  # "٣": int() reads 3
        "\uff11",  # fullwidth "１": int() reads 1
        "1_000",  # int() reads 1000
        " 7",
        "7 ",
        "+7",
        "",
        "-",
        "1e3",
        "9" * 5000,  # past int()'s digit limit
        "100001",
        "-11",
        "0" * 40 + "1",  # within the bound in value, but no number is this long
    ],
)
def test_anything_else_is_a_bad_integer_naming_the_bounds(raw):
    with pytest.raises(BadInteger, match="whole number from -10 to 100,000"):
        parse_bounded_int(raw, low=-10, high=100_000)


@pytest.mark.parametrize(
    ("raw", "depth"),
    [
        (b"1", 0),
        (b"{}", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["[[[[", "{{{{"]', 1),  # brackets inside strings do not count
        (rb'["\"[[[[", "\\", [[]]]', 3),  # nor after escaped quotes and backslashes
        (b"[" * 100_000 + b"]" * 100_000, 100_000),
    ],
)
def test_nesting_depth_counts_brackets_outside_strings(raw, depth):
    assert nesting_depth(raw) == depth


def test_deep_json_is_refused_before_parsing_and_shallow_json_parses():
    assert loads_bounded(b'{"a": [1, {"b": 2}]}', max_depth=3, max_bytes=100) == {"a": [1, {"b": 2}]}
    with pytest.raises(JsonTooDeep, match="deeper than 3 levels"):
        loads_bounded(b'{"a": [[{"b": 2}]]}', max_depth=3, max_bytes=100)
    with pytest.raises(JsonTooDeep):  # far past the recursion limit: no RecursionError
        loads_bounded(b"[" * 200_000 + b"]" * 200_000, max_depth=32, max_bytes=1_000_000)


def test_a_body_past_the_size_limit_is_refused_whatever_it_holds():
    body = json.dumps({"pad": "x" * 100}).encode()
    assert loads_bounded(body, max_bytes=len(body), max_depth=2)["pad"] == "x" * 100
    with pytest.raises(JsonTooLarge, match=f"larger than {len(body) - 1} bytes"):
        loads_bounded(body, max_bytes=len(body) - 1, max_depth=2)


@pytest.mark.parametrize(
    "raw",
    [b"1e999999", b"[-1e999999]", b"NaN", b'{"a": Infinity}', b"9" * 5000, b'{"a": "\xff"}', b"{", b""],
)
def test_numbers_no_column_holds_and_text_that_is_not_json_are_bad_json(raw):
    with pytest.raises(BadJson):
        loads_bounded(raw, max_bytes=10_000, max_depth=8)


def test_the_limits_default_to_the_settings(settings):
    settings.REQUEST_JSON_MAX_DEPTH = 2
    settings.REQUEST_JSON_MAX_BYTES = 10
    assert loads_bounded(b"[[1]]") == [[1]]
    with pytest.raises(JsonTooDeep):
        loads_bounded(b"[[[1]]]")
    with pytest.raises(JsonTooLarge):
        loads_bounded(b"[1, 2, 3, 4, 5]")
