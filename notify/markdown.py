"""Crawled text inside a Markdown body: every character it has shows as itself, none becomes markup.

Titles come from the sites we crawl, so a title is untrusted: `<img src=x onerror=...>` must not become HTML in an
email, `[click](https://evil)` must not become a link, `# Big` must not become a heading. CommonMark lets every ASCII
punctuation character be backslash-escaped, and Apprise's Markdown-to-HTML conversion honours that for all of them;
line breaks are folded so a title cannot start a block of its own.
"""

from __future__ import annotations

import re

_INLINE_MARKUP = re.compile(r"([\\`*_\[\]()<>!&|~#{}])")
_BREAKS = re.compile(r"\s+")


def escape(text: str) -> str:
    """`text` as literal Markdown inline text, on one line."""
    return _INLINE_MARKUP.sub(r"\\\1", _BREAKS.sub(" ", text).strip())


def link(label: str, url: str) -> str:
    """A Markdown link to one of our own URLs (built from our ids, never from crawled text) labelled with `label`."""
    return f"[{escape(label)}](<{url}>)"
