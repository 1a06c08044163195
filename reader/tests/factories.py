"""Row factories for the reader tests: real rows, real PNG/JPEG pages in storage."""

from __future__ import annotations

import hashlib
import io
import itertools
from decimal import Decimal
from typing import Any

from django.core.files.base import ContentFile
from PIL import Image

from catalog.models import Chapter, Manga, MangaSource, Page, Source, Tag

_seq = itertools.count(1)


def image_bytes(
    width: int = 40, height: int = 60, fmt: str = "PNG", color: tuple[int, int, int] = (200, 30, 30)
) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, fmt)
    return buf.getvalue()


def source(id: str = "demo", **settings: Any) -> Source:  # noqa: A002
    return Source.objects.create(id=id, name=id.title(), base_url=f"http://{id}.example", settings=settings)


def manga(
    title: str | None = None,
    *,
    tags: tuple[str, ...] = (),
    src: Source | None = None,
    cover: bool = False,
    **fields: Any,
) -> Manga:
    n = next(_seq)
    row = Manga.objects.create(title=title or f"Manga {n}", **fields)
    if tags:
        row.tags.set([Tag.objects.get_or_create(name=t)[0] for t in tags])
    if src is not None:
        MangaSource.objects.create(manga=row, source=src, source_manga_key=f"m{n}", url=f"{src.base_url}/manga/{n}")
    if cover:
        row.cover.save(f"{row.id}.png", ContentFile(image_bytes(200, 300)), save=False)
        row.cover_state = Manga.CoverState.STORED
        row.save(update_fields=["cover", "cover_state"])
    return row


def chapter(
    m: Manga, number: str | int, *, src: Source, pages: int = 0, width: int = 40, height: int = 60, **fields: Any
) -> Chapter:
    fields.setdefault("sync_state", Chapter.SyncState.DONE if pages else Chapter.SyncState.NEW)
    row = Chapter.objects.create(
        manga=m,
        source=src,
        source_chapter_key=f"{m.id}-{number}-{next(_seq)}",
        number=Decimal(str(number)),
        page_count=pages,
        **fields,
    )
    for index in range(pages):
        page(row, index, image_bytes(width, height, color=(index * 20 % 255, 90, 160)))
    return row


def page(ch: Chapter, index: int, data: bytes, content_type: str = "image/png") -> Page:
    with Image.open(io.BytesIO(data)) as img:
        width, height = img.size
    row = Page(chapter=ch, index=index, content_type=content_type, bytes=len(data), width=width, height=height)
    row.sha256 = hashlib.sha256(data).hexdigest()
    row.image.save(f"{ch.id}-{index}.png", ContentFile(data), save=False)
    row.save()
    return row
