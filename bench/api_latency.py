"""Library API latency on a 100k-manga library.

    python bench/api_latency.py [--mangas 100000] [--requests 60] [--keep] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_api]

Creates (or recreates) a scratch PostgreSQL database (default
`mangalord_bench_api`; never the one in DATABASE_URL), migrates it and
seeds it with `bulk_create`: `--mangas` mangas (5% never updated, a third with
alternative titles), 40 tags
with two or three per manga, and five chapters for every tenth manga. Then
it times `GET /api/v1/mangas/` through Django's test client (the full
middleware, DRF and serializer stack, no network) for several shapes of
request, and prints p50/p95 latency and the SQL query count of each, plus
the plan of the first page's row query. Title searches are timed three
times: before (the plain `title__icontains` filter, a sequential scan, an
exact count), with catalog/search.py but an exact count (trigram GIN
indexes; pages cut from the shortest matches by migration 0004's length
indexes), and as served (the count capped at CATALOG_SEARCH_COUNT_CAP).
`--keep` leaves the database for another run (it is reused when it already
holds the right number of mangas).
"""

from __future__ import annotations

import random
import time
from datetime import timedelta

import measure

DEFAULT_DB_URL = "postgres://postgres@127.0.0.1:5432/mangalord_bench_api"
CHUNK = 5000
WORDS = ("dragon", "sword", "moon", "river", "school", "demon", "garden", "star", "ghost", "kitchen")
STATUSES = ("ongoing", "completed", "hiatus", "cancelled", "unknown")


def seed(mangas: int) -> None:
    from django.db import connection
    from django.utils import timezone

    from catalog.models import Chapter, Manga, Source, Tag
    from catalog.series import with_own_series

    if Manga.objects.count() == mangas:
        print(f"reusing the seeded library ({mangas:,} mangas)")
        return
    Manga.objects.all().delete()
    started = time.perf_counter()
    rng = random.Random(42)
    now = timezone.now()
    source, _ = Source.objects.get_or_create(id="bench", defaults={"name": "Bench", "base_url": "http://bench.invalid"})
    tags = [Tag.objects.get_or_create(name=f"tag-{i:02d}")[0] for i in range(40)]
    through = Manga.tags.through
    for start in range(0, mangas, CHUNK):
        rows = []
        for i in range(start, min(start + CHUNK, mangas)):
            latest = None if i % 20 == 0 else now - timedelta(minutes=rng.randrange(0, 5 * 365 * 24 * 60))
            title = f"{WORDS[i % len(WORDS)].title()} {WORDS[(i // 10) % len(WORDS)]} {i}"
            # A third carry alternative titles, some accented, as sources list them.
            alt = [f"{WORDS[(i // 100) % len(WORDS)].title()}ó saga {i}", f"第{i}話"] if i % 3 == 0 else []
            rows.append(
                Manga(title=title, alt_titles=alt, status=STATUSES[i % len(STATUSES)], latest_chapter_at=latest)
            )
        Manga.objects.bulk_create(with_own_series(rows), batch_size=CHUNK)
        links = [through(manga_id=m.id, tag_id=t.id) for m in rows for t in rng.sample(tags, 2 + (hash(m.id) % 2))]
        through.objects.bulk_create(links, batch_size=CHUNK)
        chapters = [
            Chapter(manga=m, source=source, source_chapter_key=f"{m.id}-{n}", number=n)
            for m in rows[::10]
            for n in range(1, 6)
        ]
        Chapter.objects.bulk_create(chapters, batch_size=CHUNK)
        print(f"\rseeded {min(start + CHUNK, mangas):,}/{mangas:,} mangas", end="", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"\nseeding took {time.perf_counter() - started:.1f} s")


SCENARIOS = [
    ("first page (50)", {}),
    ("page 2", {"page": 2}),
    ("page 200 (deep offset)", {"page": 200}),
    ("page_size=100", {"page_size": 100}),
    ("tag filter", {"tag": "tag-07"}),
    ("tag + status", {"tag": "tag-07", "status": "completed"}),
]
SEARCHES = [
    ("q=dragon (common word)", {"q": "dragon"}),
    ("q=moon 4242 (rare)", {"q": "moon 4242"}),
    ("q=GHOST 7 (case)", {"q": "GHOST 7"}),
    ("q=kitchén 99 (accent)", {"q": "kitchén 99"}),
    ("q=4242 (digits)", {"q": "4242"}),
    ("q=x (one letter)", {"q": "x"}),
]


def time_requests(requests: int, scenarios: list[tuple[str, dict]], title: str) -> None:
    from django.test import Client

    client = Client()
    print(f"\nGET /api/v1/mangas/ {title} — {requests} timed requests per row (after 3 warm-up requests)\n")
    print(f"{'request':<28} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'rows':>6} {'count':>8}")
    for label, params in scenarios:
        timing = measure.time_get(client, "/api/v1/mangas/", params, requests)
        body = timing.response.json()
        print(
            f"{label:<28} {timing.p50_ms:>8.1f} {timing.p95_ms:>8.1f} {timing.queries:>8} "
            f"{len(body['results']):>6} {body['count']:>8,}{'' if body.get('count_exact', True) else '+'}"
        )


def time_searches(requests: int) -> None:
    """The title searches before (plain icontains) and after (trigram), through the same API stack."""
    from django.conf import settings
    from django.test import override_settings

    from catalog import search
    from catalog.api import views

    try:
        views.title_search = search.icontains_search  # type: ignore[assignment]
        with override_settings(CATALOG_SEARCH_COUNT_CAP=0):
            time_requests(requests, SEARCHES, "title search BEFORE (plain icontains, exact count)")
    finally:
        views.title_search = search.title_search  # type: ignore[assignment]
    with override_settings(CATALOG_SEARCH_COUNT_CAP=0):
        time_requests(requests, SEARCHES, "title search, exact count (trigram GIN, pages cut by the length indexes)")
    time_requests(
        requests, SEARCHES, f"title search AFTER (as served: count capped at {settings.CATALOG_SEARCH_COUNT_CAP:,})"
    )


def show_plan() -> None:
    from catalog.api.views import manga_list

    page = manga_list()[:50]
    plan = page.explain(analyze=True)
    print("\nplan of the first page's row query:")
    for line in plan.splitlines()[:12]:
        print("   ", line)
    searched = manga_list(q="moon 4242")[:50]
    print("\nplan of a title search's row query (q=moon 4242):")
    for line in searched.explain(analyze=True).splitlines()[:16]:
        print("   ", line)


def main() -> None:
    args = measure.library_arguments(__doc__, DEFAULT_DB_URL)
    with measure.migrated_scratch(args.database_url, keep=args.keep):
        seed(args.mangas)
        time_requests(args.requests, SCENARIOS, "")
        time_searches(args.requests)
        show_plan()


if __name__ == "__main__":
    main()
