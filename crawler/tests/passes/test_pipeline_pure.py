"""Pure helpers of the pipeline: metadata fingerprint, cover decision, chapter diff and order, orphans."""

from decimal import Decimal

import pytest

from crawler.passes.chapter_download import orphan_names, page_directory
from crawler.passes.chapters import chapter_order, diff_chapters
from crawler.passes.metadata_pass import unseen_refs
from crawler.passes.pipeline import metadata_hash, needs_cover_fetch
from sources.base import MangaMetadata, SourceMangaRef

pytestmark = pytest.mark.sqlite_ok

META = MangaMetadata(title="Blue Harbour", alt_titles=("Aoi Minato",), authors=("Ren",), tags=("drama", "sea"))


def test_metadata_hash_ignores_tag_order():
    reordered = MangaMetadata(title="Blue Harbour", alt_titles=("Aoi Minato",), authors=("Ren",), tags=("sea", "drama"))
    assert metadata_hash(META, "http://x/c.png") == metadata_hash(reordered, "http://x/c.png")


@pytest.mark.parametrize(
    "changed",
    [
        MangaMetadata(title="Blue Harbour!", alt_titles=("Aoi Minato",), authors=("Ren",), tags=("drama", "sea")),
        MangaMetadata(title="Blue Harbour", alt_titles=(), authors=("Ren",), tags=("drama", "sea")),
        MangaMetadata(title="Blue Harbour", alt_titles=("Aoi Minato",), authors=("Ren",), tags=("drama",)),
        MangaMetadata(
            title="Blue Harbour",
            alt_titles=("Aoi Minato",),
            authors=("Ren",),
            tags=("drama", "sea"),
            status="completed",
        ),
        MangaMetadata(
            title="Blue Harbour", alt_titles=("Aoi Minato",), authors=("Ren",), tags=("drama", "sea"), description="x"
        ),
    ],
)
def test_metadata_hash_changes_with_any_metadata_field(changed):
    assert metadata_hash(changed, "http://x/c.png") != metadata_hash(META, "http://x/c.png")


def test_metadata_hash_changes_with_cover_url():
    assert metadata_hash(META, "http://x/a.png") != metadata_hash(META, "http://x/b.png")


@pytest.mark.parametrize(
    ("cover_state", "stored_name", "cover_url", "expected"),
    [
        ("missing", "", "http://x/c.png", True),
        ("failed", "", "http://x/c.png", True),
        ("failed", "covers/1/old.png", "http://x/c.png", True),
        ("stored", "covers/1/c.png", "http://x/c.png", False),
        ("stored", "", "http://x/c.png", True),
        ("missing", "", "", False),
        ("failed", "", "", False),
    ],
)
def test_needs_cover_fetch_truth_table(cover_state, stored_name, cover_url, expected):
    assert needs_cover_fetch(cover_state, stored_name, cover_url) is expected


def test_diff_chapters_finds_new_dropped_and_revived():
    existing = {"c1": False, "c2": False, "c3": True, "c4": True}
    diff = diff_chapters(existing, ["c5", "c3", "c1"])
    assert diff.new == ["c5"]
    assert diff.dropped == ["c2"]
    assert diff.revived == ["c3"]


def test_diff_chapters_of_identical_lists_is_empty():
    diff = diff_chapters({"a": False, "b": False}, ["b", "a"])
    assert (diff.new, diff.dropped, diff.revived) == ([], [], [])


def test_chapter_order_puts_decimal_chapters_between_integers():
    chapters = [(Decimal("3"), "k3"), (Decimal("10"), "k10"), (Decimal("2.5"), "k25"), (Decimal("2"), "k2")]
    assert [k for _, k in sorted(chapters, key=lambda c: chapter_order(*c))] == ["k2", "k25", "k3", "k10"]


def test_orphan_names_are_files_without_a_page_row():
    directory = page_directory("abc")
    files = ["p0.png", "p1.png", ".tmp-x"]
    referenced = {"pages/abc/p0.png"}
    assert orphan_names(directory, files, referenced) == ["pages/abc/.tmp-x", "pages/abc/p1.png"]


def test_unseen_refs_keeps_list_order_drops_repeats_and_marks_them_seen():
    refs = [SourceMangaRef(k, f"/m/{k}", k) for k in ("c", "a", "c", "b")]
    seen = {"a"}
    assert [r.key for r in unseen_refs(refs, seen)] == ["c", "b"]
    assert seen == {"a", "b", "c"}
    assert unseen_refs(refs, seen) == []
