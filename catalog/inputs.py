"""Numbers and JSON read from a request, checked before Python or the database can choke on them.

Every door of the web process (the library API, the readers, the admin API)
reads integers from query strings and JSON from bodies; both had ways to end
in a 500 rather than a 400:

- `str.isdigit()` is true for "²" and "①", which `int()` refuses, and `int()`
  itself takes "٣" (an Arabic-Indic three), "1_000", " 7" and refuses any
  number past 4,300 digits. `parse_bounded_int` takes ASCII digits alone, at
  most as many as its bound has, and checks the bound before the database
  sees an OFFSET or a key it cannot hold.
- `json.loads` recurses once per nesting level: `[[[[…` 100,000 deep raises
  RecursionError. `loads_bounded` measures the size and the nesting first
  (in C-speed passes over the bytes, no recursion) and parses only what
  passes both limits (REQUEST_JSON_MAX_BYTES, REQUEST_JSON_MAX_DEPTH).

Both are pure functions of their input and limits, tested directly
(catalog/tests/test_inputs.py); the DRF face of the JSON check is
`catalog.api.inputs`.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from django.conf import settings

_ASCII_INTEGER = re.compile(r"-?[0-9]+")


class BadInteger(ValueError):
    """The text is not a whole number of ASCII digits within the bounds; the message says which are accepted."""


def parse_bounded_int(raw: str, *, low: int, high: int) -> int:
    """`raw` as an int in low..high: optional "-", ASCII digits only, nothing around them; else `BadInteger`."""
    longest = len(str(max(abs(low), abs(high)))) + 1  # "-" and one leading zero's worth of slack
    if len(raw) > longest or not _ASCII_INTEGER.fullmatch(raw):
        raise BadInteger(f"must be a whole number from {low:,} to {high:,}")
    number = int(raw)
    if not low <= number <= high:
        raise BadInteger(f"must be a whole number from {low:,} to {high:,}")
    return number


class BadJson(ValueError):
    """A body that is not JSON we read: too large, nested too deep, or not JSON at all."""


class JsonTooLarge(BadJson):
    pass


class JsonTooDeep(BadJson):
    pass


# Per byte, how a bracket outside a string moves the nesting depth; everything else is 0.
_STEP = [0] * 256
for _opening in b"[{":
    _STEP[_opening] = 1
for _closing in b"]}":
    _STEP[_closing] = -1
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


def nesting_depth(raw: bytes) -> int:
    """How deep the arrays and objects of JSON text `raw` nest (brackets inside strings do not count).

    No parse and no recursion: escaped backslashes and quotes are dropped,
    then everything but quotes and brackets, and the brackets outside the
    strings (between every other quote) are summed as +1/-1. Text that is not
    JSON gets some number; the parser refuses it afterwards.
    """
    structure = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    outside = b"".join(structure.split(b'"')[::2])
    return max(accumulate(map(_STEP.__getitem__, outside)), default=0)


def check_json_size(raw: bytes, *, max_bytes: int | None = None, max_depth: int | None = None) -> None:
    """Raise `JsonTooLarge` / `JsonTooDeep` when `raw` passes the limits (the settings when not given)."""
    max_bytes = settings.REQUEST_JSON_MAX_BYTES if max_bytes is None else max_bytes
    max_depth = settings.REQUEST_JSON_MAX_DEPTH if max_depth is None else max_depth
    if len(raw) > max_bytes:
        raise JsonTooLarge(f"The JSON body is larger than {max_bytes:,} bytes.")
    if nesting_depth(raw) > max_depth:
        raise JsonTooDeep(f"The JSON body nests deeper than {max_depth} levels.")


def loads_bounded(raw: bytes | str, *, max_bytes: int | None = None, max_depth: int | None = None) -> Any:
    """`json.loads(raw)` once `raw` is within the size and depth limits; `BadJson` (a ValueError) otherwise.

    Numbers too long for `int()`, numbers past a double (1e999999), NaN and
    Infinity (which Python reads and JSON has not) and bytes that are not
    UTF-8 are `BadJson` too.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    check_json_size(data, max_bytes=max_bytes, max_depth=max_depth)
    try:
        return json.loads(data, parse_float=_finite, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # RecursionError: a limit set past the interpreter's own
        raise BadJson(f"The body is not valid JSON: {exc}") from exc


def _finite(text: str) -> float:
    # 1e999999 reads as infinity, which no column stores and no count or page number means.
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:20]}… is out of range")
    return number


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")
