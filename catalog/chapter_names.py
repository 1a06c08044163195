"""A chapter's number and its own title, kept apart and shown one way everywhere.

Sites print a chapter as a label plus, sometimes, a name: "Chapter 12",
"Ch. 12 - The Gate", "Episode 12: Home", "Vol.2 Chapter 12", "第12話 門",
"Capítulo 12". We store the number (a decimal) and only the name ("The
Gate", or "" when there is none), and every reader shows
`display_title(number, title, kind, volume)`: "Chapter 12: The Gate" or
"Chapter 12" ("Vol. 2 Chapter 12" with a volume); an extra ("Side Story 19:
The Beach", catalog.chapter_numbers) is shown by its printed name.
Stripping the label only when its number is the chapter's own keeps a name
that merely starts with a number ("Chapter 13 preview" listed under 12).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# Words sites use for "chapter" or "episode", in the languages the theme presets meet.
_LABEL_WORDS = (
    "chapter", "chap", "ch", "episode", "ep", "ch\u01b0\u01a1ng", "t\u1eadp",  # en, vi
    "cap\u00edtulo", "capitulo", "cap", "chapitre", "kapitel", "capitolo",  # es/pt, fr, de, it
    "b\u00f6l\u00fcm", "bab", "\u0433\u043b\u0430\u0432\u0430", "\u0444\u0435\u0439\u0441",  # tr, id, ru
    "\u0e15\u0e2d\u0e19\u0e17\u0e35\u0e48", "\u0e15\u0e2d\u0e19",  # th: ตอนที่, ตอน
)  # fmt: skip
_SEPARATORS = r"\s*(?:[-\u2013\u2014:|.,~\u30fb\uff1a]+\s*)?"
_NUMBER = r"#?\s*(?P<{}>\d+(?:[.,]\d+)?)"
_VOLUME = r"(?:(?:vol(?:ume)?|tome|tomo|\u5dfb)\.?\s*\d+\s*[-\u2013\u2014:,.]?\s*)?"
LABELLED_CHAPTER = re.compile(
    rf"^\s*{_VOLUME}(?:"
    rf"(?:{'|'.join(_LABEL_WORDS)})\.?\s*{_NUMBER.format('a')}"  # Chapter 12, Ch. 12, Episode 12
    rf"|\u7b2c\s*{_NUMBER.format('b')}\s*[\u8a71\u8bdd\u7ae0\u56de\u96c6]"  # 第12話 / 第12章 (ja, zh)
    rf"|{_NUMBER.format('c')}\s*(?:\ud654|\uc7a5|\u8a71)"  # 12화 (ko), 12話
    rf"){_SEPARATORS}",
    re.IGNORECASE,
)


def chapter_label(number: Decimal) -> str:
    """10 -> "10", 10.50 -> "10.5" (never "1E+1")."""
    if number == number.to_integral_value():
        return str(number.quantize(Decimal(1)))
    return format(number.normalize(), "f")


def own_title(text: str, number: Decimal) -> str:
    """The chapter's own name in `text` once the site's label for chapter `number` is cut off ("" if only a label)."""
    text = " ".join(text.split())
    if text.lstrip("#") == chapter_label(number):
        return ""  # a bare "12" is a label too
    match = LABELLED_CHAPTER.match(text)
    if match is None:
        return text
    try:
        raw = match.group("a") or match.group("b") or match.group("c")
        labelled = Decimal(raw.replace(",", "."))
    except InvalidOperation:
        return text
    if labelled != number:
        return text
    return text[match.end() :].strip(" -\u2013\u2014:|.,~")


def display_title(number: Decimal, title: str, kind: str = "chapter", volume: int | None = None) -> str:
    """What every reader shows: "Chapter 12: The Gate", "Chapter 12", "Vol. 2 Chapter 1", "Side Story 19: The Beach".

    An extra's title is its whole printed name (catalog.chapter_numbers), so it is shown as it stands;
    a main chapter's is its own name behind our label.
    """
    volume_label = f"Vol. {volume} " if volume is not None else ""
    if kind != "chapter":
        return volume_label + (title or f"Extra {chapter_label(number)}")
    label = f"{volume_label}Chapter {chapter_label(number)}"
    return f"{label}: {title}" if title else label


def short_label(number: Decimal, title: str, kind: str = "chapter") -> str:
    """How operator views name a chapter in a line of text: "chapter 12", or an extra's label ("Side Story 3")."""
    return f"chapter {chapter_label(number)}" if kind == "chapter" else extra_label(title)


def extra_label(title: str) -> str:
    """An extra's label without its own name: "Side Story 19: The Beach" -> "Side Story 19" ("Special" stays)."""
    return title.split(": ", 1)[0]
