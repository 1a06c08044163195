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

import shutil
from dataclasses import dataclass
from pathlib import Path

# The parsing is pure and shared with the settings, which must not import an app.
from mangalord.sizes import Floor, format_bytes, parse_floor, parse_quota

__all__ = ["Floor", "Space", "below_floor", "format_bytes", "media_space", "parse_floor", "parse_quota", "pause_reason"]


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
