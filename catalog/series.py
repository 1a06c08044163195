"""Merging, splitting and undoing series: the one path every door (admin, API, CLI, group_series) takes.

Each change is one transaction that moves mangas between series and writes a
`SeriesChange` listing every move, so `undo` can move each back. A series a
change empties is kept and points at the series that took its mangas
(`merged_into`): readers skip it, and an undo revives it under its own id, so
links and read progress kept under that id find it again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from catalog.models import Manga, MangaMatchKey, Series, SeriesChange, SeriesSuggestion
from catalog.series_leads import refresh_lead_dates, refresh_leads
from catalog.series_matching import match_keys
from catalog.signals import download_alternates_enabled


class SeriesChangeRefused(ValueError):
    """A merge, split or undo that cannot be done as asked; the message says what to change."""


def merge_series(
    target: Series, others: Iterable[Series], *, actor: Any = None, via: str, reason: str = ""
) -> SeriesChange:
    """Move every manga of `others` into `target`; the emptied series point at `target`."""
    others = [s for s in others if s.pk != target.pk]
    if not others:
        raise SeriesChangeRefused("a merge needs at least one other series than the one merged into")
    with transaction.atomic():
        locked = _lock([target.pk, *(s.pk for s in others)])
        if any(locked[s.pk].merged_into_id is not None for s in [target, *others]):
            raise SeriesChangeRefused("a series already merged into another cannot take part: merge its series")
        moves = [
            {"manga": str(m_id), "from": str(s_id), "to": str(target.pk)}
            for m_id, s_id in Manga.objects.filter(series__in=[s.pk for s in others])
            .order_by("id")
            .values_list("id", "series_id")
        ]
        return _apply(SeriesChange.Action.MERGE, moves, actor=actor, via=via, reason=reason)


def split_mangas(mangas: Sequence[Manga], *, actor: Any = None, via: str, reason: str = "") -> SeriesChange:
    """Take `mangas` out of their series, each into a series of its own (its own id's when that one is free)."""
    if not mangas:
        raise SeriesChangeRefused("a split needs at least one manga")
    with transaction.atomic():
        rows = list(Manga.objects.select_for_update().filter(pk__in=[m.pk for m in mangas]).order_by("id"))
        sizes = dict(
            Series.objects.filter(pk__in={m.series_id for m in rows}).annotate(n=Count("mangas")).values_list("pk", "n")
        )
        moves = []
        for manga in rows:
            if sizes[manga.series_id] <= 1:
                raise SeriesChangeRefused(f"manga {manga.pk} ({manga.title}) is alone in its series: nothing to split")
            sizes[manga.series_id] -= 1
            moves.append({"manga": str(manga.pk), "from": str(manga.series_id), "to": str(_own_series(manga).pk)})
        return _apply(SeriesChange.Action.SPLIT, moves, actor=actor, via=via, reason=reason)


def undo_change(change: SeriesChange, *, actor: Any = None, via: str, reason: str = "") -> SeriesChange:
    """Move every manga `change` moved back where it came from, when nothing moved it since."""
    with transaction.atomic():
        change = SeriesChange.objects.select_for_update().get(pk=change.pk)
        if SeriesChange.objects.filter(undoes=change).exists():
            raise SeriesChangeRefused(f"change {change.pk} is already undone")
        moves = [{"manga": m["manga"], "from": m["to"], "to": m["from"]} for m in change.moves]
        where = dict(
            Manga.objects.select_for_update().filter(pk__in=[m["manga"] for m in moves]).values_list("pk", "series_id")
        )
        moved_since = [m["manga"] for m in moves if str(where.get(uuid.UUID(m["manga"]))) != m["from"]]
        if moved_since:
            raise SeriesChangeRefused(
                f"change {change.pk} cannot be undone: manga(s) {', '.join(moved_since)} moved since; undo later "
                "changes first"
            )
        return _apply(SeriesChange.Action.UNDO, moves, actor=actor, via=via, reason=reason, undoes=change)


def confirm_suggestion(suggestion: SeriesSuggestion, *, actor: Any = None, via: str) -> SeriesChange:
    """Merge the suggested pair (the older series keeps its id) and mark the suggestion confirmed."""
    from django.utils import timezone

    with transaction.atomic():
        suggestion = SeriesSuggestion.objects.select_for_update().get(pk=suggestion.pk)
        if suggestion.state != SeriesSuggestion.State.PENDING:
            raise SeriesChangeRefused(f"suggestion {suggestion.pk} is already {suggestion.state}")
        first, second = _live(suggestion.first), _live(suggestion.second)
        if first.pk == second.pk:
            raise SeriesChangeRefused(f"suggestion {suggestion.pk}: both are already one series")
        target, other = sorted((first, second), key=lambda s: (s.created_at, str(s.pk)))
        change = merge_series(target, [other], actor=actor, via=via, reason=f"suggestion {suggestion.pk}")
        _decide(suggestion, SeriesSuggestion.State.CONFIRMED, actor, timezone.now())
        return change


def reject_suggestion(suggestion: SeriesSuggestion, *, actor: Any = None) -> None:
    """Mark the pair as two series: matching never suggests it again."""
    from django.utils import timezone

    updated = SeriesSuggestion.objects.filter(pk=suggestion.pk, state=SeriesSuggestion.State.PENDING).update(
        state=SeriesSuggestion.State.REJECTED, decided_by=actor, decided_at=timezone.now()
    )
    if updated != 1:
        raise SeriesChangeRefused(f"suggestion {suggestion.pk} is no longer pending")


def with_own_series(mangas: Sequence[Manga]) -> Sequence[Manga]:
    """`mangas` (unsaved, for bulk_create, which skips Manga.save) each given a series of its own under its id."""
    Series.objects.bulk_create([Series(id=m.pk, title=m.title) for m in mangas], batch_size=1000)
    for manga in mangas:
        manga.series_id = manga.pk
        manga.leads_series = True
    return mangas


def set_source_order(series: Series, order: Sequence[str]) -> None:
    """The series' preferred sources, first preferred; [] follows the global SERIES_SOURCE_PRIORITY."""
    series.source_order = list(dict.fromkeys(order))
    series.save(update_fields=["source_order", "updated_at"])


def set_download_alternates(series: Series, on: bool, *, actor: Any = None, via: str) -> bool:
    """Whether the series downloads every source's copy of a chapter, not only its preferred one's; turning it off
    deletes nothing stored. Turning it on tells the crawler (`download_alternates_enabled`), which queues the copies
    now wanted. Returns whether anything changed."""
    changed = Series.objects.filter(pk=series.pk).exclude(download_alternates=on).update(download_alternates=on)
    series.download_alternates = on
    if changed and on:
        download_alternates_enabled.send(sender=Series, series=series, actor=actor, via=via)
    return bool(changed)


def source_order(series_order: Sequence[str], available: Iterable[str]) -> list[str]:
    """The sources of `available` in preference order: the series' own, then the global priority, then by id."""
    available = sorted(set(available))
    ranked = [*series_order, *settings.SERIES_SOURCE_PRIORITY]
    rank = {source: index for index, source in reversed(list(enumerate(ranked)))}
    return sorted(available, key=lambda source: (rank.get(source, len(ranked)), source))


def refresh_match_keys(mangas: Iterable[Manga]) -> int:
    """Rewrite the stored match keys of `mangas` from their titles and cover hash; the number of keys written."""
    mangas = list(mangas)
    rows = [
        MangaMatchKey(manga_id=m.pk, key=key)
        for m in mangas
        for key in sorted(match_keys(m.title, m.alt_titles or [], m.cover_hash))
    ]
    with transaction.atomic():
        MangaMatchKey.objects.filter(manga__in=[m.pk for m in mangas]).delete()
        MangaMatchKey.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


# --- moving -------------------------------------------------------------------------------------------


def _lock(ids: Sequence[Any]) -> dict[Any, Series]:
    return {s.pk: s for s in Series.objects.select_for_update().filter(pk__in=ids).order_by("pk")}


def _live(series: Series) -> Series:
    """The series `series` was merged into, followed to the end (a merge of a merge)."""
    seen = set()
    while series.merged_into_id is not None and series.pk not in seen:
        seen.add(series.pk)
        series = Series.objects.get(pk=series.merged_into_id)
    return series


def _own_series(manga: Manga) -> Series:
    """The series a split gives `manga`: the one of its own id when that is empty, else a new one."""
    own = Series.objects.select_for_update().filter(pk=manga.pk).first()
    if own is not None and own.pk != manga.series_id and not own.mangas.exists():
        return own
    return Series.objects.create(title=manga.title)


def _apply(
    action: str,
    moves: list[dict[str, str]],
    *,
    actor: Any,
    via: str,
    reason: str,
    undoes: SeriesChange | None = None,
) -> SeriesChange:
    for move in moves:
        # A moved manga steps down; refresh_leads below names each touched series' lead again.
        Manga.objects.filter(pk=move["manga"], series_id=move["from"]).update(series_id=move["to"], leads_series=False)
    touched = {m["from"] for m in moves} | {m["to"] for m in moves}
    filled = set(map(str, Manga.objects.filter(series__in=touched).values_list("series_id", flat=True).distinct()))
    # A series with mangas is live; one emptied points at where its (last) mangas went.
    Series.objects.filter(pk__in=filled).exclude(merged_into=None).update(merged_into=None)
    gone_to = {m["from"]: m["to"] for m in moves}
    for emptied in touched - filled:
        Series.objects.filter(pk=emptied).update(merged_into=gone_to.get(emptied))
    # What readers show of each touched series changed (its chapters, its lead): the export rewrites its files.
    Series.objects.filter(pk__in=touched).update(updated_at=timezone.now())
    refresh_leads(touched)
    # A lead carries its series' newest chapter time; a manga that stepped down gets its own back.
    refresh_lead_dates(touched)
    return SeriesChange.objects.create(
        action=action,
        actor=actor if getattr(actor, "pk", None) else None,
        via=via,
        reason=reason[:500],
        moves=moves,
        undoes=undoes,
    )


def _decide(suggestion: SeriesSuggestion, state: str, actor: Any, now: Any) -> None:
    suggestion.state = state
    suggestion.decided_by = actor if getattr(actor, "pk", None) else None
    suggestion.decided_at = now
    suggestion.save(update_fields=["state", "decided_by", "decided_at"])
