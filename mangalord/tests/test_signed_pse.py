"""OPDS-PSE pages by signed URL: the feed's stream link is signed for its reader, and the page answered ahead of
Django (mangalord/signed_routes.py) is the one `/opds/chapters/<id>/pages/<n>/` gives, progress included.

The lean handler's database work runs in its worker threads, so these tests commit their rows.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client

from catalog import series as service
from catalog.serving.signing import PSE_PREFIX, verify_pse
from mangalord.signed_routes import Asked, SignedRoutes, pse_answer
from mangalord.tests.test_signed_routes import SAME, Fallback, call
from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

pytestmark = [pytest.mark.sqlite_ok, pytest.mark.django_db(transaction=True)]
ALICE = basic("alice", PASSWORD)
STREAM_LINK = re.compile(r'href="([^"]+)"[^>]*rel="http://vaemendis.net/opds-pse/stream"|'
                         r'rel="http://vaemendis.net/opds-pse/stream"[^>]*href="([^"]+)"')  # fmt: skip


@pytest.fixture
def app():
    pool = ThreadPoolExecutor(2)
    yield SignedRoutes(Fallback(), pool)
    pool.shutdown()


@pytest.fixture
def chapter():
    src = f.source()
    return f.chapter(f.manga(src=src), 1, src=src, pages=3, width=60)


def stream_link(client: Client, chapter, **auth) -> str:
    feed = client.get(f"/opds/mangas/{chapter.manga_id}/", **auth)
    assert feed.status_code == 200
    found = STREAM_LINK.search(feed.content.decode())
    return (found.group(1) or found.group(2)).replace("&amp;", "&")


def page_url(link: str, number: int, width: str = "") -> str:
    path = link.removeprefix("http://testserver")
    return path.replace("{pageNumber}", str(number)).replace("{maxWidth}", width)


def progress(user, chapter):
    row = ReadProgress.objects.filter(user=user, chapter=chapter).first()
    return (row.last_page, row.completed) if row else None


def test_the_feed_signs_the_stream_link_for_its_reader(alice, chapter):
    link = stream_link(Client(), chapter, **ALICE)
    assert link.startswith(f"http://testserver{PSE_PREFIX}") and link.endswith("/{pageNumber}/?maxWidth={maxWidth}")
    assert f"/{alice.pk}/{chapter.id}/" in link


def test_an_anonymous_reader_of_an_open_library_keeps_the_ordinary_link(chapter, settings):
    settings.LIBRARY_PUBLIC_READ = True
    link = stream_link(Client(), chapter)
    assert link == f"http://testserver/opds/chapters/{chapter.id}/pages/{{pageNumber}}/?maxWidth={{maxWidth}}"


@pytest.mark.parametrize("width", ["", "30"], ids=["as stored", "scaled"])
def test_a_signed_page_is_the_ordinary_routes_answer(app, alice, chapter, width):
    link = stream_link(Client(), chapter, **ALICE)
    query = f"?maxWidth={width}" if width else ""
    django = Client().get(f"/opds/chapters/{chapter.id}/pages/1/{query}", **ALICE)
    ReadProgress.objects.all().delete()
    status, headers, body = call(app, page_url(link, 1, width))
    assert status == django.status_code == 200 and body == django.content
    assert {k: headers.get(k) for k in SAME} == {k: django.headers.get(k) for k in SAME}
    assert app.app.paths == []


def test_a_page_fetch_moves_progress_forward_only(app, alice, chapter):
    link = stream_link(Client(), chapter, **ALICE)
    assert call(app, page_url(link, 1))[0] == 200
    assert progress(alice, chapter) == (2, False)
    assert call(app, page_url(link, 0))[0] == 200
    assert progress(alice, chapter) == (2, False), "a preloaded later page is not lost"
    assert call(app, page_url(link, 2), method="HEAD")[0] == 200
    assert progress(alice, chapter) == (2, False), "a HEAD reads nothing"
    assert call(app, page_url(link, 2))[0] == 200
    assert progress(alice, chapter) == (3, True)


def test_the_last_page_completes_the_chapter_in_every_copy_of_the_series(app, alice):
    alpha, beta = f.source("alpha"), f.source("beta")
    a, b = f.manga("Restart", src=alpha), f.manga("Restart", src=beta)
    mine, twin = f.chapter(a, 2, src=alpha, pages=2), f.chapter(b, 2, src=beta, pages=4)
    service.merge_series(a.series, [b.series], via="test")
    link = stream_link(Client(), mine, **ALICE)
    assert call(app, page_url(link, 0))[0] == 200
    assert progress(alice, twin) is None, "a page read part-way stays with its copy"
    assert call(app, page_url(link, 1))[0] == 200
    assert progress(alice, mine) == (2, True) and progress(alice, twin) == (4, True)


def test_one_lookup_and_one_upsert_a_page(alice, chapter, django_assert_num_queries):
    link = stream_link(Client(), chapter, **ALICE)
    path = page_url(link, 1).split("?")[0]
    signed = verify_pse(path, _key(), _now(path))
    asked = Asked("GET", path, "", {"host": "testserver"}, False)
    with django_assert_num_queries(2):
        assert pse_answer(asked, signed).status == 200
    assert progress(alice, chapter) == (2, False)


def test_a_url_for_one_chapter_or_user_opens_no_other(app, alice, chapter, django_user_model):
    other = f.chapter(chapter.manga, 2, src=chapter.source, pages=1)
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    link = page_url(stream_link(Client(), chapter, **ALICE), 0)
    assert call(app, link.replace(str(chapter.id), str(other.id)))[0] == 403
    assert call(app, link.replace(f"/{alice.pk}/", f"/{bob.pk}/"))[0] == 403
    assert not ReadProgress.objects.exists()


@pytest.mark.parametrize(
    ("number", "width", "status"),
    [(3, "", 404), (99_999, "", 404), (0, "12", 400), (0, "wide", 400)],
    ids=["past the last page", "far past", "too narrow", "not a number"],
)
def test_a_missing_page_or_bad_width_changes_nothing(app, alice, chapter, number, width, status):
    link = stream_link(Client(), chapter, **ALICE)
    assert call(app, page_url(link, number, width))[0] == status
    assert not ReadProgress.objects.exists()


def test_a_dropped_chapter_is_not_found(app, alice, chapter):
    link = stream_link(Client(), chapter, **ALICE)
    type(chapter).objects.filter(pk=chapter.pk).update(dropped_at="2026-01-01T00:00:00Z")
    assert call(app, page_url(link, 0))[0] == 404


def test_a_deleted_reader_is_not_found_and_gets_no_progress(app, alice, chapter):
    link = stream_link(Client(), chapter, **ALICE)
    alice.delete()
    assert call(app, page_url(link, 0))[0] == 404
    assert not ReadProgress.objects.exists()


def _key() -> str:
    from django.conf import settings

    return settings.SERVE_SIGNING_KEY


def _now(path: str) -> int:
    return int(path[len(PSE_PREFIX) :].split("/")[1]) - 60


def test_under_another_server_django_answers_and_records_the_same(alice, chapter):
    link = stream_link(Client(), chapter, **ALICE)
    answer = Client().get(page_url(link, 1))
    assert answer.status_code == 200 and progress(alice, chapter) == (2, False)
    forged = page_url(link, 1).replace(f"/{alice.pk}/", f"/{alice.pk + 1}/")
    assert Client().get(forged).status_code == 403
