"""catalog.chapter_keys: which chapters of two sources' copies of a series are one chapter (pure, no database).

The Madara rows are the ajax chapter list (`li.wp-manga-chapter`) as the theme prints it, read by the preset the
way the crawler reads it; a per-volume site ("Vol.2 Ch.1") is the volume-restart case of the series fixtures.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from catalog.chapter_keys import ChapterKey, chapter_key
from catalog.chapter_numbers import CHAPTER, EXTRA
from sources.config import HtmlSourceConfig
from sources.parsing import parse_chapter_items

pytestmark = pytest.mark.sqlite_ok

D = Decimal

# (kind, volume, stored number, stored title) -> key
KEYS = {
    "main chapter": ((CHAPTER, None, D("12.00"), "The Gate"), ChapterKey(CHAPTER, None, D("12"))),
    "stored scale does not matter": ((CHAPTER, None, D("10"), ""), ChapterKey(CHAPTER, None, D("10"))),
    "fraction kept": ((CHAPTER, None, D("12.50"), ""), ChapterKey(CHAPTER, None, D("12.5"))),
    "volume kept": ((CHAPTER, 2, D("1"), ""), ChapterKey(CHAPTER, 2, D("1"))),
    "numbered extra": ((EXTRA, None, D("19"), "Side Story 19: The Beach"), ChapterKey(EXTRA, None, D("19"))),
    "unnumbered extra by its printed name": (
        (EXTRA, None, D("2.01"), "Special"),
        ChapterKey(EXTRA, None, None, "special"),
    ),
    "unnumbered extra, spacing and case": (
        (EXTRA, 3, D("0.01"), "  EPILOGUE "),
        ChapterKey(EXTRA, 3, None, "epilogue"),
    ),
}


@pytest.mark.parametrize("row, key", KEYS.values(), ids=KEYS.keys())
def test_chapter_key(row, key):
    assert chapter_key(*row) == key


def test_a_side_story_is_never_the_chapter_of_the_same_number():
    assert chapter_key(EXTRA, None, D("19"), "Side Story 19") != chapter_key(CHAPTER, None, D("19"), "")


def test_an_unnumbered_extra_gets_the_same_key_whatever_number_its_list_gave_it():
    assert chapter_key(EXTRA, None, D("2.01"), "Special") == chapter_key(EXTRA, None, D("0.01"), "Special")


def test_labels_say_the_key_as_people_write_it():
    assert [k.label() for k in (row_key for _, row_key in KEYS.values())][:5] == [
        "c12",
        "c10",
        "c12.5",
        "v2 c1",
        "extra 19",
    ]


PER_VOLUME_LIST = """
<div class="page-content-listing single-page"><div class="listing-chapters_wrap"><ul class="main version-chap">
<li class="wp-manga-chapter"><a href="https://vol.test/manga/restart/vol-2/ch-2/">Vol.2 Ch.2</a>
  <span class="chapter-release-date"><i>March 3, 2024</i></span></li>
<li class="wp-manga-chapter"><a href="https://vol.test/manga/restart/vol-2/ch-1/">Vol.2 Ch.1 - Home</a>
  <span class="chapter-release-date"><i>March 2, 2024</i></span></li>
<li class="wp-manga-chapter"><a href="https://vol.test/manga/restart/vol-1/ch-2/">Vol.1 Ch.2</a>
  <span class="chapter-release-date"><i>March 1, 2024</i></span></li>
<li class="wp-manga-chapter"><a href="https://vol.test/manga/restart/vol-1/ch-1/">Vol.1 Ch.1</a>
  <span class="chapter-release-date"><i>February 1, 2024</i></span></li>
</ul></div></div>
"""


def test_the_madara_preset_reads_a_per_volume_list_as_volume_and_chapter():
    config = HtmlSourceConfig.from_settings({"preset": "madara"}, source_id="vol")
    chapters = parse_chapter_items(PER_VOLUME_LIST, "https://vol.test/manga/restart/", config).chapters
    assert [(c.volume, c.number, c.title) for c in chapters] == [
        (1, D("1"), ""),
        (1, D("2"), ""),
        (2, D("1"), "Home"),
        (2, D("2"), ""),
    ]
    keys = {chapter_key(c.kind, c.volume, c.number, c.title) for c in chapters}
    assert len(keys) == 4, "a per-volume site keeps its four chapters, not two"
