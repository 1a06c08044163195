"""The digest pass: claim what became readable since the last pass, and give each user one digest of it.

A *pass* is one call of `run_digest_pass` (the notify worker runs one every NOTIFY_DIGEST_INTERVAL seconds;
`manage.py notify_digest` runs one from cron). It claims every `ReadyChapter` row no pass took yet in one UPDATE, so
each readable chapter is in exactly one pass whatever runs at once, and a chapter that becomes readable while a pass
runs waits for the next. Each user with a digest target then gets at most one digest per pass, of the claimed
chapters in series they bookmarked; a pass with nothing for them sends them nothing.
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Min
from django.urls import reverse
from django.utils import timezone

from catalog.chapter_names import display_title
from catalog.models import Bookmark, Manga
from notify.digests.compose import Digest, ReadyItem, compose
from notify.models import Delivery, DigestPass, NotificationTarget, ReadyChapter
from notify.sending import enqueue_deliveries

logger = logging.getLogger(__name__)

_NO_VOLUME = 2**31 - 1


@dataclass(frozen=True)
class PassOutcome:
    pass_id: int | None
    chapters: int
    digests: int


def claim_ready() -> tuple[DigestPass | None, int]:
    """Take every unclaimed ready chapter into a new pass; (None, 0) when there is none (no empty pass rows)."""
    if not ReadyChapter.objects.filter(digest_pass__isnull=True).exists():
        return None, 0
    with transaction.atomic():
        digest_pass = DigestPass.objects.create()
        # One UPDATE: on PostgreSQL a concurrent pass waits for these row locks, then re-checks the condition and
        # finds them taken, so no chapter is in two passes.
        claimed = ReadyChapter.objects.filter(digest_pass__isnull=True).update(digest_pass=digest_pass)
        digest_pass.chapters = claimed
        digest_pass.save(update_fields=["chapters"])
    return digest_pass, claimed


def public_url(path: str) -> str:
    return f"{settings.NOTIFY_PUBLIC_URL.rstrip('/')}{path}"


def chapter_url(chapter_id: uuid.UUID) -> str:
    return public_url(reverse("reader:chapter", args=[chapter_id]))


def series_url(manga_id: uuid.UUID) -> str:
    return public_url(reverse("reader:manga", args=[manga_id]))


def ready_items(digest_pass: DigestPass) -> dict[uuid.UUID, list[ReadyItem]]:
    """The pass's live chapters by series, each once (a chapter downloaded again is still one chapter).

    Built once per pass, labels and links included, whatever the number of users: each user's digest only picks
    the series they follow. `bookmarked_at` is filled per user (`_for_user`).
    """
    rows = (
        ReadyChapter.objects.filter(digest_pass=digest_pass, chapter__dropped_at__isnull=True)
        .values(
            "chapter_id",
            "chapter__number",
            "chapter__title",
            "chapter__kind",
            "chapter__volume",
            "chapter__created_at",
            "chapter__manga_id",
            "chapter__manga__title",
            "chapter__manga__created_at",
        )
        .order_by()
    )
    by_series: dict[uuid.UUID, dict[uuid.UUID, ReadyItem]] = defaultdict(dict)
    for row in rows:
        volume = row["chapter__volume"]
        by_series[row["chapter__manga_id"]][row["chapter_id"]] = ReadyItem(
            manga_id=row["chapter__manga_id"],
            manga_title=row["chapter__manga__title"],
            manga_created_at=row["chapter__manga__created_at"],
            chapter_id=row["chapter_id"],
            chapter_label=display_title(row["chapter__number"], row["chapter__title"], row["chapter__kind"], volume),
            chapter_listed_at=row["chapter__created_at"],
            order=(row["chapter__kind"], _NO_VOLUME if volume is None else volume, row["chapter__number"]),
            bookmarked_at=row["chapter__manga__created_at"],  # a placeholder until a user's own is known
        )
    return {manga_id: list(items.values()) for manga_id, items in by_series.items()}


def follows(user_ids: Iterable[int], manga_ids: Iterable[uuid.UUID]) -> dict[int, dict[uuid.UUID, datetime]]:
    """Per user, the series among `manga_ids` they bookmarked and since when (their first bookmark on it,
    manga-level or chapter-level): two queries for every user of the pass.

    A bookmark of a series sits on its lead while its chapters may come from another source's manga, so a
    bookmark on any manga of a series follows every manga of it."""
    mangas_of: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
    for manga_id, series_id in Manga.objects.filter(pk__in=list(manga_ids)).values_list("pk", "series_id"):
        mangas_of[series_id].append(manga_id)
    rows = (
        Bookmark.objects.filter(user_id__in=list(user_ids), manga__series_id__in=list(mangas_of))
        .values_list("user_id", "manga__series_id")
        .annotate(since=Min("created_at"))
        .order_by()
    )
    followed: dict[int, dict[uuid.UUID, datetime]] = defaultdict(dict)
    for user_id, series_id, since in rows:
        for manga_id in mangas_of[series_id]:
            followed[user_id][manga_id] = since
    return followed


def chapter_links(items: dict[uuid.UUID, list[ReadyItem]]) -> dict[uuid.UUID, str]:
    """Each ready chapter's link, made once per pass rather than once per user who gets it."""
    return {item.chapter_id: chapter_url(item.chapter_id) for series in items.values() for item in series}


