"""The selector dialect of the `html` adapter: lexbor CSS plus jsoup's `:contains()`, and field specs.

Selectors are CSS as selectolax (lexbor) reads it, with `:has()` and `:not()`,
plus the two jsoup pseudo-classes site families are described with:

- `:contains(text)`    the element's whole text (descendants included) contains `text`
- `:containsOwn(text)` the element's own text (its direct text nodes) contains `text`

Both compare case-insensitively with whitespace collapsed, as jsoup does;
`text` may be quoted. Lexbor has no such pseudo-class (it silently matches
nothing), so each one is evaluated here: the compound it belongs to is matched,
filtered by text, marked with a private attribute, and the selector continues
from the mark, so every combinator keeps working around it.

A *field spec* is a selector with an optional extraction suffix:

- `h1.title`          the element's text (descendants included)
- `h1.title ::own`    the element's own text only (a "HOT" badge inside it is left out)
- `a.cover @data-src` the attribute's value
- `::own`, `@title`   the same, on the element the spec is applied to (no selector)
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from selectolax.parser import HTMLParser, Node

from catalog.text import clean_text

_PSEUDO = re.compile(r":contains(Own)?\(", re.IGNORECASE)
_BOUNDARY = set(" \t\n>+~,()")
_MARK = "data-mangalord-match-"
_counter = itertools.count()
_SPEC = re.compile(r"^(?P<selector>.*?)\s*(?:::(?P<own>own|text)|@(?P<attr>[A-Za-z_:][-\w:.]*))?\s*$", re.DOTALL)

Tree = Node | HTMLParser


@dataclass(frozen=True)
class FieldSpec:
    """A parsed field spec: what to select (None = the element itself) and what to read from it."""

    selector: str | None
    own_text: bool = False
    attr: str | None = None

    def values(self, tree: Tree) -> list[str]:
        """Every non-empty value the spec yields under `tree`, whitespace collapsed, in document order."""
        if self.selector is None:
            nodes: list[Node] = [tree] if isinstance(tree, Node) else []
        else:
            nodes = select(tree, self.selector)
        found = (read(node, own_text=self.own_text, attr=self.attr) for node in nodes)
        return [value for value in found if value]

    def first(self, tree: Tree) -> str:
        found = self.values(tree)
        return found[0] if found else ""


@functools.lru_cache(maxsize=1024)
def parse_spec(text: str) -> FieldSpec:
    """Split `selector ::own` / `selector @attr` / `selector`; raise ValueError on an unusable spec."""
    match = _SPEC.match(text.strip())
    if not match:
        raise ValueError(f"cannot read field spec {text!r}")
    selector = match.group("selector").strip() or None
    spec = FieldSpec(selector=selector, own_text=match.group("own") == "own", attr=match.group("attr"))
    if selector is None and not (spec.own_text or spec.attr or match.group("own")):
        raise ValueError("a field spec needs a selector, ::own, ::text or @attribute")
    if selector is not None:
        check_selector(selector)
    return spec


def read(node: Node, *, own_text: bool = False, attr: str | None = None) -> str:
    """The node's attribute, own text or whole text, whitespace collapsed, cleaned of characters no XML can carry.

    Every text a source gives us (titles, descriptions, authors, tags, chapter
    titles, dates' raw text) is read here, so this is where it is cleaned
    (catalog.text): one bad character would otherwise break every feed it reaches.
    """
    if attr is not None:
        raw = node.attributes.get(attr) or ""
    elif own_text:
        raw = own_text_of(node)
    else:
        raw = node.text(separator=" ", strip=True)
    return " ".join(clean_text(raw).split())


def own_text_of(node: Node) -> str:
    """The text of the node's direct text children (jsoup `ownText()`)."""
    return " ".join(child.text_content or "" for child in node.iter(include_text=True) if child.tag == "-text")


def check_selector(selector: str) -> None:
    """Raise ValueError when `selector` is not valid in this dialect (checked on an empty document)."""
    select(HTMLParser("<p></p>"), selector)


def select(tree: Tree, selector: str) -> list[Node]:
    """All nodes matching `selector` under `tree` (document order), `:contains()` included."""
    if not _PSEUDO.search(selector):
        return _css(tree, selector)
    marks: list[str] = []
    try:
        rewritten = _rewrite(tree, selector, marks)
        return _css(tree, rewritten)
    finally:
        for mark in marks:
            root = tree.root if isinstance(tree, HTMLParser) else _root(tree)
            for node in _css(root, f"[{mark}]") if root is not None else ():
                del node.attrs[mark]


def select_first(tree: Tree, selector: str) -> Node | None:
    found = select(tree, selector)
    return found[0] if found else None


def has_match(html: str, selector: str) -> bool:
    return bool(select(HTMLParser(html), selector))


def _css(tree: Tree | None, selector: str) -> list[Node]:
    """Matches in document order, each once.

    Lexbor answers a selector list group by group, and a node two groups
    match twice: a theme's "a, b, c" lists (several markups a family's
    sites print) must still yield each entry once, in page order.
    """
    if tree is None:
        return []
    found = list(tree.css(selector))
    if len(found) < 2 or "," not in selector:
        return found
    start = tree.root if isinstance(tree, HTMLParser) else tree
    if start is None:
        return found
    order = {node.mem_id: index for index, node in enumerate(start.traverse())}
    unique = {node.mem_id: node for node in found}
    return sorted(unique.values(), key=lambda node: order.get(node.mem_id, -1))


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


def _rewrite(tree: Tree, selector: str, marks: list[str]) -> str:
    """Replace each compound holding `:contains()` by a private mark set on the nodes it matches."""
    root: Tree = tree if isinstance(tree, HTMLParser) else _root(tree)
    while (match := _PSEUDO.search(selector)) is not None:
        start = match.start()
        begin = start
        while begin > 0 and selector[begin - 1] not in _BOUNDARY:
            begin -= 1
        end = _compound_end(selector, start)
        compound = selector[begin:end]
        base, needles = _split_pseudos(compound)
        mark = f"{_MARK}{next(_counter)}"
        marks.append(mark)
        for node in _css(root, base or "*"):
            if all(_contains(node, needle, own) for needle, own in needles):
                node.attrs[mark] = ""
        selector = f"{selector[:begin]}[{mark}]{selector[end:]}"
    return selector


def _scan(text: str, index: int, *, at_boundary: bool) -> int:
    """Index of the first unmatched ")" from `index` (or, with `at_boundary`, of a top-level combinator/comma).

    Parentheses nest and quoted strings are skipped; the text's length when nothing ends the scan.
    """
    depth = 0
    quote = ""
    for i in range(index, len(text)):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return i
            depth -= 1
        elif at_boundary and depth == 0 and ch in _BOUNDARY:
            return i
    return len(text)


def _compound_end(selector: str, index: int) -> int:
    """Index just past the compound selector that has a character at `index`."""
    return _scan(selector, index, at_boundary=True)


def _split_pseudos(compound: str) -> tuple[str, list[tuple[str, bool]]]:
    """`div.a:contains(x):not(.b)` -> ("div.a:not(.b)", [("x", False)])."""
    needles: list[tuple[str, bool]] = []
    rest = compound
    while (match := _PSEUDO.search(rest)) is not None:
        close = _closing_paren(rest, match.end())
        argument = rest[match.end() : close].strip()
        if len(argument) >= 2 and argument[0] == argument[-1] and argument[0] in "'\"":
            argument = argument[1:-1]
        if not argument:
            raise ValueError(f"empty :contains() in {compound!r}")
        needles.append((" ".join(argument.lower().split()), bool(match.group(1))))
        rest = rest[: match.start()] + rest[close + 1 :]
    return rest, needles


def _closing_paren(text: str, index: int) -> int:
    close = _scan(text, index, at_boundary=False)
    if close == len(text):
        raise ValueError(f"unclosed :contains( in {text!r}")
    return close


def _contains(node: Node, needle: str, own: bool) -> bool:
    text = own_text_of(node) if own else node.text(separator=" ")
    return needle in " ".join(text.lower().split())


def iter_scripts(tree: Tree) -> Iterator[str]:
    """Text of every inline <script> (JSON and JavaScript alike)."""
    for node in _css(tree, "script"):
        text = node.text(strip=False)
        if text.strip():
            yield text
