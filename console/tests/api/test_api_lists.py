"""Dead-jobs, history and backlog lists: labels, search, order, pagination, query counts and indexes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.models import Manga
from console.control import backlog
from crawler.payloads import MetadataPass, SyncChapterContent, SyncChapterList, SyncManga
from jobs.models import Job
from testsupport import api_factories as f

BASE = "/api/v1/admin/crawler/"


@pytest.fixture
def client(staff) -> APIClient:
    return f.api_client(staff)  # no session lookups: the query counts are the list's own


@pytest.fixture
def library(db):
    src = f.source("demo")
    berserk = f.manga("Berserk", src=src)
    return {"src": src, "berserk": berserk, "ch": f.chapter(berserk, "10.5", src=src)}


def rows(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.mark.sqlite_ok
def test_dead_jobs_label_sync_manga_rows_from_their_payload(client, library):
    f.dead_sync_manga("Vagabond", url="http://demo.example/m/vaga", key="vaga")
    f.dead_sync_manga("", url="http://demo.example/m/no-title", key="nt")
    f.dead_sync_manga("", url="", key="bare-key")
    content = f.dead_content_job(library["ch"])
    analyze = f.dead_analyze_job(f.page(library["ch"], 4))
    labels = {r["label"] for r in rows(client.get(BASE + "dead-jobs/"))}
    assert labels == {
        "Vagabond",
        "http://demo.example/m/no-title",
        "bare-key",
        "Berserk — chapter 10.5",
        "Berserk — chapter 10.5 page 4",
    }
    by_id = {r["id"]: r for r in rows(client.get(BASE + "dead-jobs/"))}
    assert by_id[str(content.id)]["manga"] == {"id": str(library["berserk"].id), "title": "Berserk"}
    assert by_id[str(analyze.id)]["manga"]["title"] == "Berserk"


@pytest.mark.sqlite_ok
def test_an_extras_dead_job_is_labelled_by_the_extras_name_not_a_chapter_number(client, library):
    side_story = f.chapter(library["berserk"], 3, src=library["src"], kind="extra", title="Side Story 3: Guts")
    f.dead_content_job(side_story)
    f.dead_analyze_job(f.page(side_story, 2))
    labels = {r["label"] for r in rows(client.get(BASE + "dead-jobs/"))}
    assert labels == {"Berserk — Side Story 3", "Berserk — Side Story 3 page 2"}


@pytest.mark.sqlite_ok
def test_job_whose_manga_row_is_gone_still_lists_with_a_fallback_label(client, library):
    job = f.dead_content_job(library["ch"])
    Manga.objects.all().delete()  # cascades to chapters; the job keeps its dangling ids
    [row] = rows(client.get(BASE + "dead-jobs/"))
    assert row["id"] == str(job.id)
    assert row["manga"] is None
    assert row["label"] == "demo"


@pytest.mark.sqlite_ok
def test_search_matches_payload_title_for_sync_manga_and_manga_title_otherwise(client, library):
    vaga = f.dead_sync_manga("Vagabond")
    content = f.dead_content_job(library["ch"])
    # A sync_manga row is found by its payload title only, never through a manga join.
    assert [r["id"] for r in rows(client.get(BASE + "dead-jobs/", {"q": "vagab"}))] == [str(vaga.id)]
    assert [r["id"] for r in rows(client.get(BASE + "dead-jobs/", {"q": "BERSERK"}))] == [str(content.id)]
    assert [r["id"] for r in rows(client.get(BASE + "history/", {"q": "vagabond"}))] == [str(vaga.id)]
    assert rows(client.get(BASE + "dead-jobs/", {"q": "nothing like it"})) == []


@pytest.mark.sqlite_ok
def test_dead_jobs_newest_first_and_only_dead(client, library):
    now = timezone.now()
    old = f.dead_sync_manga("Old")
    new = f.dead_sync_manga("New")
    Job.objects.filter(id=old.id).update(updated_at=now - timedelta(hours=2))
    Job.objects.filter(id=new.id).update(updated_at=now - timedelta(hours=1))
    f.job(MetadataPass(source_id="demo"))  # pending: not in the dead list
    assert [r["id"] for r in rows(client.get(BASE + "dead-jobs/"))] == [str(new.id), str(old.id)]


@pytest.mark.sqlite_ok
def test_history_filters_by_state_and_kind(client, library):
    dead = f.dead_sync_manga("Dead One")
    pending = f.job(MetadataPass(source_id="demo"))
    assert {r["id"] for r in rows(client.get(BASE + "history/"))} == {str(dead.id), str(pending.id)}
    assert [r["id"] for r in rows(client.get(BASE + "history/", {"state": "pending"}))] == [str(pending.id)]
    assert [r["id"] for r in rows(client.get(BASE + "history/", {"kind": "sync_manga"}))] == [str(dead.id)]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("route", "params"),
    [
        ("history/", {"state": "zombie"}),
        ("history/", {"kind": "mine_bitcoin"}),
        ("dead-jobs/", {"q": "x" * 201}),
        ("dead-jobs/", {"page": "0"}),
        ("backlog/", {"page": "0"}),
        ("backlog/", {"page_size": "1000"}),
        ("backlog/", {"page": "abc"}),
    ],
)
def test_bad_list_parameters_are_4xx(client, library, route, params):
    response = client.get(BASE + route, params)
    assert 400 <= response.status_code < 500
    assert response.json()


@pytest.mark.sqlite_ok
def test_backlog_lists_active_jobs_in_lease_order_and_mangas_missing_covers(client, library):
    later = f.job(MetadataPass(source_id="demo"), scheduled_at=timezone.now() + timedelta(minutes=5))
    sooner = f.job(SyncChapterContent(source_id="demo", chapter_id=library["ch"].id, source_chapter_key="k"))
    f.dead_sync_manga("Dead")
    covered = f.manga("Covered", cover_state=Manga.CoverState.STORED)
    body = client.get(BASE + "backlog/").json()
    assert [r["id"] for r in body["active_jobs"]["results"]] == [str(sooner.id), str(later.id)]
    assert body["active_jobs"]["count"] == 2
    cover_ids = {r["id"] for r in body["missing_covers"]["results"]}
    assert str(library["berserk"].id) in cover_ids and str(covered.id) not in cover_ids
    searched = client.get(BASE + "backlog/", {"q": "berserk"}).json()
    assert [r["id"] for r in searched["active_jobs"]["results"]] == [str(sooner.id)]
    assert [r["title"] for r in searched["missing_covers"]["results"]] == ["Berserk"]


@pytest.fixture
def crowded(library):
    """Sixty dead and sixty active jobs of every labelled kind, across several mangas."""
    src = library["src"]
    for n in range(20):
        m = f.manga(f"Crowd {n}", src=src)
        ch = f.chapter(m, n, src=src)
        f.dead_content_job(ch)
        f.dead_analyze_job(f.page(ch))
        f.dead_sync_manga(f"Crowd sync {n}")
        f.job(SyncChapterContent(source_id="demo", chapter_id=ch.id, source_chapter_key=f"a{n}"))
        f.job(SyncChapterList(source_id="demo", manga_id=m.id, source_manga_key=f"m{n}"))
        f.job(SyncManga(source_id="demo", source_manga_key=f"new{n}", url="", title=f"New {n}"))


# count + page, per list (the backlog has two lists), and whether the search names more mangas than it looks
# at (backlog.search_is_cut). `matching`: rows the search finds.
@pytest.mark.parametrize(
    ("route", "queries", "matching"), [("dead-jobs/", 3, 60), ("history/", 3, 100), ("backlog/", 5, 40)]
)
def test_list_query_count_does_not_grow_with_page_size(
    client, crowded, django_assert_num_queries, route, queries, matching
):
    for page_size in (1, 10, 50):
        with django_assert_num_queries(queries):
            response = client.get(BASE + route, {"page_size": page_size, "q": "crowd"})
        assert response.status_code == 200
        body = response.json()
        results = body["results"] if "results" in body else body["active_jobs"]["results"]
        assert len(results) == min(page_size, matching)


def _plan(queryset) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # tiny test tables would otherwise be scanned
        try:
            return queryset.explain()
        finally:
            cursor.execute("SET LOCAL enable_seqscan = on")


def test_dead_list_and_missing_covers_are_served_by_their_partial_indexes(library):
    if connection.vendor != "postgresql":
        pytest.skip("partial-index plans are a PostgreSQL matter")
    assert "crawler_jobs_dead_idx" in _plan(backlog.dead_jobs()[:50])
    assert "mangas_missing_cover_idx" in _plan(backlog.missing_covers()[:50])
