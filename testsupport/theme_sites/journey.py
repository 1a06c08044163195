"""The journey site's catalog: a right-to-left Japanese Madara site with everything that breaks readers.

Served by `MadaraSite(catalog=journey_catalog(now), lang="ja")`:
- chapter labels as such sites print them ("第1話 門", "Chapter 2 - The Gate", "Ch. 1", "Episode 1:");
- JPEG, PNG and WebP pages, mixed within one chapter and uniform in others;
- a title and description holding XML-invalid characters (U+0001, U+001B, U+FFFE) and bidi controls;
- two titles that map to one file name (`a/b\\c:d*e?f"g<h>i|j`, `a:b\\c/d*e?f"g<h>i|j`) and a "CON";
- a PNG cut short and a decompression bomb, each on a chapter of its own.
"""

from __future__ import annotations

import datetime as dt

from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga

DIRTY_TITLE = "Yoru no Mon\x01\x1b\ufffe \u202eTower\u202c"
CLEAN_TITLE = "Yoru no Mon Tower"
COLLIDING_TITLES = ('a/b\\c:d*e?f"g<h>i|j', 'a:b\\c/d*e?f"g<h>i|j')
RESERVED_TITLE = "CON"
# (title, [(label, own name, page kinds)])
_MANGAS: list[tuple[str, list[tuple[str, str, tuple[str, ...]]]]] = [
    (DIRTY_TITLE, [("第1話 門", "門", ("jpeg", "png", "webp")), ("Chapter 2 - The Gate", "The Gate", ("jpeg",) * 2)]),
    (COLLIDING_TITLES[0], [("Ch. 1", "", ("png", "png"))]),
    (COLLIDING_TITLES[1], [("Episode 1:", "", ("webp", "webp"))]),
    (RESERVED_TITLE, [("Chapter 1", "", ("png",)), ("Chapter 2", "", ("png", "truncated")), ("Chapter 3", "", ("bomb",))]),
]  # fmt: skip


def journey_catalog(now: dt.datetime) -> list[FixtureManga]:
    mangas = []
    for index, (title, chapters) in enumerate(_MANGAS):
        slug = f"journey-{index + 1}"
        rows = tuple(
            FixtureChapter(
                slug,
                title,
                number,
                dt.datetime(2026, 11, index * 3 + number, tzinfo=dt.UTC),
                None,
                label=label,
                name=name,
                page_kinds=kinds,
            )  # fmt: skip
            for number, (label, name, kinds) in enumerate(chapters, start=1)
        )
        mangas.append(
            FixtureManga(
                post_id=200 + index,
                slug=slug,
                title=title,
                alt_titles=(f"Alt\x1b {index + 1}",),
                author="Aki\ufffe Mori",
                status_word="OnGoing",
                status="ongoing",
                tags=("Action", "Drama\u202e"),
                chapters=rows,
            )
        )
    return mangas
