"""Row factories and clients for the admin/library API tests (plain functions, real rows)."""

from __future__ import annotations

import hashlib
import io
import itertools
import uuid
from decimal import Decimal
from typing import Any

from django.core.files.base import ContentFile
from django.utils import timezone
from PIL import Image
from rest_framework.test import APIClient

from analysis.payloads import AnalyzePage
from catalog.models import Chapter, Manga, MangaSource, Page, Source, Tag
from crawler.payloads import SyncChapterContent, SyncManga
from jobs import queue
from jobs.models import Job
from jobs.payloads import Payload

_seq = itertools.count(1)


def png_bytes(width: int = 1, height: int = 1) -> bytes:
    """A real PNG, so content sniffing and image responses see an image."""
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


PNG_1PX = png_bytes()


def source(id: str = "demo", enabled: bool = True, **fields: Any) -> Source:  # noqa: A002
    return Source.objects.create(id=id, name=id.title(), base_url=f"http://{id}.example", enabled=enabled, **fields)


def manga(title: str | None = None, *, tags: tuple[str, ...] = (), src: Source | None = None, **fields: Any) -> Manga:
    n = next(_seq)
    row = Manga.objects.create(title=title or f"Manga {n}", **fields)
    if tags:
        row.tags.set([Tag.objects.get_or_create(name=t)[0] for t in tags])
    if src is not None:
        MangaSource.objects.create(manga=row, source=src, source_manga_key=f"m{n}")
    return row


def chapter(m: Manga, number: str | int | Decimal, *, src: Source, **fields: Any) -> Chapter:
    return Chapter.objects.create(
        manga=m, source=src, source_chapter_key=f"{m.id}-{number}-{next(_seq)}", number=Decimal(str(number)), **fields
    )


def page(ch: Chapter, index: int = 0, data: bytes = PNG_1PX, content_type: str = "image/png") -> Page:
    row = Page(chapter=ch, index=index, content_type=content_type, bytes=len(data))
    row.sha256 = hashlib.sha256(data).hexdigest()
    row.image.save(f"{ch.id}-{index}.png", ContentFile(data), save=False)
    row.save()
    return row


def job(payload: Payload, state: str = "pending", **fields: Any) -> Job:
    """Enqueue through the real queue, then move the row to `state` (test setup only)."""
    result = queue.enqueue(payload)
    assert result.inserted, f"{payload} was already in flight"
    Job.objects.filter(id=result.id).update(state=state, updated_at=timezone.now(), **fields)
    return Job.objects.get(id=result.id)


def dead_content_job(ch: Chapter, **fields: Any) -> Job:
    payload = SyncChapterContent(source_id=ch.source_id, chapter_id=ch.id, source_chapter_key=ch.source_chapter_key)
    return job(payload, "dead", last_error="boom", **fields)


def dead_sync_manga(title: str, src: str = "demo", key: str | None = None, url: str = "") -> Job:
    payload = SyncManga(source_id=src, source_manga_key=key or f"k-{uuid.uuid4().hex[:8]}", url=url, title=title)
    return job(payload, "dead", last_error="gone")


def dead_analyze_job(pg: Page) -> Job:
    return job(AnalyzePage(page_id=pg.id), "dead", last_error="model down")


SAME_ORIGIN = "http://testserver"


def api_client(user: Any) -> APIClient:
    """A client authenticated as `user` without a session, so query counts are the view's own."""
    client = APIClient()
    client.force_authenticate(user)
    return client


def post_json(client: APIClient, url: str, body: Any = None, **headers: str) -> Any:
    """POST a JSON body from the site's own origin (the admin guard refuses mutations without one)."""
    headers.setdefault("HTTP_ORIGIN", SAME_ORIGIN)
    return client.post(url, body, format="json", **headers)
