"""The two-site journey through OPDS and the CBZ export: one entry and one folder per real series, each holding the
union of its sources' downloaded chapters, each chapter key once."""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path

from django.core.management import call_command
from django.test import Client
from lxml import etree

from catalog.models import Chapter, Series
from catalog.series_chapters import key_of
from reader.export import MANIFEST
from reader.tests.conftest import SCHEMAS, assert_valid_opds, basic

NS = {"a": "http://www.w3.org/2005/Atom"}
SERIES = ["Hikari no Ou", "King of Light", "Restart", "Revenge", "Revenge", "Sōsō no Frieren", "The Tide"]


def _downloaded_keys(series_id: object) -> set:
    done = Chapter.objects.filter(manga__series_id=series_id, sync_state=Chapter.SyncState.DONE, dropped_at=None)
    return {key_of(c) for c in done}


def _keys(chapter_ids: list[str]) -> tuple[set, list, set]:
    """The chapters' keys (as a set and a list, to see repeats) and their series."""
    rows = list(Chapter.objects.filter(pk__in=chapter_ids).select_related("manga"))
    assert len(rows) == len(chapter_ids)
    keys = [key_of(c) for c in rows]
    return set(keys), keys, {c.manga.series_id for c in rows}


def check_opds_and_export(username: str, password: str) -> None:
    """The all-mangas feed lists the 7 series once each, each series' feed lists its union (The Tide: chapters 1
    to 4 from both sites), and an export writes 7 series folders holding each chapter key once."""
    schema = etree.RelaxNG(etree.parse(str(SCHEMAS / "opds.rng")))
    client, auth = Client(), basic(username, password)
    listed = assert_valid_opds(schema, client.get("/opds/all/", **auth).content)
    assert sorted(listed.xpath("a:entry/a:title/text()", namespaces=NS)) == SERIES
    for entry in listed.xpath("a:entry", namespaces=NS):
        href = entry.xpath("a:link[@rel='subsection']/@href", namespaces=NS)[0]
        feed = assert_valid_opds(schema, client.get(href.removeprefix("http://testserver"), **auth).content)
        ids = [i.removeprefix("urn:uuid:") for i in feed.xpath("a:entry/a:id/text()", namespaces=NS)]
        keys, listed_keys, series = _keys(ids)
        assert len(series) == 1 and len(listed_keys) == len(keys), (entry.findtext("a:title", namespaces=NS), ids)
        assert keys == _downloaded_keys(series.pop())
        if entry.findtext("a:title", namespaces=NS) == "The Tide":
            titles = feed.xpath("a:entry/a:title/text()", namespaces=NS)
            assert titles == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"], titles

    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        call_command("export_cbz", str(root), verbosity=0)
        folders = [d for d in root.iterdir() if d.is_dir()]
        assert len(folders) == len(SERIES) == Series.objects.filter(merged_into=None).count()
        by_folder: dict[str, list[str]] = defaultdict(list)
        for chapter_id, relative in json.loads((root / MANIFEST).read_text(encoding="utf-8")).items():
            assert (root / relative).is_file()
            by_folder[relative.split("/", 1)[0]].append(chapter_id)
        assert sorted(by_folder) == sorted(d.name for d in folders)
        for folder, chapter_ids in by_folder.items():
            keys, listed_keys, series = _keys(chapter_ids)
            assert len(series) == 1 and len(listed_keys) == len(keys), folder
            assert keys == _downloaded_keys(series.pop()), folder
            assert len(list((root / folder).glob("*.cbz"))) == len(keys), folder
