"""Komga-compatible API latency on a 100k-manga library: p50/p95 and query count per call Mihon makes.

    python bench/komga_latency.py [--mangas 100000] [--requests 60] [--keep] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_komga]

Seeds the library of bench/api_latency.py and the reader of
bench/opds_latency.py (300 bookmarks, a 300-chapter manga) in its own scratch
database, then times the calls Mihon's Komga extension and tracker make
through Django's test client (full middleware and view stack, no network)
with the reader's session cookie. Two extra rows time the series list with
an API key and with the password in HTTP Basic on every request, which is
how Mihon calls.
"""

from __future__ import annotations

import base64
import sys
from importlib import metadata

import api_latency
import measure
import opds_latency

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_komga"


def main() -> None:
    args = measure.library_arguments(__doc__, DEFAULT_DB_URL)
    with measure.migrated_scratch(args.database_url, keep=args.keep):
        import django
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.test import Client

        from accounts import api_keys
        from catalog.models import Chapter

        api_latency.seed(args.mangas)
        _, long_manga = opds_latency.seed_reader()
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        reader = get_user_model().objects.get(username="bench-reader")
        session = Client()
        session.force_login(reader)
        _, key = api_keys.mint(reader, "bench")
        password = base64.b64encode(f"bench-reader:{opds_latency.PASSWORD}".encode()).decode()
        chapter = Chapter.objects.filter(manga_id=long_manga).order_by("number").first().id
        scenarios = [
            ("popular, page 0", "/api/v1/series", {"search": "", "page": 0, "deleted": "false"}, session, {}),
            ("latest, page 0", "/api/v1/series", {"page": 0, "sort": "lastModifiedDate,desc"}, session, {}),
            ("latest, page 200", "/api/v1/series", {"page": 200, "sort": "lastModifiedDate,desc"}, session, {}),
            ("alphabetical, page 0", "/api/v1/series", {"page": 0, "sort": "metadata.titleSort,asc"}, session, {}),
            ("search=dragon", "/api/v1/series", {"search": "dragon", "page": 0}, session, {}),
            ("genre=tag-07", "/api/v1/series", {"genre": "tag-07", "page": 0}, session, {}),
            ("library_id=bench", "/api/v1/series", {"library_id": "bench", "page": 0}, session, {}),
            ("read_status=UNREAD,IN_PROGRESS", "/api/v1/series", {"read_status": "UNREAD,IN_PROGRESS"}, session, {}),
            ("series detail", f"/api/v1/series/{long_manga}", {}, session, {}),
            ("books, 300, unpaged", f"/api/v1/series/{long_manga}/books", {"unpaged": "true"}, session, {}),
            ("book pages (20)", f"/api/v1/books/{chapter}/pages", {}, session, {}),
            ("tracker GET", f"/api/v2/series/{long_manga}/read-progress/tachiyomi", {}, session, {}),
            ("genres", "/api/v1/genres", {}, session, {}),
            ("popular, X-API-Key each time", "/api/v1/series", {}, Client(), {"HTTP_X_API_KEY": key}),
            (
                "popular, Basic password each time",
                "/api/v1/series",
                {},
                Client(),
                {"HTTP_AUTHORIZATION": f"Basic {password}"},
            ),
        ]
        print(f"Python {sys.version.split()[0]}, Django {django.get_version()}, psycopg {metadata.version('psycopg')}")
        print(f"\nKomga API, {args.mangas:,} mangas — {args.requests} timed requests per row (after 3 warm-up)\n")
        print(f"{'call':<36} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}")
        for label, url, params, client, headers in scenarios:
            timing = measure.time_get(client, url, params, args.requests, **headers)
            assert timing.response.status_code == 200, (label, timing.response.status_code)
            print(f"{label:<36} {timing.p50_ms:>8.1f} {timing.p95_ms:>8.1f} {timing.queries:>8}")


if __name__ == "__main__":
    main()
