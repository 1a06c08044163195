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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, QuerySet

from catalog.models import Manga


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
