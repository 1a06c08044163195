"""The series in the admin: the merge, split, undo and review actions, offered only with catalog.merge_series."""

from __future__ import annotations

import pytest
from django.test import Client

from catalog.models import Manga, SeriesChange, SeriesSuggestion

pytestmark = pytest.mark.django_db


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _act(client, model, action, ids):
    return client.post(
        f"/admin/catalog/{model}/", {"action": action, "_selected_action": [str(i) for i in ids]}, follow=True
    )


def test_an_operator_merges_splits_and_undoes_from_the_admin(operator):
    a, b = Manga.objects.create(title="Tide"), Manga.objects.create(title="The Tide")
    client = _client(operator)
    assert "merge_into_oldest" in client.get("/admin/catalog/series/").content.decode()
    _act(client, "series", "merge_into_oldest", [a.series_id, b.series_id])
    assert Manga.objects.get(pk=b.pk).series_id == a.pk
    _act(client, "manga", "split_out_of_series", [b.pk])
    assert Manga.objects.get(pk=b.pk).series_id == b.pk
    merge = SeriesChange.objects.get(action="merge")
    answer = _act(client, "serieschange", "undo", [merge.pk])
    assert "cannot be undone" in answer.content.decode(), "the split moved the manga since: the undo names it"
    assert [c.via for c in SeriesChange.objects.order_by("created_at")] == ["admin", "admin"]


def test_the_review_page_confirms_and_rejects_suggestions(operator):
    a, b, c = (Manga.objects.create(title=t) for t in ("Tide", "Tide.", "Tide!"))
    kept = SeriesSuggestion.objects.create(first=a.series, second=b.series)
    other = SeriesSuggestion.objects.create(first=a.series, second=c.series)
    client = _client(operator)
    assert client.get("/admin/catalog/seriessuggestion/").status_code == 200
    _act(client, "seriessuggestion", "confirm", [kept.pk])
    _act(client, "seriessuggestion", "reject", [other.pk])
    assert Manga.objects.get(pk=b.pk).series_id == a.pk and Manga.objects.get(pk=c.pk).series_id == c.pk
    assert SeriesSuggestion.objects.get(pk=other.pk).state == "rejected"


def test_staff_without_the_permission_are_offered_no_action_and_change_nothing(watcher):
    a, b = Manga.objects.create(title="Tide"), Manga.objects.create(title="The Tide")
    client = _client(watcher)
    for model in ("series", "manga", "serieschange", "seriessuggestion"):
        page = client.get(f"/admin/catalog/{model}/")
        assert page.status_code == 403 or "merge_into_oldest" not in page.content.decode()
    _act(client, "series", "merge_into_oldest", [a.series_id, b.series_id])
    assert Manga.objects.get(pk=b.pk).series_id == b.pk and not SeriesChange.objects.exists()


def test_a_series_page_shows_each_chapters_served_source_and_alternates_and_switches_alternates(
    operator, django_assert_max_num_queries
):
    from catalog import series as service
    from catalog.models import Series
    from testsupport import api_factories as f

    alpha, beta = f.source("alpha"), f.source("beta")
    a, b = f.manga("Tide", src=alpha), f.manga("The Tide", src=beta)
    f.chapter(a, 1, src=alpha, sync_state="done")
    f.chapter(b, 1, src=beta)
    f.chapter(b, 2, src=beta, sync_state="done")
    service.merge_series(a.series, [b.series], via="test")
    client = _client(operator)
    url = f"/admin/catalog/series/{a.series_id}/change/"
    client.get(url)
    with django_assert_max_num_queries(30):
        page = client.get(url).content.decode()
    assert "<td>c1</td><td>alpha (done)</td><td>beta (new)</td>" in page
    assert "<td>c2</td><td>beta (done)</td><td>-</td>" in page
    assert f'href="/api/v1/library/series/{a.series_id}/"' in page
    form = {"title": "Tide", "source_order": "[]", "download_alternates": "on", "mangas-TOTAL_FORMS": "2"}
    form |= {"mangas-INITIAL_FORMS": "2", "mangas-MIN_NUM_FORMS": "0", "mangas-MAX_NUM_FORMS": "1000"}
    form |= {"mangas-0-id": str(a.pk), "mangas-0-series": str(a.series_id)}
    form |= {"mangas-1-id": str(b.pk), "mangas-1-series": str(a.series_id)}
    answer = client.post(url, form)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert Series.objects.get(pk=a.series_id).download_alternates is True
