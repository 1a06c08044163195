"""Reading a library for series grouping and writing the plan back: the database side of catalog.series_grouping.

A library that predates series has no match keys yet: `prepare` hashes the
stored covers still without a hash and writes the keys of mangas without
any, in batches, so the first `group_series` on an old library does the work
once and later runs only touch new mangas (the metadata pass writes keys as
it stores a manga). Candidate blocks are read by key from the indexed
`MangaMatchKey` table: one grouped scan finds the keys more than one manga
shares, then only those mangas are read.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, OuterRef

from catalog.cover_hash import stored_cover_hash
from catalog.models import Manga, MangaMatchKey, MangaSource, Series, SeriesChange, SeriesSuggestion
from catalog.series import merge_series, refresh_match_keys
from catalog.series_grouping import MAX_BLOCK, MangaFacts, Plan, pair, plan_grouping
from catalog.series_matching import Candidate

BATCH = 1000
_FIELDS = ("id", "series_id", "series__created_at", "title", "alt_titles", "authors", "cover_hash")


@dataclass(frozen=True)
class Prepared:
    hashed: int
    keyed: int


def prepare(*, hash_covers: bool = True) -> Prepared:
    """Hash stored covers without a hash, then write keys for mangas without keys; what was done."""
    hashed = 0
    if hash_covers:
        pending = Manga.objects.filter(cover_state=Manga.CoverState.STORED, cover_hash="").exclude(cover="")
        for manga in pending.only("id", "cover").iterator(chunk_size=BATCH):
            digest = stored_cover_hash(manga.cover.name)
            if digest:
                Manga.objects.filter(pk=manga.pk).update(cover_hash=digest)
                hashed += 1
    keyless = Manga.objects.filter(~Exists(MangaMatchKey.objects.filter(manga=OuterRef("pk"))))
    keyed = 0
    batch: list[Manga] = []
    for manga in keyless.only("id", "title", "alt_titles", "cover_hash").iterator(chunk_size=BATCH):
        batch.append(manga)
        if len(batch) == BATCH:
            keyed += refresh_match_keys(batch)
            batch = []
    if batch:
        keyed += refresh_match_keys(batch)
    return Prepared(hashed, keyed)


def blocks() -> Iterator[tuple[str, list[MangaFacts]]]:
    """The mangas of every key shared by two or more series, as facts for matching.

    Keys whose mangas are all in one series already (a grouped library's) are left out in the one grouped scan,
    so a run with nothing new to do reads no manga.
    """
    shared = list(
        MangaMatchKey.objects.values("key")
        .annotate(n=Count("manga__series_id", distinct=True))
        .filter(n__gt=1)
        .values_list("key", flat=True)
    )
    for start in range(0, len(shared), BATCH):
        chunk = shared[start : start + BATCH]
        rows = MangaMatchKey.objects.filter(key__in=chunk).values_list("key", "manga_id")
        by_key: dict[str, list[uuid.UUID]] = {}
        for key, manga_id in rows:
            by_key.setdefault(key, []).append(manga_id)
        facts = _facts({m for ids in by_key.values() for m in ids})
        for key in chunk:
            yield key, [facts[m] for m in sorted(by_key.get(key, []), key=str) if m in facts]


def _facts(ids: set[uuid.UUID]) -> dict[uuid.UUID, MangaFacts]:
    sources: dict[uuid.UUID, str] = {}
    for manga_id, source_id in (
        MangaSource.objects.filter(manga__in=ids).order_by("created_at").values_list("manga_id", "source_id")
    ):
        sources.setdefault(manga_id, source_id)
    return {
        row[0]: MangaFacts(
            id=row[0],
            series_id=row[1],
            series_created=row[2],
            title=row[3],
            source_id=sources.get(row[0], "-"),
            candidate=Candidate.of(row[3], row[4] or [], row[5] or [], row[6]),
        )
        for row in Manga.objects.filter(pk__in=ids).values_list(*_FIELDS)
    }


def rejected_pairs() -> set[tuple[uuid.UUID, uuid.UUID]]:
    return {
        pair(a, b)
        for a, b in SeriesSuggestion.objects.filter(state=SeriesSuggestion.State.REJECTED).values_list(
            "first_id", "second_id"
        )
    }


def current_plan() -> Plan:
    return plan_grouping(blocks(), rejected_pairs())


@dataclass(frozen=True)
class Applied:
    changes: list[SeriesChange]
    suggestions: int


def apply_plan(plan: Plan, *, actor: Any = None, via: str = "group_series") -> Applied:
    """Merge each planned group (one audited change each) and store the new suggestions."""
    changes = []
    for merge in plan.merges:
        series = {s.pk: s for s in Series.objects.filter(pk__in=[merge.target, *merge.others])}
        changes.append(
            merge_series(
                series[merge.target],
                [series[o] for o in merge.others],
                actor=actor,
                via=via,
                reason="; ".join(merge.reasons),
            )
        )
    created = 0
    for suggestion in plan.suggestions:
        _, made = SeriesSuggestion.objects.get_or_create(
            first_id=suggestion.first, second_id=suggestion.second, defaults={"evidence": list(suggestion.reasons)}
        )
        created += made
    return Applied(changes, created)


def group_arrival(manga: Manga) -> Applied:
    """Match a manga the metadata pass just stored against the mangas sharing a key with it, and apply the plan.

    Done on arrival so a second source's copy joins its series before its
    chapters are queued: each chapter is then downloaded once. Covers arrive
    later; a cover-only match is found by the next group_series.
    """
    keys = MangaMatchKey.objects.filter(manga=manga).values_list("key", flat=True)
    others = set(
        MangaMatchKey.objects.filter(key__in=list(keys))
        .exclude(manga=manga)
        .values_list("manga_id", flat=True)[: MAX_BLOCK + 1]
    )
    if not others or len(others) > MAX_BLOCK:
        return Applied([], 0)
    facts = _facts({manga.pk, *others})
    block = [facts[i] for i in sorted(facts, key=str)]
    return apply_plan(plan_grouping([("arrival", block)], rejected_pairs()), via="metadata_pass")
