"""Bookmarks CRUD for the signed-in user only, the hook through the API, and token authentication."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from catalog.models import Bookmark
from jobs.models import Job
from testsupport import api_factories as f

URL = "/api/v1/bookmarks/"


@pytest.fixture
def library(db):
    src = f.source("demo")
    berserk, other = f.manga("Berserk", src=src), f.manga("Other", src=src)
    return {
        "berserk": berserk,
        "ch1": f.chapter(berserk, 1, src=src),
        "ch2": f.chapter(berserk, 2, src=src),
        "other": other,
        "other_ch": f.chapter(other, 1, src=src),
    }


def state() -> tuple[list, int]:
    return sorted(Bookmark.objects.values_list("user_id", "manga_id", "chapter_id"), key=str), Job.objects.count()


@pytest.mark.sqlite_ok
def test_create_list_move_and_delete_own_bookmarks(alice_client, alice, library):
    created = alice_client.post(URL, {"manga": str(library["berserk"].id)}, format="json")
    assert created.status_code == 201
    assert Job.objects.filter(kind="sync_chapter_content").count() == 2  # the hook ran
    chapter_level = alice_client.post(
        URL, {"manga": str(library["berserk"].id), "chapter": str(library["ch1"].id)}, format="json"
    )
    assert chapter_level.status_code == 201  # manga- and chapter-level bookmarks coexist
    listed = alice_client.get(URL).json()
    assert listed["count"] == 2
    moved = alice_client.patch(
        f"{URL}{chapter_level.json()['id']}/", {"chapter": str(library["ch2"].id)}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["chapter"] == str(library["ch2"].id)
    assert alice_client.delete(f"{URL}{created.json()['id']}/").status_code == 204
    assert list(Bookmark.objects.values_list("chapter_id", flat=True)) == [library["ch2"].id]


@pytest.mark.sqlite_ok
def test_other_users_bookmarks_are_invisible(alice_client, staff, library):
    theirs = Bookmark.objects.create(user=staff, manga=library["berserk"])
    assert alice_client.get(URL).json()["count"] == 0
    detail = f"{URL}{theirs.id}/"
    assert alice_client.get(detail).status_code == 404
    assert alice_client.patch(detail, {"chapter": str(library["ch1"].id)}, format="json").status_code == 404
    assert alice_client.delete(detail).status_code == 404
    theirs.refresh_from_db()
    assert theirs.chapter_id is None


@pytest.mark.sqlite_ok
def test_anonymous_gets_401_on_bookmarks(anon_client, library):
    assert anon_client.get(URL).status_code == 401
    assert anon_client.post(URL, {"manga": str(library["berserk"].id)}, format="json").status_code == 401
    assert state() == ([], 0)


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"manga": "not-a-uuid"},
        {"manga": "unknown"},
        {"manga": "berserk", "chapter": "other_ch"},  # a chapter of another manga
        {"manga": "berserk", "chapter": "unknown"},
        {"manga": "berserk", "chapter": 5},
        {"manga": "berserk", "dup": True},  # already bookmarked
    ],
    ids=lambda b: repr(b)[:50],
)
def test_bad_bookmark_input_is_400_and_changes_nothing(alice_client, alice, library, body):
    Bookmark.objects.create(user=alice, manga=library["berserk"])
    names = {"berserk": library["berserk"].id, "other_ch": library["other_ch"].id, "unknown": uuid.uuid4()}
    body = {k: str(names.get(v, v)) if k in ("manga", "chapter") and isinstance(v, str) else v for k, v in body.items()}
    body.pop("dup", None)
    before = state()
    response = alice_client.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()
    assert state() == before


@pytest.mark.sqlite_ok
def test_bookmark_cannot_move_to_another_manga_or_onto_a_twin(alice_client, alice, library):
    manga_level = Bookmark.objects.create(user=alice, manga=library["berserk"])
    on_ch1 = Bookmark.objects.create(user=alice, manga=library["berserk"], chapter=library["ch1"])
    before = state()
    assert (
        alice_client.patch(f"{URL}{manga_level.id}/", {"manga": str(library["other"].id)}, format="json").status_code
        == 400
    )
    assert alice_client.patch(f"{URL}{on_ch1.id}/", {"chapter": None}, format="json").status_code == 400
    assert state() == before


@pytest.mark.sqlite_ok
def test_token_from_the_auth_endpoint_authenticates_api_calls(alice, library):
    client = APIClient()
    bad = client.post("/api/v1/auth/token/", {"username": "alice", "password": "wrong"}, format="json")
    assert bad.status_code == 400
    good = client.post("/api/v1/auth/token/", {"username": "alice", "password": "alice-password"}, format="json")
    assert good.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {good.json()['token']}")
    assert client.post(URL, {"manga": str(library["berserk"].id)}, format="json").status_code == 201
    assert Bookmark.objects.get().user == alice
