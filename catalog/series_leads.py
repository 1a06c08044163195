"""Which manga stands for its series in the readers' lists: the series' lead.

Every reader (web, OPDS, the Komga API, export) lists mangas. A series with
several sources must appear there once, so each series has one *lead*
(`Manga.leads_series`, at most one per series by a unique index): the manga
under the series' own id when the series holds it, else its oldest manga. A
series keeps the id of the manga that founded it and a merge keeps the
oldest series, so the entry readers know (a Komga series id in Mihon, an OPDS
link, a bookmark) keeps its id through merges, and gets it back on an undo.

Readers list leads only and show, under a lead, the union of the series'
chapters (catalog.series_books). A manga that is not a lead (a copy merged
into a series) resolves to its lead, so an old link still opens the series.

Readers sort "latest" by `Manga.latest_chapter_at`, so a lead carries the
newest chapter time of its whole series: the chapter sync raises it when any
copy gets a newer chapter (`raise_lead_date`), and every merge, split or undo
computes it again for the series it touched (`refresh_lead_dates`). Other
mangas keep their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Case, Count, Max, OuterRef, Q, QuerySet, Subquery, When
from django.db.models.functions import Coalesce

from catalog.models import Chapter, Manga


def leads() -> QuerySet[Manga]:
    """Every series' lead: what a reader's list walks instead of every manga."""
    return Manga.objects.filter(leads_series=True)


def refresh_leads(series_ids: Iterable[Any]) -> None:
    """Give each of `series_ids` its lead again after mangas moved in or out (a merge, split, undo or deletion)."""
    ids = list({str(s) for s in series_ids})
    if not ids:
        return
    members = Manga.objects.filter(series_id__in=ids).order_by("created_at", "id").values_list("id", "series_id")
    chosen: dict[str, Any] = {}
    for manga_id, series_id in members:  # oldest first
        if str(manga_id) == str(series_id):
            chosen[str(series_id)] = manga_id  # the manga that founded the series always leads it
        else:
            chosen.setdefault(str(series_id), manga_id)
    # Clear first: the unique index is checked per statement.
    Manga.objects.filter(series_id__in=ids, leads_series=True).exclude(pk__in=chosen.values()).update(
        leads_series=False
    )
    Manga.objects.filter(pk__in=chosen.values(), leads_series=False).update(leads_series=True)


def lead_of(manga: Manga) -> Manga:
    """The manga readers show for `manga`'s series (`manga` itself when it leads)."""
    if manga.leads_series:
        return manga
    return Manga.objects.filter(series_id=manga.series_id, leads_series=True).first() or manga


def is_merged(manga: Manga | Any) -> bool:
    """Whether `manga`'s series has more than one manga (one indexed count)."""
    series_id = manga.series_id if isinstance(manga, Manga) else Manga.objects.values_list("series_id").get(pk=manga)
    return Manga.objects.filter(series_id=series_id).count() > 1


def merged_series(series_ids: Iterable[Any]) -> set[str]:
    """Which of `series_ids` group more than one manga (one query): the entries whose counts need the union."""
    rows = (
        Manga.objects.filter(series_id__in=list(series_ids))
        .values("series_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("series_id", flat=True)
    )
    return {str(s) for s in rows}


def _newest_chapter(chapters: QuerySet[Chapter], group: str) -> Subquery:
    """The newest live chapter's time among `chapters` of the outer manga's `group` (its series, or itself)."""
    return Subquery(
        chapters.filter(dropped_at__isnull=True)
        .values(group)
        .annotate(at=Max(Coalesce("published_at", "created_at")))
        .values("at")[:1]
    )


def refresh_lead_dates(series_ids: Iterable[Any]) -> None:
    """Give every manga of `series_ids` its latest chapter time again, in one statement: a lead the newest of its
    whole series' (readers sort "latest" by the lead), any other manga its own."""
    ids = list({str(s) for s in series_ids})
    if not ids:
        return
    series_wide = _newest_chapter(Chapter.objects.filter(manga__series_id=OuterRef("series_id")), "manga__series_id")
    own = _newest_chapter(Chapter.objects.filter(manga_id=OuterRef("pk")), "manga_id")
    Manga.objects.filter(series_id__in=ids).update(
        latest_chapter_at=Case(When(leads_series=True, then=series_wide), default=own)
    )


def raise_lead_date(series_id: Any, at: Any) -> int:
    """Move the series' lead's latest chapter time up to `at` when `at` is newer (one statement; 0 rows when not)."""
    if at is None:
        return 0
    return Manga.objects.filter(
        Q(latest_chapter_at__isnull=True) | Q(latest_chapter_at__lt=at), series_id=series_id, leads_series=True
    ).update(latest_chapter_at=at)
