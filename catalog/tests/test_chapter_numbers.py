"""catalog.chapter_numbers: what a chapter is, read from the text real sites print for it (pure, no database)."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from catalog.chapter_names import display_title, extra_label, short_label
from catalog.chapter_numbers import (
    CHAPTER,
    EXTRA,
    ChapterName,
    classify,
    lists_newest_first,
    number_extras,
    reclassified,
    with_pattern,
)

pytestmark = pytest.mark.sqlite_ok

D = Decimal

# (printed text, kind, volume, number, title): the texts are the forms real Madara / MangaThemesia sites print.
CLASSIFIED = {
    # main chapters, English
    "plain chapter": ("Chapter 12", CHAPTER, None, D("12"), ""),
    "chapter with a name": ("Ch. 12 - The Gate", CHAPTER, None, D("12"), "The Gate"),
    "fractional chapter kept": ("Chapter 19.5", CHAPTER, None, D("19.5"), ""),
    "fraction with a comma": ("Capítulo 5,5", CHAPTER, None, D("5.5"), ""),
    "bare number": ("12", CHAPTER, None, D("12"), ""),
    "episode": ("Episode 7: Home", CHAPTER, None, D("7"), "Home"),
    "a main chapter named like an extra stays main": (
        "Chapter 45 - Side Story 3",
        CHAPTER,
        None,
        D("45"),
        "Side Story 3",
    ),
    "a fraction named special stays main": ("Ch. 50.5 (Special)", CHAPTER, None, D("50.5"), "(Special)"),
    "a word starting with extra is no extra": ("Extraordinary Day 3", CHAPTER, None, D("3"), "Extraordinary Day 3"),
    "a title starting with an extra's word": (
        "Special Forces Chapter 12",
        CHAPTER,
        None,
        D("12"),
        "Special Forces Chapter 12",
    ),
    "another one, short label": ("Extra Life Ch. 3", CHAPTER, None, D("3"), "Extra Life Ch. 3"),
    "the label's number, not the first": (
        "Solo Leveling 2 Chapter 12",
        CHAPTER,
        None,
        D("12"),
        "Solo Leveling 2 Chapter 12",
    ),
    "a numbered extra keeps its number past a later label": (
        "Side Story 3 - Chapter 2",
        EXTRA,
        None,
        D("3"),
        "Side Story 3: Chapter 2",
    ),
    # volumes and seasons
    "volume then chapter": ("Vol. 3 Chapter 12", CHAPTER, 3, D("12"), ""),
    "volume restart, glued": ("Vol.2 Ch.1 - Home", CHAPTER, 2, D("1"), "Home"),
    "volume spelled out": ("Volume 4 Chapter 30: Dawn", CHAPTER, 4, D("30"), "Dawn"),
    "season reads as a volume": ("Season 2 Episode 1", CHAPTER, 2, D("1"), ""),
    "spanish tomo": ("Tomo 2 Capítulo 10", CHAPTER, 2, D("10"), ""),
    "japanese volume": ("第3巻 第12話 タイトル", CHAPTER, 3, D("12"), "タイトル"),
    "korean volume": ("3권 12화", CHAPTER, 3, D("12"), ""),
    "season with no episode number": ("Season 2 Finale", CHAPTER, None, D("2"), "Season 2 Finale"),
    # other languages' main chapters
    "japanese chapter": ("第12話 門", CHAPTER, None, D("12"), "門"),
    "korean chapter": ("12화", CHAPTER, None, D("12"), ""),
    "turkish chapter": ("Bölüm 12", CHAPTER, None, D("12"), ""),
    "indonesian chapter": ("Chapter 8 Bab Baru", CHAPTER, None, D("8"), "Bab Baru"),
    # extras, English
    "side story with a number": ("Side Story 19", EXTRA, None, D("19"), "Side Story 19"),
    "side story with a name": ("Side Story 19 - The Beach", EXTRA, None, D("19"), "Side Story 19: The Beach"),
    "side story with a colon": ("Side Story 19: Title", EXTRA, None, D("19"), "Side Story 19: Title"),
    "side story chapter": ("Side Story Chapter 3: Sea", EXTRA, None, D("3"), "Side Story Chapter 3: Sea"),
    "extra with a number": ("Extra 2", EXTRA, None, D("2"), "Extra 2"),
    "extra chapter with a name": ("Extra Chapter 2 - Title", EXTRA, None, D("2"), "Extra Chapter 2: Title"),
    "special": ("Special", EXTRA, None, None, "Special"),
    "special whose number is no count": ("Special 100k Celebration", EXTRA, None, None, "Special 100k Celebration"),
    "bonus chapter": ("Bonus Chapter", EXTRA, None, None, "Bonus Chapter"),
    "omake": ("Omake", EXTRA, None, None, "Omake"),
    "prologue": ("Prologue", EXTRA, None, None, "Prologue"),
    "epilogue": ("Epilogue", EXTRA, None, None, "Epilogue"),
    "afterword": ("Afterword", EXTRA, None, None, "Afterword"),
    "notice": ("Notice", EXTRA, None, None, "Notice"),
    "hiatus announcement": ("Hiatus announcement", EXTRA, None, None, "Hiatus announcement"),
    "an extra in a volume": ("Vol. 3 Extra", EXTRA, 3, None, "Extra"),
    # es / pt
    "spanish extra": ("Extra 4", EXTRA, None, D("4"), "Extra 4"),
    "spanish especial": ("Especial", EXTRA, None, None, "Especial"),
    "spanish side story": ("Historia paralela 3", EXTRA, None, D("3"), "Historia paralela 3"),
    "spanish special chapter": ("Capítulo especial", EXTRA, None, None, "Capítulo especial"),
    "spanish extra chapter": ("Capítulo Extra 2", EXTRA, None, D("2"), "Capítulo Extra 2"),
    "portuguese side story": ("História paralela 2", EXTRA, None, D("2"), "História paralela 2"),
    "portuguese epilogue": ("Epílogo", EXTRA, None, None, "Epílogo"),
    "portuguese interlude in a volume": ("Vol 02 – Interlúdio 5", EXTRA, 2, D("5"), "Interlúdio 5"),
    "portuguese chapter in a volume": ("Vol 02 – Cap. 16", CHAPTER, 2, D("16"), ""),
    # id
    "indonesian extra": ("Ekstra 1", EXTRA, None, D("1"), "Ekstra 1"),
    "indonesian special": ("Spesial", EXTRA, None, None, "Spesial"),
    # tr
    "turkish extra": ("Ekstra", EXTRA, None, None, "Ekstra"),
    "turkish special": ("Özel", EXTRA, None, None, "Özel"),
    "turkish side story": ("Yan Hikaye 4", EXTRA, None, D("4"), "Yan Hikaye 4"),
    # fr
    "french bonus": ("Bonus", EXTRA, None, None, "Bonus"),
    "french special chapter": ("Chapitre spécial", EXTRA, None, None, "Chapitre spécial"),
    # ko / ja / zh
    "korean side story": ("외전 3화", EXTRA, None, D("3"), "외전 3화"),
    "korean side story unnumbered": ("외전", EXTRA, None, None, "외전"),
    "japanese side story": ("番外編", EXTRA, None, None, "番外編"),
    "japanese side story numbered": ("番外編 第2話", EXTRA, None, D("2"), "番外編 第2話"),
    "chinese side story": ("番外 3", EXTRA, None, D("3"), "番外 3"),
    "chinese side story glued": ("番外篇3", EXTRA, None, D("3"), "番外篇3"),
    # nothing to number
    "no number, no extra word": ("The Final Battle", CHAPTER, None, None, "The Final Battle"),
}


@pytest.mark.parametrize(("text", "kind", "volume", "number", "title"), CLASSIFIED.values(), ids=CLASSIFIED.keys())
def test_classify_reads_kind_volume_number_and_own_title(text, kind, volume, number, title):
    assert classify(text) == ChapterName(kind, volume, number, title)


def test_classify_ignores_runs_of_whitespace():
    assert classify("  Side   Story\n 19 ") == ChapterName(EXTRA, None, D("19"), "Side Story 19")


def _main(n: str) -> ChapterName:
    return ChapterName(CHAPTER, None, D(n), "")


def _extra(title: str, n: str | None = None) -> ChapterName:
    return ChapterName(EXTRA, None, D(n) if n else None, title)


# (list in page order, numbers after number_extras): newest first unless the main chapters run upwards.
NUMBERED = {
    "a special after printed side stories, newest first": (
        [_extra("Special"), _extra("Side Story 2", "2"), _extra("Side Story 1", "1"), _main("2"), _main("1")],
        [D("2.01"), D("2"), D("1"), D("2"), D("1")],
    ),
    "several unnumbered in a row": (
        [_extra("Notice"), _extra("Special"), _extra("Side Story 2", "2"), _main("3"), _main("1")],
        [D("2.02"), D("2.01"), D("2"), D("3"), D("1")],
    ),
    "an unnumbered extra before any printed one": (
        [_main("2"), _extra("Prologue"), _main("1")],
        [D("2"), D("0.01"), D("1")],
    ),
    "oldest first list (main chapters run upwards)": (
        [_main("1"), _extra("Special"), _extra("Side Story 1", "1"), _extra("Epilogue"), _main("2")],
        [D("1"), D("0.01"), D("1"), D("1.01"), D("2")],
    ),
}


@pytest.mark.parametrize(("names", "numbers"), NUMBERED.values(), ids=NUMBERED.keys())
def test_number_extras_numbers_unnumbered_extras_from_their_place_oldest_first(names, numbers):
    assert [n.number for n in number_extras(names)] == numbers
    assert [n.title for n in number_extras(names)] == [n.title for n in names]


def test_an_extra_keeps_its_number_when_newer_chapters_arrive():
    before = [_extra("Special"), _extra("Side Story 1", "1"), _main("1")]
    after = [_main("3"), _extra("Side Story 2", "2"), _main("2"), *before]
    special = number_extras(before)[0].number
    assert special == D("1.01")
    assert number_extras(after)[3].number == special


@pytest.mark.parametrize(
    ("numbers", "newest_first"),
    [(["3", "2", "1"], True), (["1", "2", "3"], False), (["1"], True), ([], True), (["2", "2"], True)],
    ids=["descending", "ascending", "one chapter: the default", "no chapters: the default", "flat: the default"],
)
def test_lists_newest_first_reads_the_direction_from_main_chapters(numbers, newest_first):
    assert lists_newest_first([_main(n) for n in numbers]) is newest_first


# (stored number, stored title, what it is now or None when the title does not say)
RECLASSIFIED = {
    "side story stored under a main number": (D("3"), "Side Story 3", ChapterName(EXTRA, None, D("3"), "Side Story 3")),
    "volume read as the number": (D("2"), "Vol.2 Chapter 12 - Home", ChapterName(CHAPTER, 2, D("12"), "Home")),
    "an own name that looks like an extra": (D("50"), "Epilogue", None),
    "an extra whose number is not the stored one": (D("45"), "Side Story 3", None),
    "a plain own name": (D("4"), "The Gate", None),
    "no title": (D("4"), "", None),
}


@pytest.mark.parametrize(("number", "title", "now"), RECLASSIFIED.values(), ids=RECLASSIFIED.keys())
def test_reclassified_changes_only_rows_whose_title_is_the_whole_printed_text(number, title, now):
    assert reclassified(number, title) == now


@pytest.mark.parametrize(
    ("text", "pattern", "number", "title"),
    [
        ("Chapter 12 - The Gate", r"Chapter (\d+)", D("12"), "The Gate"),
        ("Season 2 Ep 5", r"Ep (\d+)", D("5"), ""),
        ("Part 2 No. 7", r"No\. (\d+)", D("7"), "Part 2 No. 7"),
        ("Teaser", r"Ep (\d+)", None, "Teaser"),
    ],
    ids=["agrees", "agrees past the season", "the pattern's number, not the first", "no match: no number"],
)
def test_a_sites_own_number_pattern_numbers_main_chapters(text, pattern, number, title):
    named = with_pattern(classify(text), text, re.compile(pattern))
    assert (named.kind, named.number, named.title) == (CHAPTER, number, title)


def test_a_sites_own_number_pattern_leaves_extras_alone():
    name = classify("Side Story 3")
    assert with_pattern(name, "Side Story 3", re.compile(r"Chapter (\d+)")) == name


# (number, title, kind, volume, what readers show)
SHOWN = {
    "chapter": (D("12"), "", CHAPTER, None, "Chapter 12"),
    "chapter with a name": (D("12"), "The Gate", CHAPTER, None, "Chapter 12: The Gate"),
    "fraction": (D("19.50"), "", CHAPTER, None, "Chapter 19.5"),
    "volume": (D("1"), "Home", CHAPTER, 2, "Vol. 2 Chapter 1: Home"),
    "side story": (D("19"), "Side Story 19", EXTRA, None, "Side Story 19"),
    "side story with a name": (D("19"), "Side Story 19: The Beach", EXTRA, None, "Side Story 19: The Beach"),
    "unnumbered special": (D("2.01"), "Special", EXTRA, None, "Special"),
    "extra in a volume": (D("0.01"), "Extra", EXTRA, 3, "Vol. 3 Extra"),
    "extra with no stored name": (D("4"), "", EXTRA, None, "Extra 4"),
}


@pytest.mark.parametrize(("number", "title", "kind", "volume", "shown"), SHOWN.values(), ids=SHOWN.keys())
def test_display_title_never_calls_an_extra_a_chapter(number, title, kind, volume, shown):
    assert display_title(number, title, kind, volume) == shown


@pytest.mark.parametrize(
    ("title", "label"),
    [("Side Story 19: The Beach", "Side Story 19"), ("Special", "Special"), ("외전 3화", "외전 3화")],
)
def test_extra_label_is_the_name_before_its_own_title(title, label):
    assert extra_label(title) == label


@pytest.mark.parametrize(
    ("number", "title", "kind", "label"),
    [
        (D("12"), "The Gate", CHAPTER, "chapter 12"),
        (D("10.50"), "", CHAPTER, "chapter 10.5"),
        (D("3"), "Side Story 3: Guts", EXTRA, "Side Story 3"),
        (D("2.01"), "Special", EXTRA, "Special"),
    ],
    ids=["chapter", "fraction", "side story", "unnumbered special"],
)
def test_short_label_names_a_chapter_in_operator_views(number, title, kind, label):
    assert short_label(number, title, kind) == label


def test_numbers_no_chapter_row_can_hold_are_read_as_none():
    """A site printing an absurd number must not fail its whole chapter list on PostgreSQL's numeric overflow."""
    assert classify("Chapter 123456789012").number is None
    assert classify("Chapter 99999999.99").number == Decimal("99999999.99")
    assert classify("Side Story 1000000000").number is None  # the extra is numbered from its place instead
    huge_volume = classify("Vol. 99999999999 Chapter 3")
    assert (huge_volume.volume, huge_volume.number) == (None, Decimal(3))


def test_the_number_bounds_are_the_chapter_columns():
    from catalog.chapter_numbers import MAX_NUMBER, MAX_VOLUME
    from catalog.models import Chapter

    field = Chapter._meta.get_field("number")
    assert MAX_NUMBER == Decimal(10 ** (field.max_digits - field.decimal_places)) - Decimal(1).scaleb(
        -field.decimal_places
    )
    assert MAX_VOLUME == 2**31 - 1 and Chapter._meta.get_field("volume").get_internal_type() == "PositiveIntegerField"
