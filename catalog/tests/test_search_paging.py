"""A search's pages: cut from the shortest matches on PostgreSQL, counted up to CATALOG_SEARCH_COUNT_CAP."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.api.views import manga_list
from catalog.search import cut_threshold
from testsupport import api_factories as f

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="the cut reads migration 0004's indexes")


@pytest.fixture
def dragons(db):
    """Matches in the title and in alternative titles only, of many lengths, tied lengths on different dates."""
    now = timezone.now()
    for n in range(24):
        f.manga(
            f"Dragon {'x' * (n % 7)} {n}",
            latest_chapter_at=None if n % 5 == 0 else now - timedelta(days=n),
            tags=("fantasy",) if n % 2 else (),
        )
    for n in range(12):
        # The alternative title is shorter than some title matches, so the two kinds interleave.
        f.manga(f"Unrelated long title number {n}", alt_titles=[f"Dragón {n}", "Other"], tags=("fantasy",))
    f.manga("Moon River", alt_titles=[])


def ids(rows) -> list:
    return [m.pk for m in rows]


@on_postgres
@pytest.mark.parametrize(("q", "tag"), [("dragon", None), ("dragon", "fantasy"), ("RAGÓN", None), ("o", None)])
def test_every_slice_of_a_search_is_the_same_rows_as_the_full_ranking(dragons, q, tag):
    full = ids(manga_list(q=q, tag=tag))
    assert len(full) > 5
    for start, stop in [(0, 5), (5, 10), (3, 4), (len(full) - 4, len(full)), (0, len(full) + 10)]:
        assert ids(manga_list(q=q, tag=tag)[start:stop]) == full[start:stop], (start, stop)


def page_sql(q: str, stop: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_manga")  # the library's size decides whether the cut pays off
    with CaptureQueriesContext(connection) as queries:
        ids(manga_list(q=q)[:stop])
    return queries.captured_queries[-2]["sql"]  # the last one prefetches tags


@on_postgres
def test_a_page_of_a_common_word_reads_only_the_candidates_of_the_two_length_walks(dragons):
    sql = page_sql("dragon", 5)
    assert "UNION ALL" in sql and sql.count("LIMIT 5") == 3  # each walk stops after the page


@on_postgres
def test_a_rare_word_is_ranked_whole_without_the_walks(dragons):
    assert "UNION" not in page_sql("moon", 5)


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("stop", "library", "threshold"), [(50, 100_000, 2237), (50, 1_000_000, 7072), (5, 37, 14), (5, 0, 3), (1, 1, 2)]
)
def test_the_cut_pays_off_once_matches_squared_reach_the_page_times_the_library(stop, library, threshold):
    assert cut_threshold(stop, library) == threshold


@on_postgres
def test_reordering_a_search_gives_up_the_cut(dragons):
    by_title = manga_list(q="dragon").order_by("title", "id")
    assert ids(by_title[:5]) == ids(list(by_title)[:5])


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("cap", [7, 0])
def test_past_the_count_cap_the_count_is_a_lower_bound_and_every_page_is_reachable(
    alice_client, dragons, settings, cap
):
    settings.CATALOG_SEARCH_COUNT_CAP = cap
    full = [m.title for m in manga_list(q="dragon")]
    assert len(full) == 24 + (12 if connection.vendor == "postgresql" else 0)
    seen, url, pages = [], "/api/v1/mangas/?q=dragon&page_size=5", 0
    while url:
        body = alice_client.get(url).json()
        assert (body["count"], body["count_exact"]) == ((7, False) if cap else (len(full), True))
        seen += [m["title"] for m in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == full and pages == -(-len(full) // 5)
    beyond = alice_client.get("/api/v1/mangas/", {"q": "dragon", "page_size": 5, "page": pages + 1})
    assert beyond.status_code == 404
    for bad in ("0", "-1", "two"):
        assert alice_client.get("/api/v1/mangas/", {"q": "dragon", "page": bad}).status_code == 404


@pytest.mark.sqlite_ok
def test_a_count_within_the_cap_and_an_unsearched_list_are_exact(alice_client, dragons, settings):
    settings.CATALOG_SEARCH_COUNT_CAP = 7
    body = alice_client.get("/api/v1/mangas/", {"q": "moon"}).json()
    assert (body["count"], body["count_exact"], len(body["results"])) == (1, True, 1)
    body = alice_client.get("/api/v1/mangas/", {"page_size": 5}).json()
    assert (body["count"], body["count_exact"]) == (37, True)
    settings.CATALOG_SEARCH_COUNT_CAP = 24 + (12 if connection.vendor == "postgresql" else 0)
    body = alice_client.get("/api/v1/mangas/", {"q": "dragon"}).json()
    assert (body["count"], body["count_exact"]) == (settings.CATALOG_SEARCH_COUNT_CAP, True)


@pytest.mark.sqlite_ok
def test_the_schema_documents_count_exact(anon_client, db):
    schema = anon_client.get("/api/schema/", {"format": "json"}).json()
    listing = schema["components"]["schemas"]["PaginatedMangaListList"]
    assert listing["properties"]["count_exact"]["type"] == "boolean"
