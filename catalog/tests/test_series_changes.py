"""Merging, splitting and undoing series (catalog.series), by the service and by `manage.py series`: audited, reversible."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from catalog import series as service
from catalog.models import Manga, Series, SeriesChange, SeriesSuggestion

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def _three():
    return [Manga.objects.create(title=t) for t in ("Tide", "The Tide", "Tide (alt)")]


def _series_of(*mangas):
    return [Manga.objects.get(pk=m.pk).series_id for m in mangas]


def test_a_new_manga_is_a_series_of_its_own_under_its_id():
    manga = Manga.objects.create(title="Harbour")
    assert manga.series_id == manga.pk and manga.series.title == "Harbour"


def test_merge_moves_every_manga_and_keeps_the_emptied_series_pointing_at_the_target(alice):
    a, b, c = _three()
    change = service.merge_series(a.series, [b.series, c.series], actor=alice, via="test", reason="same")
    assert _series_of(a, b, c) == [a.series_id] * 3
    assert set(Series.objects.filter(merged_into=a.series_id).values_list("pk", flat=True)) == {b.pk, c.pk}
    assert (change.action, change.actor, change.via, change.reason) == ("merge", alice, "test", "same")
    assert sorted(m["manga"] for m in change.moves) == sorted([str(b.pk), str(c.pk)])


def test_undo_restores_every_id_as_it_was():
    a, b, c = _three()
    merge = service.merge_series(a.series, [b.series, c.series], via="test")
    undo = service.undo_change(merge, via="test")
    assert _series_of(a, b, c) == [a.pk, b.pk, c.pk]
    assert Series.objects.filter(merged_into__isnull=False).count() == 0
    assert (undo.action, undo.undoes) == ("undo", merge)
    with pytest.raises(service.SeriesChangeRefused, match="already undone"):
        service.undo_change(merge, via="test")


def test_an_undo_refuses_when_a_later_change_moved_the_same_manga():
    a, b, c = _three()
    first = service.merge_series(a.series, [b.series], via="test")
    service.split_mangas([b], via="test")
    before = _series_of(a, b, c)
    with pytest.raises(service.SeriesChangeRefused, match="moved since"):
        service.undo_change(first, via="test")
    assert _series_of(a, b, c) == before


def test_split_gives_a_manga_its_own_series_back_and_refuses_a_lone_one():
    a, b, _ = _three()
    service.merge_series(a.series, [b.series], via="test")
    split = service.split_mangas([Manga.objects.get(pk=b.pk)], via="test")
    assert _series_of(a, b) == [a.pk, b.pk], "its own id's series, emptied by the merge, is taken back"
    assert Series.objects.get(pk=b.pk).merged_into_id is None
    assert split.moves == [{"manga": str(b.pk), "from": str(a.pk), "to": str(b.pk)}]
    with pytest.raises(service.SeriesChangeRefused, match="alone in its series"):
        service.split_mangas([Manga.objects.get(pk=b.pk)], via="test")


def test_a_merged_series_cannot_be_merged_again_by_its_old_id():
    a, b, c = _three()
    service.merge_series(a.series, [b.series], via="test")
    with pytest.raises(service.SeriesChangeRefused, match="already merged"):
        service.merge_series(Series.objects.get(pk=b.pk), [c.series], via="test")
    assert SeriesChange.objects.count() == 1


def test_confirming_a_suggestion_merges_into_the_older_series_and_rejecting_marks_it(alice):
    a, b, c = _three()
    kept = SeriesSuggestion.objects.create(first=a.series, second=b.series, evidence=["same title: tide"])
    service.confirm_suggestion(kept, actor=alice, via="test")
    assert _series_of(a, b) == [a.pk, a.pk]
    kept.refresh_from_db()
    assert (kept.state, kept.decided_by) == ("confirmed", alice)
    other = SeriesSuggestion.objects.create(first=a.series, second=c.series)
    service.reject_suggestion(other, actor=alice)
    other.refresh_from_db()
    assert other.state == "rejected" and _series_of(c) == [c.pk]
    with pytest.raises(service.SeriesChangeRefused, match="no longer pending"):
        service.reject_suggestion(other)


def test_source_order_puts_the_series_own_then_the_global_priority_then_by_id(settings):
    settings.SERIES_SOURCE_PRIORITY = ["beta", "alpha"]
    assert service.source_order([], ["alpha", "beta", "gamma", "delta"]) == ["beta", "alpha", "delta", "gamma"]
    assert service.source_order(["gamma"], ["alpha", "beta", "gamma"]) == ["gamma", "beta", "alpha"]


def _cli(*args):
    out = io.StringIO()
    call_command("series", *args, stdout=out)
    return out.getvalue()


def test_the_cli_merges_splits_and_undoes_with_the_operator_in_the_audit(alice):
    a, b, _ = _three()
    assert "moved 1 manga(s)" in _cli("--user", "alice", "--reason", "same series", "merge", str(a.pk), str(b.pk))
    change = SeriesChange.objects.get()
    assert (change.actor, change.via, change.reason) == (alice, "cli", "same series")
    _cli("undo", str(change.pk))
    assert _series_of(a, b) == [a.pk, b.pk]
    assert "(global order)" in _cli("order", str(a.pk))
    assert "beta, alpha" in _cli("order", str(a.pk), "beta", "alpha")


@pytest.mark.parametrize(
    "args, message",
    [
        (("merge", "nope", "x"), "is not an id"),
        (
            ("merge", "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"),
            "no series with id",
        ),
        (("--user", "ghost", "split", "00000000-0000-0000-0000-000000000001"), "--user 'ghost': no such user"),
    ],
)
def test_the_cli_names_what_to_fix_and_changes_nothing(args, message):
    _three()
    with pytest.raises(CommandError, match=message):
        _cli(*args)
    assert not SeriesChange.objects.exists()


def test_bulk_created_mangas_get_series_of_their_own():
    rows = Manga.objects.bulk_create(service.with_own_series([Manga(title="One"), Manga(title="Two")]))
    assert [
        (m.series_id, m.series.title) for m in Manga.objects.filter(pk__in=[r.pk for r in rows]).order_by("title")
    ] == [(r.pk, r.title) for r in sorted(rows, key=lambda r: r.title)]


def test_the_cli_switches_a_series_alternates_on_and_off():
    a, _, _ = _three()
    assert "alternates on" in _cli("alternates", str(a.series_id), "on")
    assert Series.objects.get(pk=a.series_id).download_alternates is True
    _cli("alternates", str(a.series_id), "off")
    assert Series.objects.get(pk=a.series_id).download_alternates is False
    with pytest.raises(CommandError, match="no series"):
        _cli("alternates", "00000000-0000-0000-0000-000000000009", "on")
