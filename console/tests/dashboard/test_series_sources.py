"""Which source served what in series with several sources: the figures (chapters served, failovers from and to
each source, the latest failovers), the operator API that returns them and the dashboard section that draws them,
in a bounded number of queries whatever the library's size."""

from __future__ import annotations

import pytest
from django.test import Client

from catalog import series as service
from console.status.series_sources import series_sources
from crawler import audit
from testsupport import api_factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

API = "/api/v1/admin/crawler/series-sources/"


@pytest.fixture
def library():
    """Two series across alpha and beta (each chapter downloaded once, one of them after a failover) and one manga
    alone on gamma, whose downloads are not a series' and do not count."""
    alpha, beta, gamma = f.source("alpha"), f.source("beta"), f.source("gamma")
    tide_a, tide_b = f.manga("The Tide", src=alpha), f.manga("The Tide", src=beta)
    lost = f.chapter(tide_a, 1, src=alpha, sync_state="failed")
    served = f.chapter(tide_b, 1, src=beta, sync_state="done")
    f.chapter(tide_a, 2, src=alpha, sync_state="done")
    f.chapter(tide_b, 2, src=beta)
    frieren_a, frieren_b = f.manga("Frieren", src=alpha), f.manga("Frieren", src=beta)
    f.chapter(frieren_a, 1, src=alpha, sync_state="done")
    f.chapter(frieren_b, 1, src=beta)
    service.merge_series(tide_a.series, [tide_b.series], via="test")
    service.merge_series(frieren_a.series, [frieren_b.series], via="test")
    f.chapter(f.manga("Harbour", src=gamma), 1, src=gamma, sync_state="done")
    detail = {"from": "alpha", "to": "beta", "chapter": str(served.pk), "reason": "404"}
    audit.record(None, "series_failover", scope="chapter", target_id=lost.pk, detail=detail)
    return tide_a


def test_each_source_counts_what_it_served_and_its_failovers_and_the_latest_failover_is_named(library):
    stats = series_sources(fresh=True)
    assert stats["sources"] == [
        {"source_id": "alpha", "served": 2, "failovers_from": 1, "failovers_to": 0},
        {"source_id": "beta", "served": 1, "failovers_from": 0, "failovers_to": 1},
    ]
    (latest,) = stats["recent_failovers"]
    assert {k: latest[k] for k in ("series_id", "series", "chapter", "from", "to", "reason")} == {
        "series_id": str(library.series_id),
        "series": "The Tide",
        "chapter": "c1",
        "from": "alpha",
        "to": "beta",
        "reason": "404",
    }


def test_the_figures_take_a_bounded_number_of_queries(library, django_assert_max_num_queries):
    for n in range(30):
        audit.record(None, "series_failover", detail={"from": "alpha", "to": f"mirror-{n % 3}", "chapter": "nope"})
    with django_assert_max_num_queries(6):
        stats = series_sources(fresh=True)
    assert len(stats["recent_failovers"]) == 20
    assert stats["recent_failovers"][0]["series"] == "", "an audit row naming no chapter is listed without one"


def test_staff_read_them_over_the_operator_api_and_on_the_dashboard(library, watcher, alice):
    client = Client()
    client.force_login(watcher)
    answer = client.get(API)
    assert answer.status_code == 200
    assert [(s["source_id"], s["served"]) for s in answer.json()["sources"]] == [("alpha", 2), ("beta", 1)]
    page = client.get("/admin/crawler/").content.decode()
    assert 'id="cd-series-sources"' in page
    assert '<tr data-source="beta"><td>beta</td><td>1</td><td>0</td><td>1</td></tr>' in page
    assert f'href="/admin/catalog/series/{library.series_id}/change/">The Tide</a>' in page
    client.force_login(alice)
    assert client.get(API).status_code == 403


def test_without_series_of_several_sources_the_section_says_so(watcher):
    client = Client()
    client.force_login(watcher)
    assert "No series with several sources" in client.get("/admin/crawler/").content.decode()
