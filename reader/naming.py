"""How chapters are named for people and for file systems."""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
_SPACES = re.compile(r"\s+")
MAX_NAME = 120


def chapter_label(number: Decimal) -> str:
    """10 -> "10", 10.50 -> "10.5" (never "1E+1")."""
    if number == number.to_integral_value():
        return str(number.quantize(Decimal(1)))
    return format(number.normalize(), "f")


def chapter_title(number: Decimal, title: str) -> str:
    label = f"Chapter {chapter_label(number)}"
    return f"{label}: {title}" if title and title != label else label


def padded_label(number: Decimal) -> str:
    """Zero-padded so file managers sort c002 before c010 and c010.5 after c010."""
    whole, _, frac = chapter_label(number).partition(".")
    return whole.zfill(3) + (f".{frac}" if frac else "")


def safe_filename(name: str) -> str:
    """A name every common file system accepts: no separators, reserved characters, control codes or trailing dots."""
    cleaned = unicodedata.normalize("NFC", name)
    cleaned = _SPACES.sub(" ", _UNSAFE.sub("_", cleaned)).strip().rstrip(". ")
    cleaned = cleaned[:MAX_NAME].rstrip(". ")
    return cleaned.lstrip(".") or "Untitled"


def cbz_filename(series: str, number: Decimal) -> str:
    return f"{safe_filename(series)} - c{padded_label(number)}.cbz"
