"""`export_cbz` over series: one folder per series (its lead's, where that manga's folder always was), each chapter
key once from the preferred copy, ComicInfo named after the series; a merge or a new source order replaces the file
of the copy shown before, and a re-run writes nothing; a series' chapter download is named after the series."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone
from lxml import etree

from catalog import series as service
from catalog.models import Series
from reader.export import MANIFEST
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from testsupport.responses import body_of

pytestmark = pytest.mark.sqlite_ok


def run(directory: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("export_cbz", str(directory), *args, stdout=out)
    return out.getvalue()


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.cbz"))


def comic_info(path: Path) -> etree._Element:
    with zipfile.ZipFile(path) as archive:
        return etree.fromstring(archive.read("ComicInfo.xml"))


@pytest.fixture
def library(db, settings):
    """ "The Tide" on alpha (1-3) and beta (2-4, its own title and tag), not merged yet; two different "Revenge"."""
    settings.SERIES_SOURCE_PRIORITY = ["alpha", "beta"]
    alpha, beta = f.source("alpha"), f.source("beta")
    a = f.manga("The Tide", src=alpha, tags=("drama",), authors=["Mori Kei"], description="The sea.")
    b = f.manga("Tide Beyond", src=beta, tags=("action",), authors=["Kei Mori"])
    rows = {f"a{n}": f.chapter(a, n, src=alpha, pages=2, url=f"http://alpha.example/c{n}") for n in (1, 2, 3)}
    rows |= {f"b{n}": f.chapter(b, n, src=beta, pages=3, url=f"http://beta.example/c{n}") for n in (2, 3, 4)}
    r1, r2 = f.manga("Revenge", src=alpha), f.manga("Revenge", src=beta)
    f.chapter(r1, 1, src=alpha, pages=1)
    f.chapter(r2, 1, src=beta, pages=1)
    return {"a": a, "b": b, "r1": r1, "r2": r2, **rows}


def test_a_merged_series_is_one_folder_with_each_chapter_key_once_and_series_comicinfo(
    library, tmp_path, comicinfo_schema
):
    service.merge_series(library["a"].series, [library["b"].series], via="test")
    assert "6 written, 0 unchanged" in run(tmp_path)
    tide = [name for name in files(tmp_path) if name.startswith("The Tide/")]
    assert tide == [f"The Tide/The Tide - c00{n}.cbz" for n in (1, 2, 3, 4)]
    assert len([n for n in files(tmp_path) if n.startswith("Revenge")]) == 2  # two series, two folders
    fourth = comic_info(tmp_path / tide[3])
    assert comicinfo_schema.validate(fourth), comicinfo_schema.error_log
    assert fourth.findtext("Series") == "The Tide"
    assert fourth.findtext("Summary") == "The sea."
    assert fourth.findtext("Writer") == "Mori Kei"
    assert fourth.findtext("Genre") == "action, drama"
    assert fourth.findtext("Web") == "http://beta.example/c4"  # chapter 4 only beta has
    assert comic_info(tmp_path / tide[1]).findtext("Web") == "http://alpha.example/c2"  # alpha's, preferred
    assert "0 written, 6 unchanged" in run(tmp_path)  # incremental: nothing moved since


def test_a_merge_moves_the_copys_chapters_into_the_series_folder_and_leaves_other_folders(library, tmp_path):
    before = run(tmp_path)
    assert "8 written" in before
    revenge = sorted(n for n in files(tmp_path) if n.startswith("Revenge"))
    stamps = {n: (tmp_path / n).stat().st_mtime for n in revenge}
    assert "Tide Beyond/Tide Beyond - c004.cbz" in files(tmp_path)
    with time_machine.travel(timezone.now() + timedelta(minutes=1)):  # merged after that export
        service.merge_series(library["a"].series, [library["b"].series], via="test")
    after = run(tmp_path)
    # the series' four files written again (ComicInfo names the series now), chapter 4 moved first, beta's
    # chapters 2 and 3 removed (alpha's are shown); Revenge's untouched
    assert "4 written, 2 unchanged, 1 moved, 2 removed" in after, after
    assert [n for n in files(tmp_path) if not n.startswith("Revenge")] == [
        f"The Tide/The Tide - c00{n}.cbz" for n in (1, 2, 3, 4)
    ]
    assert not (tmp_path / "Tide Beyond").exists()  # the copy's folder, emptied, is gone
    assert sorted(n for n in files(tmp_path) if n.startswith("Revenge")) == revenge  # no other folder moved
    assert {n: (tmp_path / n).stat().st_mtime for n in revenge} == stamps
    assert "0 written, 6 unchanged, 0 moved, 0 removed" in run(tmp_path)
    assert comic_info(tmp_path / "The Tide/The Tide - c004.cbz").findtext("Series") == "The Tide"
    assert comic_info(tmp_path / "The Tide/The Tide - c001.cbz").findtext("Genre") == "action, drama"


def test_a_new_source_order_replaces_the_shown_copys_file_under_the_same_name(library, tmp_path):
    service.merge_series(library["a"].series, [library["b"].series], via="test")
    run(tmp_path)
    Series.objects.filter(pk=library["a"].series_id).update(source_order=["beta", "alpha"])
    out = run(tmp_path)
    # chapters 2 and 3 are beta's now: their files are replaced whatever their mtimes say
    assert "2 written, 4 unchanged, 0 moved, 0 removed" in out, out
    assert [n for n in files(tmp_path) if n.startswith("The Tide")] == [
        f"The Tide/The Tide - c00{n}.cbz" for n in (1, 2, 3, 4)
    ]
    second = tmp_path / "The Tide/The Tide - c002.cbz"
    assert comic_info(second).findtext("Web") == "http://beta.example/c2"
    assert comic_info(second).findtext("PageCount") == "3"
    places = (tmp_path / MANIFEST).read_text()
    assert str(library["b2"].id) in places and str(library["a2"].id) not in places
    assert "0 written, 6 unchanged" in run(tmp_path)


def test_naming_a_copy_exports_its_whole_series(library, tmp_path):
    service.merge_series(library["a"].series, [library["b"].series], via="test")
    assert "4 written" in run(tmp_path, "--manga", str(library["b"].id))
    assert files(tmp_path) == [f"The Tide/The Tide - c00{n}.cbz" for n in (1, 2, 3, 4)]


def test_a_copys_chapter_download_is_named_after_its_series(library, client, alice):
    service.merge_series(library["a"].series, [library["b"].series], via="test")
    response = client.get(f"/opds/chapters/{library['b4'].id}/cbz/", **basic("alice", PASSWORD))
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith("The%20Tide%20-%20c004.cbz")
    with zipfile.ZipFile(io.BytesIO(body_of(response))) as archive:
        assert etree.fromstring(archive.read("ComicInfo.xml")).findtext("Series") == "The Tide"


def test_a_split_gives_the_copy_its_folder_back_and_the_series_keeps_its_own(library, tmp_path):
    change = service.merge_series(library["a"].series, [library["b"].series], via="test")
    run(tmp_path)
    with time_machine.travel(timezone.now() + timedelta(minutes=1)):
        service.undo_change(change, via="test")
    out = run(tmp_path)
    assert "1 moved, 0 removed" in out, out  # chapter 4 goes back; beta's 2 and 3 are written anew
    assert [n for n in files(tmp_path) if not n.startswith("Revenge")] == [
        *(f"The Tide/The Tide - c00{n}.cbz" for n in (1, 2, 3)),
        *(f"Tide Beyond/Tide Beyond - c00{n}.cbz" for n in (2, 3, 4)),
    ]
    assert comic_info(tmp_path / "Tide Beyond/Tide Beyond - c004.cbz").findtext("Series") == "Tide Beyond"
    assert comic_info(tmp_path / "The Tide/The Tide - c001.cbz").findtext("Genre") == "drama"
    assert "0 written, 8 unchanged" in run(tmp_path)
