"""Reading a page's body with a size cap: a hostile site's 300 MiB "home page" costs us the cap, not 300 MiB.

A declared Content-Length over the cap is refused before a byte of the body
is read; a body without one (or lying) is read chunk by chunk and cut when
it passes the cap. Compressed bodies are inflated here with zlib's
`max_length`, so a small gzip bomb cannot inflate past the cap either: the
page client asks only for gzip and deflate (`ACCEPT_ENCODING`), whose
decoding this module bounds.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Iterable, Mapping

ACCEPT_ENCODING = "gzip, deflate"
_IDENTITY = {"", "identity"}


class BodyTooLarge(Exception):
    """The body is larger than the cap (declared or read); `declared` says whether Content-Length said so."""

    def __init__(self, cap: int, *, declared: int | None = None) -> None:
        self.cap, self.declared = cap, declared
        size = f"declares {declared} bytes" if declared is not None else "runs past the cap"
        super().__init__(f"its body {size}, over the {cap}-byte cap")


class UnaskedEncoding(Exception):
    """The answer is compressed in a way we did not ask for and do not decode with a bound."""


class _Inflater:
    """One content-coding's bounded inflater (gzip, or deflate with or without its zlib header)."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes, room: int) -> bytes:
        """At most `room` bytes of what `data` inflates to (more raises BodyTooLarge in the caller)."""
        try:
            out = self._z.decompress(data, room)
        except zlib.error:
            if not (self._first and self.coding == "deflate"):
                raise
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # a raw deflate stream, as some servers send
            out = self._z.decompress(data, room)
        self._first = False
        return out

    def pending(self) -> bool:
        return bool(self._z.unconsumed_tail)

    def finished(self) -> bool:
        """The stream reached its end (or there was none: an empty body, as a 204 or a HEAD answer has)."""
        return self._z.eof or self._first

    def more(self, room: int) -> bytes:
        return self._z.decompress(self._z.unconsumed_tail, room)


def declared_length(headers: Mapping[str, str]) -> int | None:
    value = (headers.get("content-length") or "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def read_capped(raw_chunks: Iterable[bytes], *, content_encoding: str, cap: int) -> bytearray:
    """The decoded body, at most `cap` bytes; BodyTooLarge as soon as it would pass it."""
    coding = content_encoding.strip().lower()
    inflater = None if coding in _IDENTITY else _Inflater(coding)
    if inflater is not None and coding not in ("gzip", "x-gzip", "deflate"):
        raise UnaskedEncoding(f"the answer is {coding}-encoded, which was not asked for ({ACCEPT_ENCODING})")
    body = bytearray()  # grown in place: the page is held once, not once in pieces and again joined
    for chunk in raw_chunks:
        piece = chunk if inflater is None else inflater.feed(chunk, cap - len(body) + 1)
        while True:
            if len(body) + len(piece) > cap:
                raise BodyTooLarge(cap)
            body += piece
            if inflater is None or not inflater.pending():
                break
            piece = inflater.more(cap - len(body) + 1)
    if inflater is not None and not inflater.finished():
        raise zlib.error(f"the {coding} body ends before its compressed stream does")
    return body


MARKUP_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def is_markup(media_type: str) -> bool:
    """Whether an answer may be read as a page: declared HTML, or undeclared (browsers sniff that as HTML too)."""
    return not media_type or media_type in MARKUP_TYPES


def decode_text(body: bytes | bytearray, charset: str | None) -> str:
    """The body as text in its declared charset (UTF-8 when none or an unknown one), as httpx decodes `.text`."""
    encoding = "utf-8"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            pass
    return body.decode(encoding, errors="replace")
