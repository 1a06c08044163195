"""`manage.py export_cbz`: the Komga/Kavita layout, safe names, re-runs skip unchanged chapters, bad input is an error."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from catalog.models import Chapter, Manga
from reader.tests import factories as f

pytestmark = pytest.mark.sqlite_ok  # nothing here depends on PostgreSQL


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("export_cbz", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def library(db):
    src = f.source("demo")
    berserk = f.manga("Berserk: Black/Swordsman?", src=src)
    f.chapter(berserk, 1, src=src, pages=2)
    f.chapter(berserk, "10.5", src=src, pages=1)
    f.chapter(berserk, 11, src=src, pages=0)  # not downloaded: not exported
    yotsuba = f.manga("Yotsuba&!", src=src)
    f.chapter(yotsuba, 2, src=src, pages=1)
    return berserk, yotsuba


def test_export_writes_series_folders_with_safe_names_and_valid_archives(library, tmp_path, comicinfo_schema):
    assert "3 written, 0 unchanged" in run(str(tmp_path))
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.cbz"))
    assert files == [
        "Berserk_ Black_Swordsman_/Berserk_ Black_Swordsman_ - c001.cbz",
        "Berserk_ Black_Swordsman_/Berserk_ Black_Swordsman_ - c010.5.cbz",
        "Yotsuba&!/Yotsuba&! - c002.cbz",
    ]
    with zipfile.ZipFile(tmp_path / files[0]) as archive:
        assert archive.namelist() == ["ComicInfo.xml", "0001.png", "0002.png"]
        assert archive.testzip() is None
    assert not list(tmp_path.rglob("*.part"))


def test_a_rerun_skips_unchanged_and_rewrites_changed_chapters(library, tmp_path):
    berserk, _ = library
    run(str(tmp_path))
    assert "0 written, 3 unchanged" in run(str(tmp_path))
    Chapter.objects.filter(manga=berserk, number=1).update(updated_at=timezone.now() + timedelta(seconds=5))
    assert "1 written, 2 unchanged" in run(str(tmp_path))
    Manga.objects.filter(pk=berserk.pk).update(updated_at=timezone.now() + timedelta(seconds=10))
    assert "2 written, 1 unchanged" in run(str(tmp_path))


def test_manga_and_since_filters(library, tmp_path):
    _, yotsuba = library
    assert "1 written" in run(str(tmp_path / "one"), "--manga", str(yotsuba.id))
    Chapter.objects.update(updated_at=timezone.now() - timedelta(days=10))
    assert "0 written, 0 unchanged" in run(
        str(tmp_path / "recent"), "--since", (timezone.now() - timedelta(days=1)).date().isoformat()
    )


def test_manga_is_named_by_id_slug_or_title_and_an_ambiguous_title_lists_the_candidates(library, tmp_path):
    berserk, yotsuba = library
    assert "1 written" in run(str(tmp_path / "slug"), "--manga", "yotsuba")
    assert "2 written" in run(str(tmp_path / "title"), "--manga", "Berserk: Black/Swordsman?")
    assert "2 written" in run(str(tmp_path / "partial"), "--manga", "swordsman")
    assert "3 written" in run(str(tmp_path / "both"), "--manga", "berserk-black-swordsman", "--manga", str(yotsuba.id))
    other = f.manga("Berserk of Gluttony")
    with pytest.raises(CommandError) as caught:
        run(str(tmp_path / "none"), "--manga", "berserk")
    assert str(caught.value) == (
        f"--manga: 'berserk' matches 2 mangas by partial title: 'Berserk of Gluttony' (id {other.id}); "
        f"'Berserk: Black/Swordsman?' (id {berserk.id}); give the id"
    )
    assert not (tmp_path / "none").exists()


def test_bad_arguments_are_errors_naming_what_to_fix(library, tmp_path):
    with pytest.raises(CommandError, match="no manga with id 00000000-0000-0000-0000-000000000000"):
        run(str(tmp_path), "--manga", "00000000-0000-0000-0000-000000000000")
    with pytest.raises(CommandError, match="no manga matches 'vagabond' by id, slug or title"):
        run(str(tmp_path), "--manga", "vagabond")
    with pytest.raises(CommandError, match="not an ISO date"):
        run(str(tmp_path), "--since", "yesterday")
    (tmp_path / "file").write_text("x")
    with pytest.raises(CommandError, match="is not a directory"):
        run(str(tmp_path / "file"))