def digest_for(
    followed: dict[uuid.UUID, datetime], items: dict[uuid.UUID, list[ReadyItem]], links: dict[uuid.UUID, str]
) -> Digest | None:
    """The digest of a user who follows `followed` ({series: since}), or None when no ready chapter is theirs."""
    mine = [
        replace(item, bookmarked_at=since) for manga_id, since in followed.items() for item in items.get(manga_id, ())
    ]
    return compose(
        mine,
        backlog_window=timedelta(seconds=settings.NOTIFY_BACKLOG_WINDOW),
        chapter_url=links.__getitem__,
        series_url=series_url,
    )


# What a pass keeps of the past: claimed chapters for a week (to see what a recent digest said), sent messages for a
# month; the tables stay small however long the server runs.
KEEP_CLAIMED = timedelta(days=7)
KEEP_SENT = timedelta(days=30)


def prune(now: datetime) -> None:
    ReadyChapter.objects.filter(digest_pass__started_at__lt=now - KEEP_CLAIMED).delete()
    DigestPass.objects.filter(started_at__lt=now - KEEP_CLAIMED).delete()
    Delivery.objects.filter(sent_at__lt=now - KEEP_SENT).delete()


def pass_due(last_started_at: datetime | None, interval: timedelta, now: datetime) -> bool:
    """A scheduled pass is due when none ran yet or the last one started `interval` ago."""
    return last_started_at is None or now - last_started_at >= interval


def run_scheduled_pass(now: datetime | None = None) -> PassOutcome | None:
    """The notify worker's duty: a pass when the last one, by any worker, is NOTIFY_DIGEST_INTERVAL old.

    The last pass row is the shared schedule, so several notify workers keep one cadence between them instead of
    one each (a pass that found nothing leaves no row, so the next check tries again at once).
    """
    now = now or timezone.now()
    last = DigestPass.objects.order_by("-started_at").values_list("started_at", flat=True).first()
    if not pass_due(last, timedelta(seconds=settings.NOTIFY_DIGEST_INTERVAL), now):
        return None
    return run_digest_pass()


def run_digest_pass() -> PassOutcome:
    """Claim, compose and queue: one `notify_send` job per digest and target. Never sends anything itself."""
    digest_pass, claimed = claim_ready()
    if digest_pass is None:
        return PassOutcome(None, 0, 0)
    items = ready_items(digest_pass)
    targets_by_user: dict[int, list[NotificationTarget]] = defaultdict(list)
    for target in NotificationTarget.objects.filter(digests=True, user__is_active=True):
        targets_by_user[target.user_id].append(target)
    followed = follows(targets_by_user, items)
    links = chapter_links(items)
    deliveries = []
    for user_id, targets in targets_by_user.items():
        digest = digest_for(followed.get(user_id, {}), items, links)
        if digest is None:
            continue
        for target in targets:
            deliveries.append(Delivery(target=target, kind=Delivery.Kind.DIGEST, title=digest.title, body=digest.body))
    enqueue_deliveries(deliveries)
    prune(digest_pass.started_at)
    digest_pass.digests = len(deliveries)
    digest_pass.save(update_fields=["digests"])
    logger.info("digest pass %d: %d chapter(s) ready, %d digest(s) queued", digest_pass.id, claimed, len(deliveries))
    return PassOutcome(digest_pass.id, claimed, len(deliveries))
