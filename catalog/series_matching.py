"""Whether two per-source mangas are one series: pure decisions on what their sources print (no database).

Matching is conservative because a wrong merge hides a series from its
readers, while a missed one only shows a duplicate:

- a normalised title or alternative title in common, confirmed by an author
  in common or by close covers (perceptual hash), is the same series: MERGE;
- the same title with nothing to confirm or refute it, or close covers under
  different titles, is a SUGGEST for an operator to confirm or reject;
- the same title by different authors under different covers is another
  series that happens to share a name (a collision): NONE, and no suggestion.

Candidates are found by shared keys (`match_keys`): the normalised titles,
and the cover hash cut into four 16-bit bands. Two 64-bit hashes within
`COVER_DISTANCE` (3) bits differ in at most three bands, so they share at
least one: every pair of close covers meets in some band, and pairs of far
covers mostly do not, which keeps the comparisons few on a large library.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Bits two cover hashes may differ by and still be one cover (re-encoded, resized, a watermark corner): the
# published phash guidance is 0-5 for the same picture; 3 keeps the band blocking exact (see the module doc).
COVER_DISTANCE = 3
COVER_BANDS = 4
TITLE_PREFIX = "t:"
COVER_PREFIX = "c"
# Shorter normalised titles ("one", "x") name too many different series to be a candidate key alone.
MIN_TITLE_KEY = 3
MAX_KEY = 200

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_title(text: str) -> str:
    """A title as matching compares it: compatibility forms folded, accents and case dropped, punctuation a space.

    "Sōsō no Frieren", "SOSO NO FRIEREN!" and "Soso-no Frieren" all read
    "soso no frieren"; scripts without case or accents (Japanese, Korean)
    are kept as they are.
    """
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    stripped = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(_NOT_WORD.sub(" ", stripped).split())[: MAX_KEY - len(TITLE_PREFIX)]


def normalise_author(name: str) -> str:
    """An author's name with its words sorted: "Oda Eiichiro" and "Eiichiro Oda" are one author."""
    return " ".join(sorted(normalise_title(name).split()))


def title_keys(title: str, alt_titles: Iterable[str]) -> frozenset[str]:
    keys = (normalise_title(t) for t in (title, *alt_titles))
    return frozenset(k for k in keys if len(k) >= MIN_TITLE_KEY)


def cover_bands(cover_hash: str) -> tuple[str, ...]:
    """The cover hash's four 16-bit bands as keys ("c0:ab12" ...); none without a hash."""
    if len(cover_hash) != 16:
        return ()
    width = 16 // COVER_BANDS
    return tuple(f"{COVER_PREFIX}{i}:{cover_hash[i * width : (i + 1) * width]}" for i in range(COVER_BANDS))


def match_keys(title: str, alt_titles: Iterable[str], cover_hash: str) -> frozenset[str]:
    """Every key a manga is found under by group_series (stored in catalog.MangaMatchKey)."""
    return frozenset({TITLE_PREFIX + k for k in title_keys(title, alt_titles)} | set(cover_bands(cover_hash)))


def cover_distance(first: str, second: str) -> int | None:
    """Bits between two cover hashes, None when either is missing."""
    if len(first) != 16 or len(second) != 16:
        return None
    return (int(first, 16) ^ int(second, 16)).bit_count()


@dataclass(frozen=True)
class Candidate:
    """What matching knows of one manga."""

    titles: frozenset[str]
    authors: frozenset[str]
    cover_hash: str = ""

    @classmethod
    def of(cls, title: str, alt_titles: Iterable[str], authors: Iterable[str], cover_hash: str) -> Candidate:
        names = frozenset(n for n in (normalise_author(a) for a in authors) if n)
        return cls(title_keys(title, alt_titles), names, cover_hash)


class Decision(enum.Enum):
    MERGE = "merge"
    SUGGEST = "suggest"
    NONE = "none"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reasons: tuple[str, ...]
    # Evidence that they are different series: a merge through a third manga must not join them.
    conflict: bool = False


def decide(first: Candidate, second: Candidate) -> Verdict:
    """Whether `first` and `second` are one series (see the module doc for the table)."""
    same_title = bool(first.titles & second.titles)
    authors_known = bool(first.authors and second.authors)
    same_author = bool(first.authors & second.authors)
    distance = cover_distance(first.cover_hash, second.cover_hash)
    close_cover = distance is not None and distance <= COVER_DISTANCE
    reasons = []
    if same_title:
        reasons.append("same title: " + ", ".join(sorted(first.titles & second.titles)))
    if authors_known:
        reasons.append("same author" if same_author else "different authors")
    if distance is not None:
        reasons.append(f"cover distance {distance}")
    other_authors = authors_known and not same_author
    if same_title and (same_author or close_cover) and not other_authors:
        return Verdict(Decision.MERGE, tuple(reasons))
    if same_title and other_authors and not close_cover:
        return Verdict(Decision.NONE, tuple(reasons), conflict=True)
    if same_title or (close_cover and not other_authors):
        # Same title with nothing to confirm it, same title and cover by different authors (a new artist, a
        # pen name), or one cover under two titles (a translated title): a person tells these apart. One
        # cover under two titles by two different authors is a placeholder image, not a match.
        return Verdict(Decision.SUGGEST, tuple(reasons))
    return Verdict(Decision.NONE, tuple(reasons), conflict=other_authors)
