"""OPDS feed latency on a 100k-manga library: p50/p95 and query count per feed kind.

    python bench/opds_latency.py [--mangas 100000] [--requests 60] [--keep] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_opds]

Seeds the same library as bench/api_latency.py in its own scratch database (reused
when `--keep` left it), adds a reader with 300 bookmarks and one
manga with 300 downloaded chapters, then times each OPDS feed through
Django's test client (full middleware and view stack, no network) with the
reader's session cookie. One extra row times the root feed with HTTP Basic
on every request, to show what password hashing adds for clients that keep
no cookies.
"""

from __future__ import annotations

import base64
import sys
from importlib import metadata

import api_latency
import measure

PASSWORD = "bench-password"
DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_opds"


def seed_reader() -> tuple[str, str]:
    from django.contrib.auth import get_user_model

    from catalog.models import Bookmark, Chapter, Manga, Page, Source

    user, created = get_user_model().objects.get_or_create(username="bench-reader")
    if created:
        user.set_password(PASSWORD)
        user.save()
        Bookmark.objects.bulk_create(Bookmark(user=user, manga=m) for m in Manga.objects.order_by("id")[:300])
    source = Source.objects.get(id="bench")
    manga, made = Manga.objects.get_or_create(title="Bench Long Series")
    if made:
        chapters = Chapter.objects.bulk_create(
            Chapter(
                manga=manga, source=source, source_chapter_key=f"long-{n}", number=n, sync_state="done", page_count=20
            )
            for n in range(1, 301)
        )
        Page.objects.bulk_create(
            Page(chapter=c, index=i, image=f"pages/bench/{c.id}-{i}.jpg", content_type="image/jpeg", sha256="0" * 64)
            for c in chapters
            for i in range(20)
        )
    return str(user.pk), str(manga.pk)


def main() -> None:
    args = measure.library_arguments(__doc__, DEFAULT_DB_URL)
    with measure.migrated_scratch(args.database_url, keep=args.keep):
        import django
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.test import Client

        from catalog.models import Tag
        from reader import library

        api_latency.seed(args.mangas)
        _, long_manga = seed_reader()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        session = Client()
        session.force_login(get_user_model().objects.get(username="bench-reader"))
        token = base64.b64encode(f"bench-reader:{PASSWORD}".encode()).decode()
        tag = Tag.objects.get(name="tag-07").id
        # What a deep page's next link carries (page 999's at 100k, 90 % deep in a smaller library): the (title,
        # id) of its last row.
        deep = min(1000, int(args.mangas * 0.9) // 50)
        edge = library.mangas_by_title().order_by("title", "id")[(deep - 1) * 50 - 1]
        seek = {"page": deep, "after": library.TitleCursor.of(edge).encode()}
        scenarios = [
            ("root", "/opds/", {}, session, {}),
            ("latest, page 1", "/opds/latest/", {}, session, {}),
            ("latest, page 200", "/opds/latest/", {"page": 200}, session, {}),
            ("all by title, page 1", "/opds/all/", {}, session, {}),
            (f"all by title, page {deep} (offset)", "/opds/all/", {"page": deep}, session, {}),
            (f"all by title, page {deep} (next link)", "/opds/all/", seek, session, {}),
            ("search q=dragon", "/opds/search/", {"q": "dragon"}, session, {}),
            ("tag feed", f"/opds/tags/{tag}/", {}, session, {}),
            ("bookmarks (300, unread first)", "/opds/bookmarks/", {}, session, {}),
            ("manga, 300 chapters, page 1", f"/opds/mangas/{long_manga}/", {}, session, {}),
            ("manga, 300 chapters, page 6", f"/opds/mangas/{long_manga}/", {"page": 6}, session, {}),
            ("root, HTTP Basic each time", "/opds/", {}, Client(), {"HTTP_AUTHORIZATION": f"Basic {token}"}),
        ]
        print(f"Python {sys.version.split()[0]}, Django {django.get_version()}, psycopg {metadata.version('psycopg')}")
        print(f"\nOPDS feeds, {args.mangas:,} mangas — {args.requests} timed requests per row (after 3 warm-up)\n")
        print(f"{'feed':<36} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'entries':>8}")
        for label, url, params, client, headers in scenarios:
            timing = measure.time_get(client, url, params, args.requests, **headers)
            entries = timing.response.content.count(b"<entry>")
            print(f"{label:<36} {timing.p50_ms:>8.1f} {timing.p95_ms:>8.1f} {timing.queries:>8} {entries:>8}")


if __name__ == "__main__":
    main()
