"""A chapter becomes readable when the crawler stores its last page: notify records it, and a failure to record it
never fails the download."""

from __future__ import annotations

import pytest

from catalog.models import Chapter
from catalog.signals import chapter_ready
from notify.models import ReadyChapter
from notify.tests.conftest import crawl_content

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_downloaded_chapter_is_recorded_once_for_the_next_pass(crawled):
    assert not ReadyChapter.objects.exists()  # listed is not readable
    assert crawl_content() == 3
    recorded = ReadyChapter.objects.values_list("chapter_id", flat=True)
    assert sorted(recorded) == sorted(Chapter.objects.values_list("id", flat=True))
    assert not ReadyChapter.objects.filter(digest_pass__isnull=False).exists()


def test_a_failing_listener_never_fails_the_download(crawled):
    def broken(sender, **kwargs):
        raise RuntimeError("notification store is down")

    chapter_ready.connect(broken, dispatch_uid="test.broken")
    try:
        assert crawl_content() == 3
    finally:
        chapter_ready.disconnect(dispatch_uid="test.broken")
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {Chapter.SyncState.DONE}
    assert ReadyChapter.objects.count() == 3  # the other listener still ran
