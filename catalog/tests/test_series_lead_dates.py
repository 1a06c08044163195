"""A series' lead carries the newest chapter time of its whole series (readers sort "latest" by it): the chapter
sync raises it when any copy gets a newer chapter, merges, splits and undos compute it again, and migration 0014
gives it to the leads of series merged before."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from catalog import series as service
from catalog.models import Manga, Source
from crawler.passes.chapters import sync_chapters
from sources.base import SourceChapter
from testsupport import api_factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

DAY = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def _at(days):
    return DAY + dt.timedelta(days=days)


def _listed(*days):
    return [
        SourceChapter(key=f"ch-{n}", number=Decimal(n), title=f"Chapter {n}", published_at=_at(day))
        for n, day in enumerate(days, start=1)
    ]


def _latest(*mangas):
    return [Manga.objects.get(pk=m.pk).latest_chapter_at for m in mangas]


@pytest.fixture
def pair():
    alpha = Source.objects.create(id="alpha", name="Alpha", kind="html", base_url="http://127.0.0.1:9/")
    beta = Source.objects.create(id="beta", name="Beta", kind="html", base_url="http://127.0.0.1:9/")
    lead, copy = f.manga("Tide", src=alpha), f.manga("The Tide", src=beta)
    sync_chapters(lead, alpha, _listed(1, 2))
    sync_chapters(copy, beta, _listed(1, 2, 5))
    return alpha, beta, Manga.objects.get(pk=lead.pk), Manga.objects.get(pk=copy.pk)


def test_a_merge_gives_the_lead_the_series_newest_chapter_and_a_split_gives_each_its_own_back(pair):
    _, _, lead, copy = pair
    assert _latest(lead, copy) == [_at(2), _at(5)]
    merge = service.merge_series(lead.series, [copy.series], via="test")
    assert _latest(lead, copy) == [_at(5), _at(5)]
    service.undo_change(merge, via="test")
    assert _latest(lead, copy) == [_at(2), _at(5)]
    service.merge_series(lead.series, [copy.series], via="test")
    service.split_mangas([copy], via="test")
    assert _latest(lead, copy) == [_at(2), _at(5)]


def test_a_newer_chapter_on_any_copy_raises_the_lead_and_an_older_one_does_not_lower_it(pair):
    alpha, beta, lead, copy = pair
    service.merge_series(lead.series, [copy.series], via="test")
    sync_chapters(Manga.objects.get(pk=copy.pk), beta, _listed(1, 2, 5, 9))
    assert _latest(lead, copy) == [_at(9), _at(9)]
    sync_chapters(Manga.objects.get(pk=lead.pk), alpha, _listed(1, 2, 3))
    assert _latest(lead) == [_at(9)], "the lead counts every copy's chapters, not only its own"
    # A copy dropping its newest chapter keeps its own time honest; the lead follows at its own next sync.
    sync_chapters(Manga.objects.get(pk=copy.pk), beta, _listed(1, 2, 5))
    assert _latest(copy) == [_at(5)]
    sync_chapters(Manga.objects.get(pk=lead.pk), alpha, _listed(1, 2, 3))
    assert _latest(lead) == [_at(5)]


def test_a_manga_alone_in_its_series_keeps_its_own_time(pair):
    alpha, _, lead, _ = pair
    sync_chapters(lead, alpha, _listed(1))
    assert _latest(lead) == [_at(1)]


@pytest.mark.django_db(transaction=True)
def test_migration_0015_gives_the_leads_of_merged_series_their_series_newest_chapter(pair):
    _, _, lead, copy = pair
    service.merge_series(lead.series, [copy.series], via="test")
    Manga.objects.filter(pk=lead.pk).update(latest_chapter_at=_at(2))  # as merged before the lead carried it
    alone = f.manga("Harbour", latest_chapter_at=_at(1))
    executor = MigrationExecutor(connection)
    executor.migrate([("catalog", "0014_lead_list_indexes")])
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([("catalog", "0015_series_download_alternates")])
        assert _latest(lead, copy, alone) == [_at(5), _at(5), _at(1)]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
