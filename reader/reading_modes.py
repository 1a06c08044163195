"""How the web reader opens a chapter before the reader has picked a mode for the manga.

Long-strip sources (webtoons, manhwa) cut a chapter into pages far taller
than wide; shown one at a time they are unreadable, so such a chapter opens
in webtoon mode (one continuous strip, no gaps). A source may say so itself
(`reading_mode`); otherwise most pages being at least `STRIP_RATIO` times
as tall as wide decides it.
"""

from __future__ import annotations

from collections.abc import Iterable

STRIP_RATIO = 2.2


def default_mode(source_mode: str, sizes: Iterable[tuple[int, int]]) -> str:
    """ "paged", "scroll" or "webtoon": the source's own choice, else webtoon for long strips, else scroll."""
    if source_mode:
        return source_mode
    known = [(width, height) for width, height in sizes if width > 0 and height > 0]
    strips = sum(1 for width, height in known if height >= STRIP_RATIO * width)
    return "webtoon" if known and strips * 2 > len(known) else "scroll"
