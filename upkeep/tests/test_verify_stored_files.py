"""Orphans beyond pages/: stray covers and stray scaled copies are found and deleted after confirmation,
while a live cover and the live copies of a page and of a cover are never reported, on disk and on S3.

The layout is the one the crawler and the reader write: covers under
`covers/<manga id>/` (crawler.passes.pipeline), copies named by
`catalog.copies.copy_name` (reader.images).
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from catalog.copies import copy_name
from catalog.models import Manga, Page
from reader.tests.factories import image_bytes
from upkeep.models import VerifyFinding, VerifyRun
from upkeep.tests.library import damaged_library, verify_stopping_after_every_batch
from upkeep.verify import listing, repairs, stored_files
from upkeep.verify import run as verify_run
from upkeep.verify.run import Options, run_verify, start_or_resume

CHAPTER = uuid.UUID("0b9f3f0e-6a43-4a4e-9d55-1d0c8b1f4c11")


# --- the layout, pure ---------------------------------------------------------------------------------------


def test_a_copys_key_leads_back_to_its_originals_stem_and_owner():
    copy = copy_name(f"pages/{CHAPTER}/ab12.png", "page", 800, "webp")
    assert copy == f"scaled/pages/{CHAPTER}/ab12-page-w800.webp"
    assert stored_files.copy_original(copy) == f"pages/{CHAPTER}/ab12"
    assert stored_files.owner(copy) == ("pages", CHAPTER)
    assert stored_files.owner(copy_name(f"covers/{CHAPTER}/cd34.jpg", "thumb", None, "jpeg")) == ("covers", CHAPTER)
    assert stored_files.copy_original(f"pages/{CHAPTER}/ab12.png") is None
    assert stored_files.copy_original(f"scaled/pages/{CHAPTER}/notacopy.webp") is None
    assert stored_files.owner("scaled/pages/not-a-uuid/ab12-page-w800.webp") is None


def test_the_walk_resumes_in_the_prefix_its_cursor_is_in_and_goes_on_through_the_later_ones():
    assert stored_files.prefixes_from("") == ["covers", "pages", "scaled/covers", "scaled/pages"]
    assert stored_files.prefixes_from(f"pages/{CHAPTER}/ab12.png") == ["pages", "scaled/covers", "scaled/pages"]
    assert stored_files.prefixes_from(f"scaled/covers/{CHAPTER}/x-thumb-w0.png") == ["scaled/covers", "scaled/pages"]
    assert stored_files.prefixes_from("scaled/pages/z/z") == ["scaled/pages"]


# --- the pass and the repair on real stored files --------------------------------------------------------------


def _save(name: str) -> str:
    return default_storage.save(name, ContentFile(image_bytes()))


def library_with_covers_and_copies() -> dict[str, object]:
    """The damaged library, its manga's cover and copies of it and of a page, plus a stray cover and stray copies."""
    lib = damaged_library()
    manga = lib["manga"]
    cover = _save(f"covers/{manga.id}/{uuid.uuid4().hex}.png")
    Manga.objects.filter(id=manga.id).update(cover=cover, cover_state=Manga.CoverState.STORED)
    page = Page.objects.get(chapter=lib["chapters"][5], index=0).image.name
    gone_page = f"pages/{lib['chapters'][5].id}/{uuid.uuid4().hex}.png"  # a page deleted with its file
    other_manga = Manga.objects.create(title="No Cover Any More")
    other_cover = _save(f"covers/{other_manga.id}/{uuid.uuid4().hex}.png")
    return {
        **lib,
        "live": [
            cover,
            _save(copy_name(cover, "thumb", 300, "webp")),
            _save(copy_name(page, "page", 800, "webp")),
        ],
        "stray": [
            _save(f"covers/{manga.id}/{uuid.uuid4().hex}.png"),  # a replaced cover left behind
            other_cover,
            _save(copy_name(gone_page, "page", 800, "webp")),
            _save(copy_name(other_cover, "thumb", 300, "webp")),
        ],
    }


def _orphans(run: VerifyRun) -> list[str]:
    return sorted(run.findings.filter(kind=VerifyFinding.Kind.ORPHAN).values_list("name", flat=True))


