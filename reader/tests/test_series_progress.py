"""One series, several sources, through the readers' real HTTP endpoints: the library API lists one entry per
series with its chapters keyed across sources, and reading a chapter from one source marks the same chapter read
in every copy (REST progress, Komga book progress and Mihon's tracker, validated against Komga's OpenAPI)."""

from __future__ import annotations

import pytest
from django.test import Client

from catalog import series as service
from catalog.models import Chapter
from reader.models import ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from reader.tests.komga_schema import assert_komga_valid

ALICE = basic("alice", PASSWORD)
pytestmark = pytest.mark.sqlite_ok


@pytest.fixture
def merged(db, alice, settings):
    """ "Restart" on two sites (alpha numbers per volume for volume 2, beta prints the same), merged into one series;
    a different "Restart" on beta stays apart."""
    settings.SERIES_SOURCE_PRIORITY = ["alpha", "beta"]
    alpha, beta = f.source("alpha"), f.source("beta")
    a = f.manga("Restart", src=alpha, authors=["Ito Jun"])
    b = f.manga("Restart", src=beta, authors=["Jun Ito"])
    other = f.manga("Restart", src=beta, authors=["Someone Else"])
    chapters = {
        "a1": f.chapter(a, 1, src=alpha, pages=3),
        "a2": f.chapter(a, 2, src=alpha, pages=3),
        "av2c1": f.chapter(a, 1, src=alpha, pages=2, volume=2),
        "b1": f.chapter(b, 1, src=beta, pages=4),
        "b2": f.chapter(b, 2, src=beta, pages=4),
        "b3": f.chapter(b, 3, src=beta, pages=4),
        "bv2c1": f.chapter(b, 1, src=beta, pages=5, volume=2),
        "other2": f.chapter(other, 2, src=beta, pages=2),
    }
    service.merge_series(a.series, [b.series], via="test")
    return {"a": a, "b": b, "other": other, **chapters}


def _komga(client: Client, url: str, path: str) -> dict:
    response = client.get(url, **ALICE)
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert_komga_valid(path, "get", body)
    return body


def _completed(user):
    return set(ReadProgress.objects.filter(user=user, completed=True).values_list("chapter_id", flat=True))


def test_the_library_lists_one_entry_per_series_with_chapters_keyed_across_sources(alice_client, merged):
    listed = alice_client.get("/api/v1/library/series/").json()["results"]
    # Two series titled alike (one merged from two sites, one that only shares the title), ordered by id.
    assert sorted((s["title"], [m["source"] for m in s["mangas"]]) for s in listed) == [
        ("Restart", ["alpha", "beta"]),
        ("Restart", ["beta"]),
    ]
    detail = alice_client.get(f"/api/v1/library/series/{merged['a'].series_id}/").json()
    assert [(c["key"], c["source"], [x["source"] for x in c["alternates"]]) for c in detail["chapters"]] == [
        ("v2 c1", "alpha", ["beta"]),
        ("c1", "alpha", ["beta"]),
        ("c2", "alpha", ["beta"]),
        ("c3", "beta", []),
    ]
    assert detail["chapters"][0]["chapter"]["id"] == str(merged["av2c1"].id)


def test_strangers_see_no_series(client, merged):
    assert client.get("/api/v1/library/series/").status_code == 401
    assert client.get(f"/api/v1/library/series/{merged['a'].series_id}/").status_code == 401


def test_reading_a_chapter_from_one_source_marks_it_read_in_every_copy(client, alice_client, alice, staff, merged):
    # Finished on alpha through the REST API: beta's chapter 2 is read too, in Komga's answer for it.
    put = alice_client.put(f"/api/v1/progress/{merged['a2'].id}/", {"last_page": 3}, format="json")
    assert put.status_code == 200 and put.json()["completed"] is True
    book = _komga(client, f"/api/v1/books/{merged['b2'].id}", "/api/v1/books/{bookId}")
    assert book["readProgress"]["completed"] is True and book["readProgress"]["page"] == 4
    assert _completed(alice) == {merged["a2"].id, merged["b2"].id}, "the other 'Restart' is another series"
    assert not ReadProgress.objects.filter(user=staff).exists()

    # Mihon's tracker on beta's copy: what it marks there (every main chapter numbered up to 1, in every volume:
    # the tracker's known limit, docs/chapters.md) is marked in alpha's copy too, and chapter 3 is left alone.
    tracker = f"/api/v2/series/{merged['b'].id}/read-progress/tachiyomi"
    put = client.put(tracker, {"lastBookNumberSortRead": 1.0}, content_type="application/json", **ALICE)
    assert put.status_code == 204
    assert _completed(alice) == {merged[k].id for k in ("a1", "b1", "av2c1", "bv2c1", "a2", "b2")}

    # Komga's "mark unread" on beta forgets alpha's copy too.
    assert client.delete(f"/api/v1/books/{merged['b2'].id}/read-progress", **ALICE).status_code == 204
    assert merged["a2"].id not in _completed(alice) and merged["b2"].id not in _completed(alice)


def test_a_page_read_part_way_stays_with_its_copy_and_unread_follows_everywhere(alice_client, alice, merged):
    alice_client.put(f"/api/v1/progress/{merged['bv2c1'].id}/", {"last_page": 2}, format="json")
    assert not ReadProgress.objects.filter(user=alice, chapter=merged["av2c1"]).exists()
    alice_client.put(f"/api/v1/progress/{merged['bv2c1'].id}/", {"last_page": 5}, format="json")
    assert ReadProgress.objects.get(user=alice, chapter=merged["av2c1"]).completed
    alice_client.put(f"/api/v1/progress/{merged['bv2c1'].id}/", {"last_page": 1}, format="json")
    assert not ReadProgress.objects.get(user=alice, chapter=merged["av2c1"]).completed


def test_after_a_split_reading_one_copy_no_longer_marks_the_other(alice_client, alice, merged):
    service.split_mangas([merged["b"]], via="test")
    alice_client.put(f"/api/v1/progress/{merged['a2'].id}/", {"last_page": 3}, format="json")
    assert _completed(alice) == {merged["a2"].id}


def test_marking_chapters_of_several_copies_read_marks_each_ones_copies(alice, merged):
    """A merged series' shown chapters come from several copies (here a1 and b3): each one's twins in the other
    copy are completed too, not left out because their manga is among the chapters marked."""
    from reader.progress import mark_read, stored_pages

    shown = Chapter.objects.filter(pk__in=[merged["a1"].pk, merged["b3"].pk]).annotate(stored_pages=stored_pages())
    assert mark_read(user=alice, chapters=list(shown)) == 2
    done = set(ReadProgress.objects.filter(user=alice, completed=True).values_list("chapter_id", flat=True))
    assert done == {merged["a1"].pk, merged["b3"].pk, merged["b1"].pk}  # b1 is a1's copy; b3 has none in alpha
