"""A `followed` source downloads a series some user bookmarked on any of its mangas: a series' bookmark sits on
its lead, and the copy downloaded may be another source's."""

from __future__ import annotations

import pytest

from catalog import series as service
from catalog.bookmarks import create_bookmark
from catalog.models import Bookmark, Chapter, Manga
from crawler import download_policy
from testsupport import api_factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def test_a_bookmark_on_the_lead_follows_every_copy_of_its_series_and_no_other(alice):
    alpha, beta = f.source("alpha"), f.source("beta")
    first, second, stranger = f.manga("Tide", src=alpha), f.manga("Tide", src=beta), f.manga("Harbour", src=beta)
    copy_chapter, stranger_chapter = f.chapter(second, 2, src=beta), f.chapter(stranger, 1, src=beta)
    service.merge_series(first.series, [second.series], via="test")
    create_bookmark(user=alice, manga=Manga.objects.get(pk=second.pk))
    assert Bookmark.objects.get().manga_id == first.pk
    assert download_policy.is_followed(Manga.objects.get(pk=second.pk))
    assert not download_policy.is_followed(stranger)
    chapters = Chapter.objects.filter(pk__in=[copy_chapter.pk, stranger_chapter.pk])
    assert list(download_policy.followed(chapters)) == [copy_chapter]
    assert list(download_policy.not_followed(chapters)) == [stranger_chapter]