@pytest.mark.django_db
@pytest.mark.sqlite_ok
def test_stray_covers_and_copies_are_found_and_deleted_after_confirmation_and_live_ones_never(media_storage, settings):
    settings.VERIFY_ORPHAN_GRACE_SECS = 0  # S3 cannot date a test's file back; the grace is pinned on disk below
    lib = library_with_covers_and_copies()
    run = start_or_resume(Options(full=True))
    assert run_verify(run) is True
    assert _orphans(run) == sorted([lib["orphan"], *lib["stray"]])
    stray_cover = run.findings.get(name=lib["stray"][0])
    assert stray_cover.manga_id == lib["manga"].id  # filed under its manga in the report
    run.refresh_from_db()
    assert run.counts["files"] == 8 + len(lib["live"]) + len(lib["stray"])  # the pages walk counted 8

    with pytest.raises(PermissionError, match="confirmation"):
        repairs.delete_orphans(run, confirmed=False)
    assert all(default_storage.exists(name) for name in lib["stray"])
    assert repairs.delete_orphans(run, confirmed=True).files == 1 + len(lib["stray"])
    assert not any(default_storage.exists(name) for name in lib["stray"])
    assert all(default_storage.exists(name) for name in lib["live"])


@pytest.mark.django_db
@pytest.mark.sqlite_ok
def test_a_stray_cover_a_manga_names_since_the_pass_is_kept_and_so_is_the_copy_of_it(settings):
    settings.VERIFY_ORPHAN_GRACE_SECS = 0
    lib = library_with_covers_and_copies()
    run = start_or_resume(Options(full=True))
    run_verify(run)
    adopted, copy = lib["stray"][1], lib["stray"][3]  # the other manga's cover file and its thumbnail
    Manga.objects.filter(id=adopted.split("/")[1]).update(cover=adopted)  # named again before the repair
    assert repairs.delete_orphans(run, confirmed=True).files == 1 + 2
    assert default_storage.exists(adopted) and default_storage.exists(copy)  # the copy's original is named now
    assert not default_storage.exists(lib["stray"][0]) and not default_storage.exists(lib["stray"][2])


@pytest.mark.django_db
@pytest.mark.sqlite_ok
def test_a_young_stray_cover_or_copy_is_left_alone_until_the_grace_has_passed(settings):
    settings.VERIFY_ORPHAN_GRACE_SECS = 3600
    lib = library_with_covers_and_copies()
    for name in [lib["orphan"], lib["stray"][0]]:
        old = time.time() - 7200
        os.utime(default_storage.path(name), (old, old))
    run = start_or_resume(Options(full=True))
    run_verify(run)
    assert _orphans(run) == sorted([lib["orphan"], lib["stray"][0]])


@pytest.mark.django_db
@pytest.mark.sqlite_ok
def test_a_pass_stopped_after_every_file_resumes_across_the_prefixes_and_reports_each_orphan_once(
    monkeypatch, settings, media_storage
):
    settings.VERIFY_ORPHAN_GRACE_SECS = 0
    lib = library_with_covers_and_copies()
    monkeypatch.setattr(verify_run, "BATCH", 1)
    monkeypatch.setattr(listing, "DIRECTORY_BATCH", 1)
    run, stops = verify_stopping_after_every_batch(80)
    assert stops >= 8 + 15  # a stop after every page row and every stored file, the four prefixes through
    assert VerifyRun.objects.count() == 1
    assert _orphans(run) == sorted([lib["orphan"], *lib["stray"]])
    run.refresh_from_db()
    assert run.counts["files"] == 8 + len(lib["live"]) + len(lib["stray"])


@pytest.mark.sqlite_ok
def test_files_their_folders_owners_name_are_found_without_asking_every_row_by_name(db, django_assert_max_num_queries):
    """A library that is whole: the pages and covers of a batch are read by their chapter and manga (indexed), and
    the by-name read (no index on Page.image or Manga.cover) is never made."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reader.tests import factories as f

    source = f.source()
    manga = f.manga("Whole", src=source)
    manga.cover.name = _save(f"covers/{manga.id}/cover.png")  # where the crawler keeps a cover
    manga.save(update_fields=["cover"])
    chapter = f.chapter(manga, 1, src=source)
    for index in range(3):  # where the crawler keeps a chapter's pages (crawler.passes.chapter_download)
        Page.objects.create(chapter=chapter, index=index, image=_save(f"pages/{chapter.id}/{index}.png"))
    keys = [page.image.name for page in Page.objects.filter(chapter=chapter)] + [manga.cover.name]
    with CaptureQueriesContext(connection) as queries:
        assert stored_files.named(keys) == set(keys)
    assert len(queries) == 2
    assert not any('"image" IN' in q["sql"] or '"cover" IN' in q["sql"] for q in queries)
