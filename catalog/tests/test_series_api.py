"""The series API through real HTTP requests: who may merge, split, undo and decide suggestions, and what a bad
request does (a 4xx naming the problem, nothing changed)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts import api_keys
from catalog.models import Manga, Series, SeriesChange, SeriesSuggestion

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

API = "/api/v1/library/series"


@pytest.fixture
def pair():
    return Manga.objects.create(title="Tide"), Manga.objects.create(title="The Tide")


def _client(user=None, **headers):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    client.credentials(**headers)
    return client


def _merge(client, a, b):
    return client.post(f"{API}/merge/", {"target": str(a.series_id), "others": [str(b.series_id)]}, format="json")


def test_strangers_readers_and_staff_without_the_permission_merge_nothing(pair, alice, watcher):
    a, b = pair
    assert _merge(_client(), a, b).status_code == 401
    assert _merge(_client(alice), a, b).status_code == 403
    assert _merge(_client(watcher), a, b).status_code == 403
    assert _client(alice).get(f"{API}/suggestions/").status_code == 403
    assert _client(alice).get(f"{API}/changes/").status_code == 403
    assert not SeriesChange.objects.exists()
    assert Manga.objects.get(pk=b.pk).series_id == b.pk


def test_a_read_key_never_merges_even_an_operators(pair, operator):
    a, b = pair
    _, read = api_keys.mint(operator, "Mihon")
    _, operate = api_keys.mint(operator, "script", api_keys.OPERATE)
    assert _merge(_client(HTTP_X_API_KEY=read), a, b).status_code == 403
    assert _merge(_client(HTTP_X_API_KEY=operate), a, b).status_code == 201


def test_an_operator_merges_then_undoes_with_the_audit_naming_them(pair, operator):
    a, b = pair
    client = _client(operator)
    answer = _merge(client, a, b)
    assert answer.status_code == 201, answer.content
    assert (answer.json()["action"], answer.json()["actor"], answer.json()["via"]) == ("merge", "olga", "api")
    assert Manga.objects.get(pk=b.pk).series_id == a.pk
    listed = client.get(f"{API}/changes/").json()["results"]
    assert [c["id"] for c in listed] == [answer.json()["id"]]
    undo = client.post(f"{API}/changes/{answer.json()['id']}/undo/", {}, format="json")
    assert undo.status_code == 201 and undo.json()["undoes"] == answer.json()["id"]
    assert Manga.objects.get(pk=b.pk).series_id == b.pk
    again = client.post(f"{API}/changes/{answer.json()['id']}/undo/", {}, format="json")
    assert again.status_code == 409 and "already undone" in again.json()["detail"]


def test_an_operator_splits_and_orders_sources(pair, operator):
    a, b = pair
    client = _client(operator)
    _merge(client, a, b)
    split = client.post(f"{API}/split/", {"mangas": [str(b.pk)]}, format="json")
    assert split.status_code == 201 and Manga.objects.get(pk=b.pk).series_id == b.pk
    order = client.put(f"{API}/{a.series_id}/source-order/", {"sources": ["beta", "alpha"]}, format="json")
    assert order.status_code == 200 and Series.objects.get(pk=a.pk).source_order == ["beta", "alpha"]


def test_suggestions_are_listed_confirmed_and_rejected(pair, operator):
    a, b = pair
    c = Manga.objects.create(title="Tide!")
    kept = SeriesSuggestion.objects.create(first=a.series, second=b.series, evidence=["same title: tide"])
    other = SeriesSuggestion.objects.create(first=a.series, second=c.series)
    client = _client(operator)
    listed = client.get(f"{API}/suggestions/").json()["results"]
    assert [(s["first_title"], s["second_title"]) for s in listed] == [("Tide", "The Tide"), ("Tide", "Tide!")]
    assert client.post(f"{API}/suggestions/{kept.pk}/confirm/").status_code == 201
    assert client.post(f"{API}/suggestions/{other.pk}/reject/").json()["state"] == "rejected"
    assert Manga.objects.get(pk=b.pk).series_id == a.pk and Manga.objects.get(pk=c.pk).series_id == c.pk
    assert client.post(f"{API}/suggestions/{other.pk}/confirm/").status_code == 409


@pytest.mark.parametrize(
    "path, body, status, field",
    [
        ("merge/", {"target": "nope", "others": []}, 400, "target"),
        ("merge/", {"target": "00000000-0000-0000-0000-000000000009", "others": ["{a}"]}, 400, "target"),
        ("merge/", {"target": "{a}", "others": ["{a}"]}, 409, "detail"),
        ("split/", {"mangas": ["{a}"]}, 409, "detail"),
        ("split/", {"mangas": []}, 400, "mangas"),
        ("{a}/source-order/", {"sources": "alpha"}, 400, "sources"),
    ],
)
def test_bad_requests_are_refused_naming_the_field_and_change_nothing(pair, operator, path, body, status, field):
    a, _ = pair
    client = _client(operator)
    fill = {
        k: ([x.replace("{a}", str(a.pk)) for x in v] if isinstance(v, list) else v.replace("{a}", str(a.pk)))
        for k, v in body.items()
    }
    method = client.put if "source-order" in path else client.post
    answer = method(f"{API}/{path.replace('{a}', str(a.pk))}", fill, format="json")
    assert answer.status_code == status and field in answer.json(), answer.content
    assert not SeriesChange.objects.exists()


@pytest.mark.parametrize("body", [{"download_alternates": "maybe"}, {"download_alternates": "on\x00"}, {}, []])
def test_alternates_are_switched_by_holders_of_merge_series_and_a_bad_body_changes_nothing(pair, operator, alice, body):
    a, _ = pair
    url = f"{API}/{a.series_id}/alternates/"
    assert _client().put(url, {"download_alternates": True}, format="json").status_code == 401
    assert _client(alice).put(url, {"download_alternates": True}, format="json").status_code == 403
    refused = _client(operator).put(url, body, format="json")
    assert refused.status_code == 400, refused.content
    assert Series.objects.get(pk=a.series_id).download_alternates is False
    on = _client(operator).put(url, {"download_alternates": True}, format="json")
    assert on.json() == {"id": str(a.series_id), "download_alternates": True}
    assert Series.objects.get(pk=a.series_id).download_alternates is True
    missing = f"{API}/00000000-0000-0000-0000-000000000009/alternates/"
    gone = _client(operator).put(missing, {"download_alternates": True}, format="json")
    assert gone.status_code == 404
