"""Library API: manga list/search/filters/order, detail, chapter with pages, streamed page images."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.http import StreamingHttpResponse
from django.utils import timezone
from rest_framework import serializers

from analysis.models import PageAnalysis
from catalog.api.serializers import ChapterSummarySerializer
from catalog.api.views import manga_list
from catalog.models import Chapter, Manga
from catalog.streaming import CHUNK_BYTES
from testsupport import api_factories as f
from testsupport.responses import body_of


def results(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def src(db):
    return f.source("demo")


@pytest.mark.sqlite_ok
def test_list_is_ordered_by_latest_chapter_with_never_updated_mangas_last(alice_client, src):
    now = timezone.now()
    never = f.manga("Never Updated")
    old = f.manga("Old", latest_chapter_at=now - timedelta(days=3))
    fresh = f.manga("Fresh", latest_chapter_at=now)
    titles = [r["title"] for r in results(alice_client.get("/api/v1/mangas/"))]
    assert titles == [fresh.title, old.title, never.title]


def test_first_page_is_an_index_scan_in_list_order(src):
    if connection.vendor != "postgresql":
        pytest.skip("plans are a PostgreSQL matter")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table would otherwise be scanned
        plan = manga_list()[:50].explain()
    assert "manga_latest_chapter_idx" in plan
    assert "Sort" not in plan.split("SubPlan")[0]


@pytest.mark.sqlite_ok
def test_search_tag_and_status_filters_combine(alice_client, src):
    f.manga("Berserk", tags=("dark", "seinen"), status=Manga.Status.ONGOING)
    f.manga("Berserk Prototype", tags=("seinen",), status=Manga.Status.COMPLETED)
    f.manga("Yotsuba", tags=("comedy",), status=Manga.Status.ONGOING)

    def titles(**params: str) -> list[str]:
        return sorted(r["title"] for r in results(alice_client.get("/api/v1/mangas/", params)))

    assert titles(q="berSERK") == ["Berserk", "Berserk Prototype"]
    assert titles(tag="seinen") == ["Berserk", "Berserk Prototype"]
    assert titles(tag="seinen", status="completed") == ["Berserk Prototype"]
    assert titles(q="yotsuba", tag="dark") == []
    assert titles(tag="no-such-tag") == []


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "params", [{"status": "zombie"}, {"q": "x" * 201}, {"page_size": "x"}, {"page_size": "1000"}, {"page": "99"}]
)
def test_bad_list_parameters_are_4xx(alice_client, src, params):
    f.manga("Only One")
    response = alice_client.get("/api/v1/mangas/", params)
    assert 400 <= response.status_code < 500
    assert response.json()


@pytest.mark.sqlite_ok
def test_list_rows_carry_tags_chapter_count_and_cover_link(alice_client, src, media_storage):
    m = f.manga("Berserk", tags=("dark",))
    f.chapter(m, 1, src=src)
    f.chapter(m, 2, src=src, dropped_at=timezone.now())  # no longer listed: not counted
    m.cover.save("c.png", ContentFile(f.PNG_1PX))
    [row] = results(alice_client.get("/api/v1/mangas/"))
    assert row["tags"] == ["dark"]
    assert row["chapter_count"] == 1
    assert row["cover"] == f"http://testserver/api/v1/mangas/{m.id}/cover/"
    cover = alice_client.get(row["cover"])
    assert cover.status_code == 200 and cover["Content-Type"] == "image/png"
    assert body_of(cover) == f.PNG_1PX


def test_list_runs_a_constant_number_of_queries_whatever_the_page_size(alice_client, src, django_assert_num_queries):
    for n in range(60):
        m = f.manga(f"Manga {n}", tags=(f"tag{n % 7}", "common"), latest_chapter_at=timezone.now())
        f.chapter(m, 1, src=src)
        f.chapter(m, 2, src=src)
    for page_size in (1, 10, 50):
        # count, page rows (chapter counts as a subquery), tags prefetch
        with django_assert_num_queries(3):
            rows = results(alice_client.get("/api/v1/mangas/", {"page_size": page_size, "tag": "common"}))
        assert len(rows) == page_size
        assert all(r["chapter_count"] == 2 and len(r["tags"]) == 2 for r in rows)


@pytest.mark.sqlite_ok
def test_detail_lists_chapters_ascending_and_flags_dropped_ones(alice_client, src):
    m = f.manga("Berserk")
    f.chapter(m, "10.5", src=src)
    f.chapter(m, 2, src=src, dropped_at=timezone.now())
    f.chapter(m, 1, src=src)
    body = alice_client.get(f"/api/v1/mangas/{m.id}/").json()
    assert [(c["number"], c["dropped"]) for c in body["chapters"]] == [
        ("1.00", False),
        ("2.00", True),
        ("10.50", False),
    ]
    assert body["chapter_count"] == 2


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "path",
    [
        "mangas/{uuid}/",
        "mangas/not-a-uuid/",
        "chapters/{uuid}/",
        "chapters/x/",
        "pages/{uuid}/image/",
        "pages/x/image/",
        "mangas/{uuid}/cover/",
    ],
)
def test_unknown_or_malformed_ids_are_404(alice_client, src, path):
    response = alice_client.get("/api/v1/" + path.format(uuid=uuid.uuid4()))
    assert response.status_code == 404


def test_chapter_lists_pages_in_order_with_their_analysis_in_constant_queries(
    alice_client, src, django_assert_num_queries
):
    m = f.manga("Berserk")
    ch = f.chapter(m, 1, src=src)
    pages = [f.page(ch, i) for i in (2, 0, 1, 3, 4, 5)]
    PageAnalysis.objects.create(page=pages[1], state="done", ocr_text="HELLO", tags=["sword"])
    # chapter+manga, pages+analysis, the analysis summary's two aggregates (its page count uses the prefetch)
    with django_assert_num_queries(4):
        body = alice_client.get(f"/api/v1/chapters/{ch.id}/").json()
    assert body["manga"] == {"id": str(m.id), "title": "Berserk"}
    assert [p["index"] for p in body["pages"]] == [0, 1, 2, 3, 4, 5]
    first = body["pages"][0]
    assert first["analysis"]["ocr_text"] == "HELLO"
    assert body["pages"][1]["analysis"] is None
    assert first["image"] == f"http://testserver/api/v1/pages/{pages[1].id}/image/"
    assert body["analysis_summary"]["top_tags"] == [{"tag": "sword", "count": 1}]


@pytest.mark.sqlite_ok
def test_page_image_is_streamed_from_storage_in_chunks_with_its_content_type(alice_client, src, media_storage):
    big = f.png_bytes(1200, 900) + b"\0" * (3 * CHUNK_BYTES)  # several chunks' worth
    pg = f.page(f.chapter(f.manga(), 1, src=src), data=big)
    if media_storage:  # S3: the object is in the bucket under the key prefix, nothing on local disk
        assert media_storage.keys() == [f"media/{pg.image.name}"]
    response = alice_client.get(f"/api/v1/pages/{pg.id}/image/")
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "image/png"
    assert int(response["Content-Length"]) == len(big)
    assert response["ETag"] == f'"{pg.sha256}"'
    chunks = list(response.streaming_content)
    assert len(chunks) > 1 and max(len(c) for c in chunks) <= CHUNK_BYTES
    assert b"".join(chunks) == big


@pytest.mark.sqlite_ok
def test_page_image_revalidates_with_etag(alice_client, src, media_storage):
    pg = f.page(f.chapter(f.manga(), 1, src=src))
    response = alice_client.get(f"/api/v1/pages/{pg.id}/image/", HTTP_IF_NONE_MATCH=f'"{pg.sha256}"')
    assert response.status_code == 304


@pytest.mark.sqlite_ok
def test_page_whose_file_is_missing_is_404(alice_client, src, media_storage):
    pg = f.page(f.chapter(f.manga(), 1, src=src))
    default_storage.delete(pg.image.name)
    assert alice_client.get(f"/api/v1/pages/{pg.id}/image/").status_code == 404


@pytest.mark.sqlite_ok
def test_page_with_a_non_image_content_type_is_not_served_as_html(alice_client, src):
    pg = f.page(f.chapter(f.manga(), 1, src=src), content_type="text/html")
    response = alice_client.get(f"/api/v1/pages/{pg.id}/image/")
    assert response["Content-Type"] == "image/png"


@pytest.mark.sqlite_ok
def test_library_reads_need_an_account_and_writes_are_refused(anon_client, alice_client, src):
    """Anonymous reads of mangas, chapters, covers and page images are 401 (the library is not public)."""
    m = f.manga("Private")
    for path in (f"mangas/{m.id}/", "mangas/", f"mangas/{m.id}/cover/"):
        response = anon_client.get("/api/v1/" + path)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Token"
    assert alice_client.get(f"/api/v1/mangas/{m.id}/").status_code == 200
    assert alice_client.delete(f"/api/v1/mangas/{m.id}/").status_code in (403, 405)
    assert alice_client.post("/api/v1/mangas/", {"title": "x"}, format="json").status_code in (403, 405)
    assert Manga.objects.count() == 1


def test_a_mangas_chapter_summaries_are_what_drf_would_render_field_by_field(alice_client, src):
    manga = f.manga("Berserk", src=src)
    now = timezone.now()
    f.chapter(manga, "12.5", src=src, title="The Gate", published_at=now, dropped_at=now, page_count=3)
    f.chapter(manga, 13, src=src)
    rows = alice_client.get(f"/api/v1/mangas/{manga.id}/").json()["chapters"]

    generic = ChapterSummarySerializer()
    expected = [
        serializers.ModelSerializer.to_representation(generic, c)
        for c in Chapter.objects.filter(manga=manga).order_by("number")
    ]
    assert rows == [dict(row) for row in expected]
    assert rows[0]["number"] == "12.50" and rows[0]["dropped"] is True and rows[1]["published_at"] is None
