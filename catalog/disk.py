"""The free-space floor under stored pages (CRAWLER_MIN_FREE_DISK): below it, page downloads pause.

A full disk used to fail page writes like any other error, burning attempts
until chapters dead-lettered. The floor keeps room for everything else on the
box (the database, logs) and turns "disk full" into a pause an operator can
see and end, with nothing failed.

Parsing and the decision are pure functions; `media_space` asks the
filesystem under MEDIA_ROOT. Object storage (STORAGE_BACKEND=s3) has no free
space to read: there the room is what CRAWLER_S3_QUOTA leaves above the
stored pages (crawler.passes.disk_guard), and the same floor applies to it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class Space:
    free: int
    total: int


def below_floor(space: Space, floor: Floor) -> bool:
    """Whether storing more pages would eat into the floor."""
    return space.free < floor.of(space.total)


def pause_reason(
    space: Space, floor: Floor, where: str, set_by: str = "CRAWLER_MIN_FREE_DISK", room: str = "free disk space"
) -> str | None:
    """Why page downloads are paused, for the dashboard and the log; None when there is room.

    `set_by` names where the floor comes from (the setting, or the floor an
    operator set at run time), so the message says what to change; `room`
    names what `space.free` is (free disk space, or what an S3 quota leaves).
    """
    if not below_floor(space, floor):
        return None
    return (
        f"{room} {format_bytes(space.free)} on {where} is under {set_by} "
        f"({floor}: {format_bytes(floor.of(space.total))}); page downloads paused"
    )


def media_space(root: str) -> Space:
    """Free and total bytes of the filesystem `root` is (or will be, before its first page) on."""
    path = Path(root)
    while not path.exists() and path != path.parent:
        path = path.parent
    usage = shutil.disk_usage(path)
    return Space(free=usage.free, total=usage.total)
