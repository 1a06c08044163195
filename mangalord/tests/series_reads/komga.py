"""The series journey through the Komga API, as Mihon sees it: one entry per real series, each key once, one progress.

Called from the two-site journey once its sources are crawled, grouped and
downloaded, with a reader's credentials; every answer is validated against
Komga's OpenAPI description.
"""

from __future__ import annotations

from typing import Any

from django.test import Client

from catalog.models import Chapter, Manga
from catalog.series_chapters import key_of
from reader.tests.conftest import basic
from reader.tests.komga_schema import assert_komga_valid

SERIES = ["The Tide", "Sōsō no Frieren", "Revenge", "Revenge", "Hikari no Ou", "King of Light", "Restart"]


def _get(client: Client, auth: dict[str, str], url: str, path: str) -> Any:
    response = client.get(url, **auth)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    body = response.json()
    assert_komga_valid(path, "get", body)
    return body


def check_komga(username: str, password: str) -> None:
    """The 7 series listed once each, their books the union of their copies' chapters, a copy's read shown."""
    client, auth = Client(), basic(username, password)
    listed = _get(client, auth, "/api/v1/series?unpaged=true", "/api/v1/series")["content"]
    assert sorted(s["name"] for s in listed) == sorted(SERIES)
    books_of: dict[str, list[dict[str, Any]]] = {}
    for series in listed:
        url = f"/api/v1/series/{series['id']}/books?unpaged=true"
        books = _get(client, auth, url, "/api/v1/series/{seriesId}/books")["content"]
        chapters = {str(c.id): c for c in Chapter.objects.filter(pk__in=[b["id"] for b in books])}
        keys = [key_of(chapters[b["id"]]) for b in books]
        everything = Chapter.objects.filter(manga__series__mangas=series["id"], dropped_at__isnull=True)
        assert len(keys) == len(set(keys)) == len({key_of(c) for c in everything}), series["name"]
        assert [b["number"] for b in books] == list(range(1, len(books) + 1)), series["name"]
        assert {b["seriesId"] for b in books} == {series["id"]}
        books_of[series["id"]] = books

    (tide,) = [s for s in listed if s["name"] == "The Tide"]
    tide_books = books_of[tide["id"]]
    assert [b["metadata"]["numberSort"] for b in tide_books] == [1.0, 2.0, 3.0, 4.0]
    copies = Manga.objects.filter(series__mangas=tide["id"]).exclude(pk=tide["id"])
    (copy,) = copies
    assert _get(client, auth, f"/api/v1/series/{copy.id}", "/api/v1/series/{seriesId}")["id"] == tide["id"]

    # A book of the other copy, not the one shown, read through Komga: the series shows its chapter read.
    shown = {b["id"] for b in tide_books}
    other = Chapter.objects.filter(manga=copy, number=3).exclude(pk__in=shown).get()
    before = _get(client, auth, f"/api/v1/series/{tide['id']}", "/api/v1/series/{seriesId}")["booksReadCount"]
    read = client.patch(
        f"/api/v1/books/{other.id}/read-progress", {"completed": True}, content_type="application/json", **auth
    )
    assert read.status_code == 204
    after = _get(client, auth, f"/api/v1/series/{copy.id}", "/api/v1/series/{seriesId}")
    assert after["booksReadCount"] == before + 1
    third = _get(client, auth, f"/api/v1/books/{tide_books[2]['id']}", "/api/v1/books/{bookId}")
    assert third["readProgress"]["completed"] is True
