"""Web library latency on a big library: the library page (shelves, sorts, filters), manga and reader pages.

    python bench/library_latency.py [--mangas 20000] [--requests 30] [--keep] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_library]

Seeds the `api_latency` library (its chapters made readable) and the
`opds_latency` reader (300 bookmarks, a 300-chapter manga) in its own
scratch database, gives the reader progress in 600 chapters (two in three
finished, the rest begun), then times each page of the web app through
Django's test client (full middleware, view and template stack, no network)
with the reader's session cookie, printing p50/p95, the SQL query count and
the cards (or chapter rows) on the page.
"""

from __future__ import annotations

import sys
from importlib import metadata

import api_latency
import measure
import opds_latency

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_library"
PROGRESS_ROWS = 600


def seed_progress(user_id: str) -> None:
    """Chapters readable; 300 bookmarks on mangas that have chapters; progress in the first 600 chapters."""
    from catalog.models import Bookmark, Chapter, Manga
    from reader.models import ReadProgress

    Chapter.objects.exclude(sync_state="done").update(sync_state="done", page_count=20)
    if ReadProgress.objects.filter(user_id=user_id).exists():
        return
    with_chapters = Manga.objects.filter(chapters__isnull=False).distinct().order_by("id")[:300]
    Bookmark.objects.bulk_create((Bookmark(user_id=user_id, manga=m) for m in with_chapters), ignore_conflicts=True)
    chapters = Chapter.objects.order_by("manga_id", "number").values_list("id", flat=True)[:PROGRESS_ROWS]
    ReadProgress.objects.bulk_create(
        ReadProgress(user_id=user_id, chapter_id=chapter, last_page=20 if n % 3 else 7, completed=bool(n % 3))
        for n, chapter in enumerate(chapters)
    )


def main() -> None:
    args = measure.library_arguments(__doc__, DEFAULT_DB_URL, mangas=20_000)
    with measure.migrated_scratch(args.database_url, keep=args.keep):
        import django
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.test import Client

        from catalog.models import Chapter, Manga

        if Manga.objects.exclude(title="Bench Long Series").count() != args.mangas:
            api_latency.seed(args.mangas)  # (a kept database already holds the library and the reader)
        user_id, long_manga = opds_latency.seed_reader()
        seed_progress(user_id)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        session = Client()
        session.force_login(get_user_model().objects.get(pk=user_id))
        small_manga = Manga.objects.filter(chapters__isnull=False).exclude(pk=long_manga).first()
        chapter = Chapter.objects.filter(manga_id=long_manga).order_by("number")[150]
        scenarios = [
            ("library: shelves + grid", "/", {}),
            ("library: by title, page 1", "/", {"sort": "title"}),
            ("library: by title, page 200 (offset)", "/", {"sort": "title", "page": 200}),
            ("library: recently added", "/", {"sort": "added"}),
            ("library: most unread (whole library)", "/", {"sort": "unread"}),
            ("library: tag filter", "/", {"tag": "tag-07"}),
            ("library: status filter", "/", {"status": "ongoing"}),
            ("library: search q=dragon", "/", {"q": "dragon"}),
            ("manga page, 5 chapters", f"/mangas/{small_manga.pk}/", {}),
            ("manga page, 300 chapters", f"/mangas/{long_manga}/", {}),
            ("reader page, 20 pages", f"/read/{chapter.pk}/", {}),
        ]
        print(f"Python {sys.version.split()[0]}, Django {django.get_version()}, psycopg {metadata.version('psycopg')}")
        print(f"\nWeb library, {args.mangas:,} mangas — {args.requests} timed requests per row (after 3 warm-up)\n")
        print(f"{'page':<40} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'rows':>6}")
        for label, url, params in scenarios:
            timing = measure.time_get(session, url, params, args.requests)
            html = timing.response.content
            rows = html.count(b'<li class="card">') + html.count(b'<li id="chapter-')
            print(f"{label:<40} {timing.p50_ms:>8.1f} {timing.p95_ms:>8.1f} {timing.queries:>8} {rows:>6}")


if __name__ == "__main__":
    main()
