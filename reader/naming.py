"""How chapters are named for people and for file systems.

File names must survive every file system a library lands on (ext4, NTFS and
SMB shares, APFS): no separators or reserved characters, no Windows device
names (`CON`, `COM1.cbz`), no bidi controls that make a name read backwards,
and at most 255 bytes of UTF-8, the limit ext4 and most others share.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Any, Protocol

from catalog.chapter_names import chapter_label, display_title, extra_label
from catalog.chapter_numbers import CHAPTER
from catalog.text import BIDI_CONTROLS

__all__ = [
    "book_number",
    "cbz_filename",
    "chapter_label",
    "chapter_title",
    "fit_bytes",
    "padded_label",
    "safe_filename",
]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_SPACES = re.compile(r"\s+")
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\.|$)", re.IGNORECASE)
MAX_NAME = 120  # characters of a series or chapter name; the whole file name stays within MAX_BYTES
MAX_BYTES = 255


class Named(Protocol):
    kind: str
    volume: int | None
    number: Decimal
    title: str


def chapter_title(chapter: Named | Any) -> str:
    """What every reader shows for a chapter: "Chapter 12: The Gate", "Vol. 2 Chapter 1", "Side Story 19"."""
    return display_title(chapter.number, chapter.title, chapter.kind, chapter.volume)


def book_number(chapter: Named | Any) -> str:
    """The number a book shows (Komga's `metadata.number`, ComicInfo's <Number>): "12", "10.5", or an extra's
    label ("Side Story 19", "Special"), which no reader mistakes for, or sorts among, the main chapters' numbers."""
    return chapter_label(chapter.number) if chapter.kind == CHAPTER else extra_label(chapter.title)


def padded_label(number: Decimal) -> str:
    """Zero-padded so file managers sort c002 before c010 and c010.5 after c010."""
    whole, _, frac = chapter_label(number).partition(".")
    return whole.zfill(3) + (f".{frac}" if frac else "")


def fit_bytes(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, never inside a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


def safe_filename(name: str, *, max_bytes: int = MAX_BYTES) -> str:
    """A name every common file system accepts: no separators, reserved characters or device names, no control
    codes or bidi controls, no leading or trailing dots, at most `max_bytes` of UTF-8."""
    cleaned = _BIDI.sub("", unicodedata.normalize("NFC", name))
    cleaned = _SPACES.sub(" ", _UNSAFE.sub("_", cleaned)).strip().rstrip(". ")
    cleaned = fit_bytes(cleaned[:MAX_NAME], max_bytes).rstrip(". ").lstrip(". ")
    if _DEVICE.match(cleaned):
        cleaned = "_" + cleaned  # "CON" -> "_CON": the device name is no longer the stem
    return cleaned or "Untitled"


def cbz_filename(
    series: str, number: Decimal, title: str = "", *, tag: str = "", kind: str = CHAPTER, volume: int | None = None
) -> str:
    """`<Series> - c012 - <title> [tag].cbz` within 255 bytes: the title gives way first, then the series.

    A volume leads the chapter (`v02 c001`); an extra is `SP019 - Side Story 19`, the special marker Kavita
    reads, and sorts after every `c...` file of its series.
    """
    volume_part = f"v{volume:02d} " if volume is not None else ""
    marker = "c" if kind == CHAPTER else "SP"
    tail = f" - {volume_part}{marker}{padded_label(number)}"
    suffix = (f" [{tag}]" if tag else "") + ".cbz"
    title = title.replace(": ", " - ")  # an extra's "Side Story 19: The Beach"; ':' is no file-name character
    name = safe_filename(title, max_bytes=MAX_BYTES) if title else ""
    series_name = safe_filename(series)
    room = MAX_BYTES - len((series_name + tail + suffix).encode("utf-8"))
    if name and room > 6:  # " - " and at least a few bytes of the name
        name = fit_bytes(name, room - 3).rstrip(". ")
        tail += f" - {name}" if name else ""
    series_name = safe_filename(series, max_bytes=MAX_BYTES - len((tail + suffix).encode("utf-8")))
    return f"{series_name}{tail}{suffix}"
