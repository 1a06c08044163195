"""Read progress over the REST API, and what it changes: continue reading, the manga page, pse:lastRead."""

from __future__ import annotations

import pytest
from lxml import etree

from reader.models import ReadProgress
from reader.progress import continue_chapter
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

pytestmark = pytest.mark.sqlite_ok  # nothing here depends on PostgreSQL


@pytest.fixture
def book(db):
    src = f.source("demo")
    m = f.manga("Berserk", src=src)
    return m, [f.chapter(m, n, src=src, pages=3) for n in (1, 2, 3)]


def test_put_then_get_round_trips_and_completes_at_the_last_page(alice_client, alice, book):
    _, (c1, c2, _) = book
    url = f"/api/v1/progress/{c1.id}/"
    fresh = alice_client.get(url).json()
    assert (fresh["last_page"], fresh["completed"]) == (0, False)
    partial = alice_client.put(url, {"last_page": 2}, format="json").json()
    assert (partial["last_page"], partial["completed"]) == (2, False)
    done = alice_client.put(url, {"last_page": 3}, format="json").json()
    assert done["completed"] is True
    again = alice_client.put(url, {"last_page": 1}, format="json").json()  # re-reading: the client's word
    assert (again["last_page"], again["completed"]) == (1, False)
    alice_client.put(f"/api/v1/progress/{c2.id}/", {"last_page": 1}, format="json")
    listed = alice_client.get("/api/v1/progress/", {"manga": str(c1.manga_id)}).json()["results"]
    assert [r["chapter"] for r in listed] == [str(c2.id), str(c1.id)]


@pytest.mark.parametrize("body", [{"last_page": 4}, {"last_page": -1}, {"last_page": "x"}, {}])
def test_bad_progress_is_400_and_changes_nothing(alice_client, book, body):
    _, (c1, *_) = book
    response = alice_client.put(f"/api/v1/progress/{c1.id}/", body, format="json")
    assert response.status_code == 400
    assert not ReadProgress.objects.exists()


def test_unknown_chapter_is_404(alice_client, db):
    assert (
        alice_client.put(
            "/api/v1/progress/00000000-0000-0000-0000-000000000000/", {"last_page": 1}, format="json"
        ).status_code
        == 404
    )


def test_progress_is_private_to_its_user(alice_client, staff_client, book):
    _, (c1, *_) = book
    alice_client.put(f"/api/v1/progress/{c1.id}/", {"last_page": 2}, format="json")
    assert staff_client.get(f"/api/v1/progress/{c1.id}/").json()["last_page"] == 0
    assert staff_client.get("/api/v1/progress/").json()["results"] == []


def test_continue_reading_is_the_first_unfinished_chapter_at_its_last_page(alice, book):
    m, (c1, c2, c3) = book
    assert continue_chapter(alice, m)[0] == c1
    ReadProgress.objects.create(user=alice, chapter=c1, last_page=3, completed=True)
    ReadProgress.objects.create(user=alice, chapter=c2, last_page=2)
    chapter, page = continue_chapter(alice, m)
    assert (chapter, page) == (c2, 2)
    ReadProgress.objects.filter(chapter=c2).update(completed=True)
    ReadProgress.objects.create(user=alice, chapter=c3, last_page=3, completed=True)
    assert continue_chapter(alice, m) is None


def test_api_progress_shows_in_the_manga_page_and_as_pse_last_read(client, alice_client, alice, book):
    m, (c1, c2, _) = book
    alice_client.put(f"/api/v1/progress/{c1.id}/", {"last_page": 3}, format="json")
    alice_client.put(f"/api/v1/progress/{c2.id}/", {"last_page": 2}, format="json")
    feed = etree.fromstring(client.get(f"/opds/mangas/{m.id}/", **basic("alice", PASSWORD)).content)
    last = feed.xpath(
        "//*[@rel='http://vaemendis.net/opds-pse/stream']/@pse:lastRead",
        namespaces={"pse": "http://vaemendis.net/opds-pse/ns"},
    )
    assert last == ["3", "2"]
    client.force_login(alice)
    html = client.get(f"/mangas/{m.id}/").content.decode()
    assert "Page 2 of 3" in html and ">Read<" in html
    assert f"/read/{c2.id}/?page=2" in html


def test_schema_documents_the_progress_endpoints(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    detail = schema["paths"]["/api/v1/progress/{chapter_id}/"]
    assert {"get", "put"} <= set(detail)
    assert "/api/v1/progress/" in schema["paths"]
