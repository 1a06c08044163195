"""A Komga series list on a big library: `totalElements` exact for the whole list and capped for a filtered one;
a common word's ranked page cut from index walks, the same page as ranking every match."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import series as service
from reader.komga import ranking
from reader.komga.params import SeriesFilter, Sort
from reader.komga.totals import LEAN_COUNT, is_plain, page_total
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from reader.tests.komga_schema import assert_komga_valid

ALICE = basic("alice", PASSWORD)


def test_an_order_alone_keeps_the_list_plain_and_any_filter_does_not():
    assert is_plain(SeriesFilter()) and is_plain(SeriesFilter(sort=[Sort("name", False)]))
    assert not is_plain(SeriesFilter(search="tide")) and not is_plain(SeriesFilter(library_ids=["a"]))
    assert not is_plain(SeriesFilter(read_statuses=["UNREAD"])) and not is_plain(SeriesFilter(deleted=True))
    assert is_plain(SeriesFilter(deleted=False))  # what Mihon asks: nothing here is deleted


@pytest.mark.parametrize(
    ("counted", "exact", "offset", "shown", "more", "total"),
    [
        (7, True, 0, 5, True, 7),  # counted under the cap: the count
        (1000, False, 0, 20, True, 1001),  # past the cap on an early page: more than the cap
        (1000, False, 2000, 20, True, 2021),  # deep past the cap with rows after: one more than read so far
        (1000, False, 2000, 7, False, 2007),  # the last page says the total itself
        (1000, False, 5000, 0, False, 5000),  # past the end: no page follows
    ],
)
def test_a_capped_total_is_a_lower_bound_true_to_whether_a_page_follows(counted, exact, offset, shown, more, total):
    assert page_total(counted=counted, exact=exact, offset=offset, shown=shown, more=more) == total


def _page(client, url):
    response = client.get(url, **ALICE)
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert_komga_valid("/api/v1/series", "get", body)
    return body


def test_a_filtered_list_past_the_cap_pages_to_its_end(client, db, alice, settings):
    settings.CATALOG_SEARCH_COUNT_CAP = 2
    src = f.source("demo")
    for n in range(5):
        f.chapter(f.manga(f"Tide {n}", src=src), 1, src=src, pages=1)
    f.manga("Other", src=src)
    with CaptureQueriesContext(connection) as ran:
        first = _page(client, "/api/v1/series?search=tide&size=2&page=0")
    if connection.vendor == "postgresql":  # the capped count is not worth compiling
        assert any(q["sql"] == LEAN_COUNT for q in ran.captured_queries)
    assert (len(first["content"]), first["totalElements"], first["last"]) == (2, 3, False)
    second = _page(client, "/api/v1/series?search=tide&size=2&page=1")
    assert (len(second["content"]), second["last"]) == (2, False)
    third = _page(client, "/api/v1/series?search=tide&size=2&page=2")
    assert (len(third["content"]), third["totalElements"], third["last"]) == (1, 5, True)
    seen = {s["name"] for page in (first, second, third) for s in page["content"]}
    assert seen == {f"Tide {n}" for n in range(5)}
    # The whole list is counted exactly, whatever the cap.
    plain = _page(client, "/api/v1/series?size=2&page=0")
    assert (plain["totalElements"], plain["totalPages"], plain["last"]) == (6, 3, False)


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the cut walks PostgreSQL's search columns")
def test_a_cut_search_page_is_the_page_ranking_every_match_gives(client, db, alice, monkeypatch):
    src, mirror = f.source("demo"), f.source("mirror")
    for n in range(6):
        f.manga("Dragon " + "x" * n, src=src)  # own-title matches, shortest first
    f.manga("Lair", src=src, alt_titles=["Dragon Lair"])  # an alternative-title match
    plain = f.manga("Plain", src=src)
    service.merge_series(plain.series, [f.manga("Dragon Copy", src=mirror).series], via="test")  # through a copy
    url = "/api/v1/series?search=dragon&size=3&page={}"
    monkeypatch.setattr(ranking, "cut_threshold", lambda stop, library: 10**9)  # never cut: rank every match
    uncut = [s["name"] for n in range(3) for s in _page(client, url.format(n))["content"]]
    assert uncut[-1] == "Plain" and uncut[:2] == ["Dragon ", "Dragon x"] and len(uncut) == 8
    walked: list[str] = []
    monkeypatch.setattr(ranking, "cut_threshold", lambda stop, library: 1)  # cut whenever enough leads match
    for n in range(3):
        with connection.execute_wrapper(lambda run, sql, *rest: walked.append(sql) or run(sql, *rest)):
            cut = [s["name"] for s in _page(client, url.format(n))["content"]]
        assert cut == uncut[3 * n : 3 * n + 3]
    assert any(" UNION ALL " in sql for sql in walked)
