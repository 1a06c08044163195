"""Metadata upsert: Inserted / Updated / Unchanged decided by the stored fingerprint."""

import pytest

from catalog.models import Manga, MangaSource, Source
from crawler.passes.pipeline import MetadataOutcome, upsert_metadata
from sources.base import MangaDetail, MangaMetadata, SourceMangaRef
from sources.errors import CrawlerError

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

REF = SourceMangaRef(key="blue-harbour", url="http://shelf.test/manga/blue-harbour", title="Blue Harbour")


def detail(title="Blue Harbour", tags=("drama", "sea"), status="Ongoing", cover="http://shelf.test/c.png"):
    meta = MangaMetadata(title=title, alt_titles=("Aoi Minato",), authors=("Ren",), status=status, tags=tags)
    return MangaDetail(metadata=meta, cover_url=cover, chapters=())


@pytest.fixture
def source_row():
    return Source.objects.create(id="shelf", name="Shelf", kind="html", base_url="http://shelf.test/")


def test_first_sight_inserts_manga_link_and_tags(source_row):
    manga, outcome = upsert_metadata(source_row, REF, detail())

    assert outcome is MetadataOutcome.INSERTED
    link = MangaSource.objects.get(source=source_row, source_manga_key="blue-harbour")
    assert link.manga_id == manga.id
    assert link.url == REF.url
    manga.refresh_from_db()
    assert manga.title == "Blue Harbour"
    assert manga.status == "ongoing"
    assert manga.alt_titles == ["Aoi Minato"]
    assert sorted(manga.tags.values_list("name", flat=True)) == ["drama", "sea"]
    assert manga.cover_url == "http://shelf.test/c.png"


def test_same_metadata_again_is_unchanged(source_row):
    upsert_metadata(source_row, REF, detail())
    manga, outcome = upsert_metadata(source_row, REF, detail(tags=("sea", "drama")))
    assert outcome is MetadataOutcome.UNCHANGED
    assert Manga.objects.count() == 1


def test_changed_metadata_is_updated_in_place(source_row):
    first, _ = upsert_metadata(source_row, REF, detail())
    manga, outcome = upsert_metadata(
        source_row, REF, detail(title="Blue Harbour II", tags=("drama",), status="Completed")
    )

    assert outcome is MetadataOutcome.UPDATED
    assert manga.id == first.id
    manga.refresh_from_db()
    assert manga.title == "Blue Harbour II"
    assert manga.status == "completed"
    assert list(manga.tags.values_list("name", flat=True)) == ["drama"]


def test_new_cover_url_resets_cover_state_so_it_is_fetched(source_row):
    manga, _ = upsert_metadata(source_row, REF, detail())
    Manga.objects.filter(id=manga.id).update(cover_state="stored", cover="covers/x/old.png")
    manga, outcome = upsert_metadata(source_row, REF, detail(cover="http://shelf.test/c2.png"))
    assert outcome is MetadataOutcome.UPDATED
    assert manga.cover_state == "missing"


def test_unknown_status_is_stored_as_unknown(source_row):
    manga, _ = upsert_metadata(source_row, REF, detail(status="Serialising on Tuesdays"))
    assert manga.status == "unknown"


def test_a_detail_without_title_is_refused_and_changes_nothing(source_row):
    upsert_metadata(source_row, REF, detail())
    with pytest.raises(CrawlerError, match="has no title"):
        upsert_metadata(source_row, REF, detail(title="  "))
    assert Manga.objects.get().title == "Blue Harbour"


def test_a_dropped_manga_seen_again_is_no_longer_dropped(source_row):
    upsert_metadata(source_row, REF, detail())
    MangaSource.objects.update(dropped_at="2026-01-01T00:00:00Z")
    upsert_metadata(source_row, REF, detail())
    assert MangaSource.objects.get().dropped_at is None
