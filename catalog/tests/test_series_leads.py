"""Each series has one lead, the manga readers list (catalog.series_leads), and shows its chapters across sources.

The lead survives merges, splits, undos and deletions; migration 0013 picks
leads for an existing library; catalog.series_books gives a lead the union
of its series' chapters and each chapter's copies.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from catalog import series as service
from catalog.models import Chapter, Manga
from catalog.series_books import copies_of, shown_chapters
from catalog.series_leads import lead_of, leads, merged_series
from testsupport import api_factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def _leading(*mangas):
    return [Manga.objects.get(pk=m.pk).leads_series for m in mangas]


def test_a_new_manga_leads_its_own_series_and_one_created_into_a_led_series_does_not():
    first = Manga.objects.create(title="Harbour")
    second = Manga.objects.create(title="Harbour", series=first.series)
    assert _leading(first, second) == [True, False]


def test_a_series_never_has_two_leads():
    first = Manga.objects.create(title="Harbour")
    second = Manga.objects.create(title="Harbour", series=first.series)
    with pytest.raises(IntegrityError), transaction.atomic():
        Manga.objects.filter(pk=second.pk).update(leads_series=True)


def test_a_merge_keeps_the_target_series_lead_and_the_merged_copies_step_down():
    a, b, c = (Manga.objects.create(title=t) for t in ("Tide", "The Tide", "Tide!"))
    service.merge_series(a.series, [b.series, c.series], via="test")
    assert _leading(a, b, c) == [True, False, False]
    assert list(leads().filter(pk__in=[a.pk, b.pk, c.pk])) == [a]
    assert lead_of(Manga.objects.get(pk=c.pk)) == a


def test_a_split_and_an_undo_give_every_series_its_lead_back():
    a, b, c = (Manga.objects.create(title=t) for t in ("Tide", "The Tide", "Tide!"))
    merge = service.merge_series(b.series, [a.series, c.series], via="test")
    service.split_mangas([b], via="test")  # the founding manga leaves: the oldest left leads
    assert _leading(a, b, c) == [True, True, False]
    assert Manga.objects.get(pk=a.pk).series_id == b.pk
    later = Manga.objects.create(title="Tide", series=Manga.objects.get(pk=b.pk).series)
    assert _leading(later) == [False]
    service.undo_change(service.split_mangas([later], via="test"), via="test")
    assert _leading(a, b, c, later) == [True, True, False, False]
    service.undo_change(merge, via="test")  # a and c back to their own series, under their own ids
    assert _leading(a, b, c, later) == [True, True, True, False]


def test_deleting_a_lead_hands_the_series_to_its_next_manga():
    a, b, c = (Manga.objects.create(title=t) for t in ("Tide", "The Tide", "Tide!"))
    service.merge_series(a.series, [b.series, c.series], via="test")
    Manga.objects.filter(pk=a.pk).delete()
    assert _leading(b, c) == [True, False]


def test_merged_series_names_only_the_series_of_several_mangas():
    a, b, alone = (Manga.objects.create(title=t) for t in ("Tide", "The Tide", "Harbour"))
    service.merge_series(a.series, [b.series], via="test")
    assert merged_series([a.series_id, alone.series_id]) == {str(a.series_id)}


def test_a_lead_shows_one_chapter_per_key_from_the_preferred_downloaded_copy():
    alpha, beta = f.source("alpha"), f.source("beta")
    a, b = f.manga("Tide", src=alpha), f.manga("Tide", src=beta)
    done = Chapter.SyncState.DONE
    a1, a2 = f.chapter(a, 1, src=alpha, sync_state=done), f.chapter(a, 2, src=alpha)
    b2, b3 = f.chapter(b, 2, src=beta, sync_state=done), f.chapter(b, 3, src=beta)
    f.chapter(b, 4, src=beta, dropped_at="2026-01-01T00:00:00Z")
    assert set(shown_chapters(a)) == {a1, a2}  # alone: its own live chapters
    service.merge_series(a.series, [b.series], via="test")
    a = Manga.objects.get(pk=a.pk)
    assert set(shown_chapters(a)) == {a1, b2, b3}  # chapter 2: only beta's copy is downloaded
    assert copies_of(a2) == [b2, a2]
    assert copies_of(a1) == [a1]


@pytest.mark.django_db(transaction=True)
def test_the_migration_picks_the_founding_manga_else_the_oldest():
    executor = MigrationExecutor(connection)
    before, after = [("catalog", "0012_series_above_source_mangas")], [("catalog", "0013_series_leads")]
    try:
        executor.migrate(before)
        apps = executor.loader.project_state(before).apps
        Series, Manga0 = apps.get_model("catalog", "Series"), apps.get_model("catalog", "Manga")  # noqa: N806
        own = Series.objects.create(id="00000000-0000-0000-0000-00000000000a", title="Own")
        founded = Manga0.objects.create(id=own.id, series=own, title="Own")
        copy = Manga0.objects.create(series=own, title="Own copy")
        split = Series.objects.create(title="Split")
        older = Manga0.objects.create(series=split, title="Older")
        newer = Manga0.objects.create(series=split, title="Newer")
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        Manga1 = executor.loader.project_state(after).apps.get_model("catalog", "Manga")  # noqa: N806
        assert {m.title: m.leads_series for m in Manga1.objects.all()} == {
            founded.title: True, copy.title: False, older.title: True, newer.title: False,
        }  # fmt: skip
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
