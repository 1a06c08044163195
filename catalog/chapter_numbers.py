"""What a chapter is, read from the text a site prints for it: main chapter or extra, volume, number, own name.

Sites list side stories, specials and notices in the same list as the main
story: "Side Story 19", "Extra 2", "Special", "Omake", "Epilogue", "Hiatus
announcement", "외전 3", "番外編". Taking the first number of the text stored
"Side Story 19" as chapter 19, so it sorted among the chapters and was marked
read with them. `classify` tells the two apart:

- kind `chapter`: the main story, its number as printed (fractions kept:
  "Chapter 19.5" is 19.5), `title` its own name with the label cut
  ("The Gate"; readers add "Chapter 19" themselves);
- kind `extra`: everything a site prints outside the main numbering, its own
  number when printed ("Side Story 19" is extra 19) else None, and `title`
  its whole printed name, label included, normalised to "Side Story 19:
  The Beach" -- the label is what tells one extra from another ("Special",
  "Epilogue"), so it is kept rather than rebuilt from a number.

A leading volume or season ("Vol. 3 Chapter 12", "Season 2 Episode 1",
"第3巻", "3권") is read as the volume, so per-volume numbering keeps its
chapters apart. A text that leads with a main-chapter label keeps the site's
main numbering even when its name says more ("Chapter 45 - Side Story 3" is
chapter 45): the site itself put it among the main chapters.

Extras printed with no number get one from `number_extras`, which sees the
whole list: the number of the printed extra listed before it (oldest first)
plus a hundredth per unnumbered extra since, so "Side Story 2", "Special"
gives the special 2.01. New chapters arrive at the newest end of a list, so
an extra's number does not move when later ones are added.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from catalog.chapter_names import LABELLED_CHAPTER, own_title

CHAPTER = "chapter"
EXTRA = "extra"
KINDS = (CHAPTER, EXTRA)

# "Season" reads as a volume: webtoons that restart episode numbers per season are keyed like volumes.
_VOLUME_PREFIX = re.compile(
    r"^\s*(?:"
    r"(?:vol(?:ume)?|tome|tomo|band|cilt|jilid|season|temporada|saison|sezon|\uc2dc\uc98c)\.?\s*(?P<a>\d+)"
    r"|\u7b2c\s*(?P<b>\d+)\s*[\u5dfb\u5377\u90e8\u5b63]"  # 第3巻 / 第3卷 (ja, zh), 第2部, 第2季
    r"|(?P<c>\d+)\s*\uad8c"  # 3권 (ko)
    r")(?![A-Za-z\d])\s*(?:[-\u2013\u2014:|.,~\u30fb\uff1a]+\s*)?",
    re.IGNORECASE,
)

# Words sites print for what lies outside the main numbering, longest first so "side story" wins over "side".
_EXTRA_WORDS = (
    # en
    "side stories", "side story", "side-story", "sidestory", "extras", "extra", "specials", "special", "bonus",
    "omake", "gaiden", "prologue", "epilogue", "afterword", "postscript", "interlude", "author's note",
    "author note", "hiatus announcement", "hiatus notice", "hiatus", "announcement", "notice",
    # es / pt
    "historia paralela", "historia secundaria", "hist\u00f3ria paralela", "hist\u00f3ria extra", "especial",
    "interl\u00fadio", "interludio",
    "ep\u00edlogo", "pr\u00f3logo", "aviso", "anuncio",
    # id
    "ekstra", "spesial", "cerita sampingan", "cerita tambahan", "prolog", "epilog", "pengumuman",
    # tr
    "yan hikaye", "yan hik\u00e2ye", "\u00f6zel b\u00f6l\u00fcm", "\u00f6zel", "\u00f6ns\u00f6z",
    "sons\u00f6z", "duyuru",
    # fr
    "histoire parall\u00e8le", "hors-s\u00e9rie", "hors s\u00e9rie", "sp\u00e9cial", "\u00e9pilogue",
    "annonce", "postface",
    # vi
    "ngo\u1ea1i truy\u1ec7n",
    # ko
    "\ud2b9\ubcc4\uc678\uc804", "\ud2b9\ubcc4\ud3b8", "\ubc88\uc678\ud3b8", "\ubc88\uc678", "\uc678\uc804",
    "\ud504\ub864\ub85c\uadf8", "\uc5d0\ud544\ub85c\uadf8", "\ud734\uc7ac \uacf5\uc9c0", "\ud734\uc7ac",
    "\uacf5\uc9c0", "\ud6c4\uae30",
    # ja
    "\u756a\u5916\u7de8", "\u7279\u5225\u7de8", "\u7279\u5225\u7bc7", "\u304a\u307e\u3051",
    "\u30d7\u30ed\u30ed\u30fc\u30b0", "\u30a8\u30d4\u30ed\u30fc\u30b0", "\u3042\u3068\u304c\u304d",
    "\u5916\u4f1d",
    # zh
    "\u756a\u5916\u7bc7", "\u756a\u5916", "\u7279\u522b\u7bc7", "\u5916\u4f20", "\u5916\u50b3",
    "\u5e8f\u7ae0", "\u5c3e\u58f0", "\u5c3e\u8072", "\u540e\u8bb0", "\u5f8c\u8a18", "\u516c\u544a",
    "\u8bf7\u5047", "\u8acb\u5047",
)  # fmt: skip
_CHAPTER_WORDS = r"chapter|chap|ch|episode|ep|cap\u00edtulo|capitulo|cap|chapitre|b\u00f6l\u00fcm|bab|ch\u01b0\u01a1ng"
_NUMBER = r"(?P<n>\d+(?:[.,]\d+)?)"
# "Chapitre spécial", "Capítulo especial": a chapter word may lead the extra's word.
_EXTRA = re.compile(
    rf"^(?P<label>(?:(?:{_CHAPTER_WORDS})\.?\s+)?"
    rf"(?:{'|'.join(re.escape(w) for w in sorted(_EXTRA_WORDS, key=len, reverse=True))})"
    rf"(?![A-Za-z\u00c0-\u024f])"  # a Latin word ends here ("Extraordinary" is no extra); CJK needs no space
    rf"(?:\s*(?:(?:{_CHAPTER_WORDS})\.?\s*)?(?:#|no\.?\s*|n[\u00ba\u00b0]\s*)?(?:\u7b2c\s*)?{_NUMBER}"
    rf"(?:\s*[\ud654\u8a71\u8bdd\u7ae0\u56de\ud3b8])?(?![A-Za-z\d]))?"  # 19화, 第2話 ... but not "100k"
    rf"(?:\s+(?:{_CHAPTER_WORDS})(?![^\W\d_]))?)"  # "Bonus Chapter", "Special Episode"
    rf"\s*(?P<sep>[-\u2013\u2014:|.,~\u30fb\uff1a]+\s*)?",
    re.IGNORECASE,
)
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# A main-chapter label with its number anywhere in a text: "Special Forces Chapter 12", "Part 2 Ch. 5".
_LABEL_INSIDE = re.compile(
    rf"(?<![^\W\d_])(?:{_CHAPTER_WORDS})\.?\s*#?\s*{_NUMBER}(?![A-Za-z\d])"
    rf"|\u7b2c\s*{_NUMBER.replace('<n>', '<m>')}\s*[\u8a71\u8bdd\u7ae0\u56de\u96c6]",
    re.IGNORECASE,
)
_TRIM = " -\u2013\u2014:|.,~"


@dataclass(frozen=True)
class ChapterName:
    kind: str
    volume: int | None
    number: Decimal | None  # None: an extra printed with no number, or a text with no number at all
    title: str


# What Chapter.number (max_digits 10, decimal_places 2) and Chapter.volume (PostgreSQL's integer) can hold: a
# site printing "Chapter 123456789012" has printed no number we can store, not one to fail its whole list on.
MAX_NUMBER = Decimal("99999999.99")
MAX_VOLUME = 2**31 - 1


def _decimal(raw: str | None) -> Decimal | None:
    if not raw:
        return None
    try:
        value = Decimal(raw.replace(",", "."))
    except InvalidOperation:
        return None
    return value if value <= MAX_NUMBER else None


def classify(text: str) -> ChapterName:
    """The kind, volume, number and own name of the chapter a site prints as `text`."""
    text = " ".join(text.split())
    volume, rest = None, text
    prefix = _VOLUME_PREFIX.match(text)
    if prefix is not None and prefix.end() < len(text):
        volume, rest = int(prefix.group("a") or prefix.group("b") or prefix.group("c")), text[prefix.end() :]
        volume = volume if volume <= MAX_VOLUME else None
    extra = _EXTRA.match(rest)
    # An unnumbered "extra" whose text goes on to a main-chapter label is a title that starts with the word
    # ("Special Forces Chapter 12", "Extra Life Ch. 3"): the site numbered it among the main chapters.
    if extra is not None and (extra.group("n") or not _LABEL_INSIDE.search(rest, extra.end("label"))):
        label, name = extra.group("label").strip(_TRIM), rest[extra.end() :].strip(_TRIM)
        # "Special 100k Celebration" is one name; "Side Story 19 The Beach" is a label and a name.
        joint = ": " if extra.group("sep") or extra.group("n") else " "
        return ChapterName(EXTRA, volume, _decimal(extra.group("n")), f"{label}{joint}{name}" if name else label)
    labelled = LABELLED_CHAPTER.match(rest)
    if labelled is not None:
        number = _decimal(labelled.group("a") or labelled.group("b") or labelled.group("c"))
        if number is not None:
            return ChapterName(CHAPTER, volume, number, rest[labelled.end() :].strip(_TRIM))
    inside = _LABEL_INSIDE.search(rest)
    if inside is not None and (number := _decimal(inside.group("n") or inside.group("m"))) is not None:
        return ChapterName(CHAPTER, volume, number, own_title(rest, number))
    found = _ANY_NUMBER.search(rest)
    if found is not None and (number := _decimal(found.group())) is not None:
        return ChapterName(CHAPTER, volume, number, own_title(rest, number))
    # The only number was the volume's ("Season 2 Finale"): read the text as it stands, the way sites number it.
    found = _ANY_NUMBER.search(text)
    number = _decimal(found.group()) if found else None
    return ChapterName(CHAPTER, None, number, own_title(text, number) if number is not None else text)


def with_pattern(name: ChapterName, text: str, pattern: re.Pattern[str]) -> ChapterName:
    """A main chapter numbered by a site's own pattern (an operator's setting wins over the generic reading)."""
    if name.kind != CHAPTER:
        return name
    match = pattern.search(text)
    number = _decimal(match.group(1)) if match else None
    if number is None:
        return replace(name, number=None)
    if number == name.number:
        return name
    return replace(name, number=number, title=own_title(" ".join(text.split()), number))


def lists_newest_first(names: Sequence[ChapterName]) -> bool:
    """Whether a list runs newest first, read from its main chapters' numbers (both theme families do, the default)."""
    numbers = [n.number for n in names if n.kind == CHAPTER and n.number is not None]
    return not (len(numbers) >= 2 and numbers[0] < numbers[-1])


