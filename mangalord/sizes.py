"""Sizes as operators write them (5GiB, 500 MB, 5%), parsed without Django or any app.

The settings read CRAWLER_MIN_FREE_DISK and CRAWLER_S3_QUOTA with these at
start-up, before any app is loaded, and the catalog's disk guard and the
operator's run-time floor parse the same text with the same rules
(`catalog.disk`), so a value is read one way wherever it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3}
_UNITS |= {"t": 1024**4, "tib": 1024**4, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4}
_FLOOR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%|[a-zA-Z]*)\s*$")


@dataclass(frozen=True)
class Floor:
    """Free space to keep: a number of bytes, or a share of the filesystem's size."""

    bytes: int = 0
    percent: float = 0.0

    def of(self, total: int) -> int:
        """The floor in bytes on a filesystem of `total` bytes."""
        return int(total * self.percent / 100) if self.percent else self.bytes

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent else format_bytes(self.bytes)


def parse_floor(text: str) -> Floor:
    """'5GiB', '500 MB', '5%', '0' (off) -> Floor; ValueError naming what is accepted otherwise."""
    match = _FLOOR.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or (unit != "%" and unit not in _UNITS):
        raise ValueError(f"{text!r} is not a size: write bytes with a unit (5GiB, 500MB) or a share (5%)")
    number = float(match.group(1))
    if unit == "%":
        if number > 100:
            raise ValueError(f"{text!r}: a share of the disk is at most 100%")
        return Floor(percent=number)
    return Floor(bytes=int(number * _UNITS[unit]))


def parse_quota(text: str) -> int:
    """'500GiB', '2TB', '0' (none) -> bytes: a quota is a size, never a share of itself; ValueError otherwise."""
    floor = parse_floor(text)
    if floor.percent:
        raise ValueError(f"{text!r}: a quota is a size with a unit (500GiB, 2TB), not a share")
    return floor.bytes


def format_bytes(n: int) -> str:
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    return f"{value:.1f} {unit}" if unit != "B" else f"{n} B"
