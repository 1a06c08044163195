"""Which chapters a source downloads the pages of: its `download` setting.

- `all` (the default, and what every existing source does): every chapter of
  every manga the source lists.
- `followed`: metadata, covers and chapter lists for every manga, but pages only
  for mangas some user bookmarked (a bookmark of a series follows every
  source's copy of it: each chapter is still downloaded from one source). A big aggregator lists 100,000 mangas; the
  owner reads a few hundred, and the rest stays browsable without tens of
  terabytes on disk. The bookmark hook queues a manga's chapters when someone
  bookmarks it; chapter sync queues the new chapters of followed mangas.

The key is registered with the catalog's settings contract
(`catalog.source_settings`) in `CrawlerConfig.ready()`, so the admin form and
`add_source --set download=followed` check it with every other key.
Switching is `console.control.source_changes.set_download_policy` (CLI, admin, API), which
also queues or withdraws the chapters the switch concerns.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from catalog.models import Bookmark, Chapter, Manga, Source
from catalog.source_settings import SourceSettingsError

KEY = "download"
ALL = "all"
FOLLOWED = "followed"
POLICIES = (ALL, FOLLOWED)


def check(source_id: str, value: Any) -> str:
    """`value` when it is a policy, else an error naming the source and the key."""
    if value not in POLICIES:
        raise SourceSettingsError(
            f"source {source_id!r}: settings key {KEY!r} must be 'all' or 'followed', not {value!r}", key=KEY
        )
    return value


def validate(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """The settings contract's check of the `download` key (any kind of source)."""
    if KEY in values:
        check(source_id, values[KEY])


def policy_of(source: Source) -> str:
    return check(source.id, (source.settings or {}).get(KEY, ALL))


def wants_pages(policy: str, followed: bool) -> bool:
    """Whether chapter sync queues a manga's chapters for download: always under `all`, when followed otherwise."""
    return policy == ALL or followed


def wants_pages_of(source: Source, manga: Manga) -> bool:
    """`wants_pages` for a stored manga of `source` (the bookmark lookup only under `followed`)."""
    policy = policy_of(source)
    return wants_pages(policy, policy == ALL or is_followed(manga))


def is_followed(manga: Manga) -> bool:
    """Some user bookmarked the manga's series (any of its mangas, whole or one of its chapters): a series'
    bookmark sits on its lead, and the copy its preferred source lists is the one downloaded."""
    return Bookmark.objects.filter(manga__series_id=manga.series_id).exists()


def _series_bookmarked() -> Exists:
    return Exists(Bookmark.objects.filter(manga__series_id=OuterRef("manga__series_id")))


def followed(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    """The chapters among `chapters` whose series some user bookmarked."""
    return chapters.filter(_series_bookmarked())


def not_followed(chapters: QuerySet[Chapter]) -> QuerySet[Chapter]:
    return chapters.exclude(_series_bookmarked())