EXTRA_STEP = Decimal("0.01")


def number_extras(names: Sequence[ChapterName]) -> list[ChapterName]:
    """`names` (in the source's list order) with every unnumbered extra numbered, the others unchanged.

    Counted oldest first: the printed extra before it, plus a hundredth per
    unnumbered extra since ("Side Story 2", "Special", "Notice" -> 2, 2.01, 2.02;
    a special before any printed extra is 0.01).
    """
    order = range(len(names) - 1, -1, -1) if lists_newest_first(names) else range(len(names))
    numbered = list(names)
    base, since = Decimal(0), 0
    for index in order:
        name = names[index]
        if name.kind != EXTRA:
            continue
        if name.number is not None:
            base, since = name.number, 0
            continue
        since += 1
        numbered[index] = replace(name, number=base + since * EXTRA_STEP)
    return numbered


def reclassified(number: Decimal, title: str) -> ChapterName | None:
    """What a chapter stored before kinds and volumes were read really is, when its stored text tells; else None.

    Such a row holds the first number of the site's text, and its title holds
    the whole text whenever the label was not that number's: "Side Story 3"
    stored as 3, "Vol.2 Chapter 12 - Home" stored as 2. Only those are
    changed: a title that is a chapter's own name ("Epilogue" for chapter 50)
    no longer says what the site printed, and stays as it is.
    """
    if not title:
        return None
    name = classify(title)
    if name.kind == EXTRA and name.number == number:
        return name
    if name.kind == CHAPTER and name.volume is not None and name.volume == number and name.number is not None:
        return name
    return None
