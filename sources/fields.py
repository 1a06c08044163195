"""Value specs: what a settings key reads out of an answer, HTML or JSON, and how the value is cleaned up.

A value spec is one of three readers, optionally followed by post-processing
steps, each after ` | `:

- a CSS field spec (`sources.selectors`): `div.title ::own`, `img @data-src`;
- a JSONPath, starting with `$` (jsonpath-ng's extended dialect: wildcards
  `$.posts[*].slug`, filters `$.link[?rel=='alternate'].href`), read on a
  JSON answer or on one JSON item;
- `re:<regex>`: group 1 of every match in the answer's raw text (a value an
  inline script sets: `re:clwd\\.run\\('([^']+)'`).

Steps, applied to each value in turn (a value a step cannot read is dropped):

- `re:<regex>`      group 1 of the first match (`re:url\\(['"]?([^'")]+)` out of a `style`);
- `base64`          the value base64-decoded as UTF-8 text;
- `urlencode`       the value percent-encoded for a URL path segment (a captured label with spaces);
- `html:<field spec>` the value parsed as HTML and read with the spec (a JSON field that holds markup);
- `json:<JSONPath>` the value parsed as JSON and read with the path.

A spec of one kind yields nothing on an answer of the other kind: a JSON
path on an HTML page finds nothing, so "the page has no chapter list, ask
the chapter_list_url" keeps working whatever the endpoints answer.

Templates (`{name}` placeholders) are filled here too: a name is a value
captured earlier (`{label}`, `{cdn}`) or, inside an item's template, a
JSONPath read on the item (`/series/{$.slug}`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from jsonpath_ng import JSONPath
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext import parse as parse_jsonpath
from selectolax.parser import HTMLParser, Node

from catalog.text import clean_text
from sources import selectors

STEP_SEPARATOR = " | "
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
MISSING = object()


@dataclass(frozen=True)
class Step:
    kind: str  # "re", "base64", "urlencode", "html", "json"
    argument: str = ""

    def apply(self, value: str) -> list[str]:
        if self.kind == "urlencode":
            return [quote(value, safe="")]
        if self.kind == "re":
            match = _regex(self.argument).search(value)
            return [match.group(1)] if match and match.group(1) else []
        if self.kind == "base64":
            try:
                return [base64.b64decode(value.strip(), validate=False).decode("utf-8")]
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return []
        if self.kind == "html":
            return selectors.parse_spec(self.argument).values(HTMLParser(value))
        try:
            data = json.loads(value)
        except ValueError:
            return []
        return [_text(found) for found in json_values(data, self.argument)]


@dataclass(frozen=True)
class ValueSpec:
    """A parsed value spec: one reader (css, json or regex) and its steps."""

    reader: str  # "css", "json", "re"
    expression: str
    steps: tuple[Step, ...] = ()

    @property
    def is_json(self) -> bool:
        return self.reader == "json"

    def values(self, doc: Any) -> list[str]:
        """Every non-empty value the spec reads in `doc` (an HTML tree or node, or a JSON value), in order."""
        raw = self._read(doc)
        for step in self.steps:
            raw = [out for value in raw for out in step.apply(value)]
        found = (" ".join(clean_text(value).split()) for value in raw)
        return [value for value in found if value]

    def first(self, doc: Any) -> str:
        found = self.values(doc)
        return found[0] if found else ""

    def _read(self, doc: Any) -> list[str]:
        if self.reader == "css":
            if not isinstance(doc, Node | HTMLParser):
                return []
            return selectors.parse_spec(self.expression).values(doc)
        if self.reader == "re":
            text = raw_text(doc)
            return [m.group(1) for m in _regex(self.expression).finditer(text) if m.group(1)]
        if isinstance(doc, Node | HTMLParser):
            return []
        return [_text(found) for found in json_values(doc, self.expression) if found is not None]


def raw_text(doc: Any) -> str:
    """The text a `re:` reader searches: the markup of an HTML answer, the serialised JSON of a JSON one."""
    if isinstance(doc, HTMLParser):
        return doc.html or ""
    if isinstance(doc, Node):
        return doc.html or ""
    if isinstance(doc, str):
        return doc
    return json.dumps(doc, ensure_ascii=False)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else ""
    if isinstance(value, str | int | float):
        return str(value)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.DOTALL)


@functools.lru_cache(maxsize=512)
def compile_jsonpath(path: str) -> JSONPath:
    """The compiled JSONPath; ValueError naming the fault when it does not parse."""
    try:
        return parse_jsonpath(path)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # the parser raises bare Exceptions too
        raise ValueError(f"not a JSONPath: {exc}") from exc


def json_values(data: Any, path: str) -> list[Any]:
    """What `path` finds in `data`, in document order (nothing when `data` is no JSON value)."""
    if isinstance(data, Node | HTMLParser):
        return []
    return [match.value for match in compile_jsonpath(path).find(data)]


@functools.lru_cache(maxsize=1024)
def parse_value_spec(text: str) -> ValueSpec:
    """Parse `reader | step | step`; ValueError naming the part that is wrong."""
    head, *rest = text.split(STEP_SEPARATOR)
    head = head.strip()
    if not head:
        raise ValueError("a value spec needs a CSS selector, a JSONPath ($...) or re:<regex>")
    if head.startswith("$"):
        compile_jsonpath(head)
        spec = ValueSpec("json", head)
    elif head.startswith("re:"):
        _check_regex(head[3:])
        spec = ValueSpec("re", head[3:])
    else:
        selectors.parse_spec(head)
        spec = ValueSpec("css", head)
    return ValueSpec(spec.reader, spec.expression, tuple(_parse_step(part) for part in rest))


def _parse_step(text: str) -> Step:
    part = text.strip()
    if part in ("base64", "urlencode"):
        return Step(part)
    kind, sep, argument = part.partition(":")
    if not sep or kind not in ("re", "html", "json") or not argument.strip():
        raise ValueError(
            f"unknown step {part!r} (steps: re:<regex>, base64, urlencode, html:<field spec>, json:<JSONPath>)"
        )
    if kind == "re":
        _check_regex(argument)
    elif kind == "html":
        selectors.parse_spec(argument)
    else:
        compile_jsonpath(argument.strip())
    return Step(kind, argument.strip() if kind != "re" else argument)


def _check_regex(pattern: str) -> None:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from exc
    if compiled.groups != 1:
        raise ValueError(f"regex {pattern!r} must have exactly one capture group")


def placeholders(template: str) -> list[str]:
    """The `{name}` placeholders of a template, in order."""
    return _PLACEHOLDER.findall(template)


def check_template(template: str, allowed: frozenset[str], *, item_paths: bool = False) -> None:
    """ValueError naming the first placeholder that is neither allowed nor (with `item_paths`) a JSONPath."""
    for name in placeholders(template):
        if item_paths and name.startswith("$"):
            compile_jsonpath(name)
        elif name not in allowed:
            extra = ", or a JSONPath on the item like {$.slug}" if item_paths else ""
            raise ValueError(f"has an unknown placeholder {{{name}}} (allowed: {', '.join(sorted(allowed))}{extra})")


def fill(template: str, values: Mapping[str, object], item: Any = MISSING) -> str | None:
    """`template` with its placeholders filled; None when an item path finds nothing (the item is unusable)."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1)
        if name.startswith("$"):
            found = json_values(item, name) if item is not MISSING else []
            text = _text(found[0]) if found else ""
            missing = missing or not text
            return text
        return str(values.get(name, ""))

    filled = _PLACEHOLDER.sub(one, template)
    return None if missing else filled


def capture_values(doc: Any, specs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The values `specs` ({name: value spec}) read in `doc`: the first of each; missing ones are left out."""
    found = {}
    for name, spec in specs:
        value = parse_value_spec(spec).first(doc)
        if value:
            found[name] = value
    return found
