"""The queries behind every reader listing: one query per page of rows, whatever the page size.

Pages are fetched `size + 1` rows at a time so "is there a next page" needs
no COUNT over a 100k-manga table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db.models import Exists, OuterRef, QuerySet

from catalog.models import LATEST_CHAPTER_ORDER, Bookmark, Manga, Tag
from reader.progress import has_unread

PAGE_SIZE = 50
MANGA_FIELDS = ("id", "title", "description", "cover", "latest_chapter_at", "updated_at", "created_at")

T = TypeVar("T")


@dataclass(frozen=True)
class Paged(Generic[T]):
    rows: list[T]
    page: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def paged(queryset: QuerySet[Any], page: int, size: int = PAGE_SIZE) -> Paged[Any]:
    start = (page - 1) * size
    rows = list(queryset[start : start + size + 1])
    return Paged(rows[:size], page, len(rows) > size)


def latest_mangas() -> QuerySet[Manga]:
    return Manga.objects.only(*MANGA_FIELDS).order_by(*LATEST_CHAPTER_ORDER)


def mangas_by_title() -> QuerySet[Manga]:
    return Manga.objects.only(*MANGA_FIELDS).order_by("title", "id")


def search_mangas(q: str) -> QuerySet[Manga]:
    return mangas_by_title().filter(title__icontains=q)


def mangas_tagged(tag: Tag) -> QuerySet[Manga]:
    return mangas_by_title().filter(tags=tag)


def bookmarked_mangas(user: Any) -> QuerySet[Manga]:
    """`user`'s bookmarked mangas (either kind), those with chapters still to read first, then by latest chapter."""
    mine = Bookmark.objects.filter(user=user, manga=OuterRef("pk"))
    return (
        Manga.objects.only(*MANGA_FIELDS)
        .filter(Exists(mine))
        .annotate(unread=has_unread(user))
        .order_by("-unread", *LATEST_CHAPTER_ORDER)
    )


def tags() -> QuerySet[Tag]:
    return Tag.objects.order_by("name", "id")
