"""Text that came from a source, made safe to store and to write into XML.

A crawled title holding U+0001, U+001B or U+FFFE makes every Atom feed and
ComicInfo.xml it reaches ill-formed (XML 1.0 has no way to write them, not
even as character references), and a bidi override (U+202E) in a title turns
"gpj.exe" into what looks like "exe.jpg" in a file manager. Neither carries
meaning in a manga title, so both are removed before anything is stored, and
the XML writers remove them again in case a row predates this rule.
"""

from __future__ import annotations

import re

# Everything outside XML 1.0's Char production
# (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
_NOT_XML_CHAR = "\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"
# Unicode's explicit directional formatting characters (UAX #9): marks, embeddings, overrides, isolates.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_NOT_XML_CHAR}{BIDI_CONTROLS}]")


def clean_text(value: str) -> str:
    """`value` without characters XML 1.0 cannot carry and without bidi controls."""
    return _UNSAFE.sub("", value)
