"""The operator's lists on big tables: seek (cursor) pages, capped counts, bounded search, fixed admin filters."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from crawler.payloads import SyncChapterContent, SyncManga
from jobs.models import Job
from testsupport import api_factories as f

BASE = "/api/v1/admin/crawler/"


@pytest.fixture
def client(staff):
    return f.api_client(staff)


@pytest.fixture
def tied_history(db):
    """Seven jobs sharing one updated_at (one statement acks a batch), and five more a little earlier."""
    src = f.source("demo")
    m = f.manga("Tied", src=src)
    jobs = [
        f.job(SyncChapterContent(source_id="demo", chapter_id=f.chapter(m, n, src=src).id, source_chapter_key=str(n)))
        for n in range(12)
    ]
    now = timezone.now()
    Job.objects.filter(id__in=[j.id for j in jobs[:7]]).update(updated_at=now)
    Job.objects.filter(id__in=[j.id for j in jobs[7:]]).update(updated_at=now - timezone.timedelta(seconds=5))
    return jobs


def follow(client, url, params):
    """Every row of every page, following `next` links from the first page."""
    seen, response = [], client.get(url, params)
    while True:
        body = response.json()
        assert response.status_code == 200, body
        seen += [row["id"] for row in body["results"]]
        if not body["next"]:
            return seen, body
        assert "after=" in body["next"]
        response = client.get(body["next"])


@pytest.mark.sqlite_ok
def test_history_next_links_seek_through_ties_with_every_row_once_in_order(client, tied_history):
    seen, _ = follow(client, BASE + "history/", {"page_size": 5})
    expected = [str(pk) for pk in Job.objects.order_by("-updated_at", "-id").values_list("id", flat=True)]
    assert seen == expected and len(seen) == 12


@pytest.mark.sqlite_ok
def test_counts_stop_at_the_cap_and_say_so(client, tied_history, settings):
    settings.CATALOG_SEARCH_COUNT_CAP = 5
    body = client.get(BASE + "history/").json()
    assert (body["count"], body["count_exact"], len(body["results"])) == (5, False, 12)
    backlog = client.get(BASE + "backlog/", {"page_size": 4}).json()["active_jobs"]
    assert (backlog["count"], backlog["count_exact"]) == (5, False)
    settings.CATALOG_SEARCH_COUNT_CAP = 1000
    assert client.get(BASE + "history/").json()["count_exact"] is True


@pytest.mark.sqlite_ok
def test_backlog_next_after_cursor_continues_in_lease_order(client, tied_history):
    lease_order = [
        str(pk) for pk in Job.objects.order_by("scheduled_at", "created_at", "id").values_list("id", flat=True)
    ]
    first = client.get(BASE + "backlog/", {"page_size": 5}).json()["active_jobs"]
    second = client.get(BASE + "backlog/", {"page_size": 5, "page": 2, "after": first["next_after"]}).json()
    ids = [row["id"] for row in first["results"] + second["active_jobs"]["results"]]
    assert ids == lease_order[:10]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("route", ["history/", "dead-jobs/", "backlog/"])
def test_a_cursor_this_server_did_not_write_is_a_400(client, tied_history, route):
    response = client.get(BASE + route, {"after": "bm90IGEgY3Vyc29y"})
    assert response.status_code == 400
    assert "cursor" in str(response.json())


@pytest.mark.sqlite_ok
def test_history_previous_links_seek_back_to_the_first_page_through_ties(client, tied_history):
    pages, response = [], client.get(BASE + "history/", {"page_size": 5})
    while True:
        body = response.json()
        pages.append([row["id"] for row in body["results"]])
        if not body["next"]:
            break
        response = client.get(body["next"])
    assert [len(page) for page in pages] == [5, 5, 2]
    back = [pages[-1]]
    while body["previous"]:
        assert "before=" in body["previous"] or "page=1" in body["previous"]
        body = client.get(body["previous"]).json()
        back.append([row["id"] for row in body["results"]])
    assert back[1:] == pages[-2::-1]  # the same pages, the same rows, in order, back to page 1
    assert body["previous"] is None


@pytest.mark.sqlite_ok
def test_backlog_previous_before_cursor_returns_the_page_before(client, tied_history):
    first = client.get(BASE + "backlog/", {"page_size": 4}).json()["active_jobs"]
    assert first["previous_before"] is None
    second = client.get(BASE + "backlog/", {"page_size": 4, "page": 2, "after": first["next_after"]}).json()
    third = client.get(
        BASE + "backlog/", {"page_size": 4, "page": 3, "after": second["active_jobs"]["next_after"]}
    ).json()
    again = client.get(
        BASE + "backlog/", {"page_size": 4, "page": 2, "before": third["active_jobs"]["previous_before"]}
    ).json()
    assert again["active_jobs"]["results"] == second["active_jobs"]["results"]


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(("route", "cursor"), [("history/", "after"), ("dead-jobs/", "after"), ("backlog/", "after")])
def test_a_deep_page_by_number_is_a_400_naming_the_cursor_to_follow(client, tied_history, route, cursor, monkeypatch):
    from catalog.api import seek

    monkeypatch.setattr(seek, "MAX_OFFSET_ROWS", 5)
    shallow = client.get(BASE + route, {"page_size": 5, "page": 2})
    assert shallow.status_code in (200, 404)  # within the bound: an offset page (dead-jobs/ has none to show)
    deep = client.get(BASE + route, {"page_size": 5, "page": 3})
    assert deep.status_code == 400
    assert f"`{cursor}` cursor" in str(deep.json()["page"])


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    ("route", "param"), [("history/", "before"), ("backlog/", "before"), ("backlog/", "covers_before")]
)
def test_a_bad_before_cursor_is_a_400_naming_it(client, tied_history, route, param):
    response = client.get(BASE + route, {param: "bm90IGEgY3Vyc29y"})
    assert response.status_code == 400
    assert "cursor" in str(response.json()[param])


@pytest.mark.sqlite_ok
def test_search_finds_sync_manga_by_payload_title_and_others_by_manga_title(client, db):
    src = f.source("demo")
    kept = f.manga("Vinland Saga", src=src)
    f.job(SyncChapterContent(source_id="demo", chapter_id=f.chapter(kept, 1, src=src).id, source_chapter_key="1"))
    f.job(SyncManga(source_id="demo", source_manga_key="v", url="", title="Vinland Prequel"))
    other = f.manga("Berserk", src=src)
    f.job(SyncChapterContent(source_id="demo", chapter_id=f.chapter(other, 1, src=src).id, source_chapter_key="2"))
    rows = client.get(BASE + "history/", {"q": "vinland"}).json()["results"]
    assert sorted(r["label"] for r in rows) == ["Vinland Prequel", "Vinland Saga — chapter 1"]


def test_job_admin_kind_filter_lists_registered_kinds_without_scanning_the_table(admin_client, db):
    f.job(SyncManga(source_id="demo", source_manga_key="v", url="", title="Vinland"))
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get("/admin/jobs/job/", {"kind__exact": "sync_manga"})
    assert response.status_code == 200
    assert b"analyze_page" in response.content  # a kind with no job still offered: the registry's list
    assert not [q["sql"] for q in queries if "DISTINCT" in q["sql"].upper()]
    assert not [q["sql"] for q in queries if "COUNT(*)" in q["sql"] and "LIMIT" not in q["sql"]]


def test_queue_counts_are_exact_under_the_bound_and_marked_estimated_over_it(db, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("estimates are the PostgreSQL planner's")
    from jobs import counts

    for n in range(5):
        f.job(SyncManga(source_id="demo", source_manga_key=f"k{n}", url="", title=f"T{n}"))
    assert counts.queue_counts()["sync_manga"] == {"pending": 5, "running": 0, "dead": 0}
    monkeypatch.setattr(counts, "COUNT_EXACT_UP_TO", 3)
    counted = counts.queue_counts()["sync_manga"]
    assert counted["estimated"] == ["pending"] and counted["pending"] >= 3
    assert (counted["running"], counted["dead"]) == (0, 0)


def test_requeue_all_is_one_statement_whatever_the_number_of_dead_jobs(db, operator, django_assert_max_num_queries):
    if connection.vendor != "postgresql":
        pytest.skip("the set-based requeue is PostgreSQL's; SQLite revives job by job")
    from console.control import actions

    src = f.source("demo")
    m = f.manga("Dead end", src=src)
    for n in range(40):
        f.dead_content_job(f.chapter(m, n, src=src))
    # The requeue statement, the wake-up NOTIFY, the audit row (and their savepoints).
    with django_assert_max_num_queries(8):
        assert actions.requeue(actor=operator, scope="all", confirm=True) == 40
    assert Job.objects.filter(state="pending").count() == 40


def test_job_admin_pages_50_rows_each_linked_and_selectable_in_a_fixed_number_of_queries(admin_client, db):
    jobs = [f.job(SyncManga(source_id="demo", source_manga_key=f"k{n}", url="", title=f"Title {n}")) for n in range(60)]
    admin_client.get("/admin/")  # the signed-in user is read once a burst: both counts below see it remembered
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get("/admin/jobs/job/", {"o": "1"})
    html = response.content.decode()
    assert response.status_code == 200
    shown = [job for job in jobs if f'value="{job.id}" class="action-select"' in html]
    assert len(shown) == 50 == html.count('class="action-select"')
    assert all(f'href="/admin/jobs/job/{job.id}/change/' in html for job in shown)
    assert 'id="action-toggle"' in html and 'href="?o=1&amp;p=2"' in html
    few = len(queries)
    Job.objects.filter(id__in=[job.id for job in jobs[:40]]).delete()
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get("/admin/jobs/job/").status_code == 200
    assert len(queries) == few  # rows cost no query each


@pytest.mark.sqlite_ok
def test_the_schema_documents_both_cursors_and_the_page_number_bound(tmp_path):
    import yaml
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(out))
    schema = yaml.safe_load(out.read_text())
    for route in ("history/", "dead-jobs/", "backlog/"):
        params = {p["name"]: p for p in schema["paths"][BASE + route]["get"]["parameters"]}
        assert {"after", "before", "page"} <= set(params), route
        documented = params["after"].get("description", "") + params["page"].get("description", "")
        assert "2,000" in documented, route  # the 400 past the offset bound is documented
    backlog_page = schema["components"]["schemas"]["ActiveJobsPage"]["properties"]
    assert {"next_after", "previous_before"} <= set(backlog_page)


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("page", [1, 2, 3, 42, 10_000])
def test_the_backlog_answers_any_page_number_beside_the_jobs_cursor(client, tied_history, monkeypatch, page):
    """`page` numbers the jobs' page; the covers list pages on its own (`covers_page`), so a deep jobs page by
    cursor never turns into an offset walk of the covers that would be refused."""
    from catalog.api import seek

    monkeypatch.setattr(seek, "MAX_OFFSET_ROWS", 5)
    first = client.get(BASE + "backlog/", {"page_size": 4}).json()
    response = client.get(
        BASE + "backlog/", {"page_size": 4, "page": page, "after": first["active_jobs"]["next_after"]}
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["page"], body["covers_page"]) == (page, 1)
    assert len(body["active_jobs"]["results"]) == 4


@pytest.mark.sqlite_ok
def test_the_backlog_covers_page_by_their_own_number_and_name_their_cursor_when_too_deep(
    client, tied_history, monkeypatch
):
    from catalog.api import seek

    monkeypatch.setattr(seek, "MAX_OFFSET_ROWS", 5)
    shallow = client.get(BASE + "backlog/", {"page_size": 5, "covers_page": 2, "page": 1})
    assert shallow.status_code == 200
    assert shallow.json()["covers_page"] == 2
    deep = client.get(BASE + "backlog/", {"page_size": 5, "covers_page": 3})
    assert deep.status_code == 400
    assert "`covers_after` cursor" in str(deep.json()["covers_page"])


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("route", ["backlog/", "history/", "dead-jobs/"])
def test_a_search_naming_more_mangas_than_it_looks_at_shows_some_of_their_jobs_and_counts_more_than(
    client, monkeypatch, route
):
    """A common word: the jobs of at most SEARCH_MANGAS of the mangas it names are listed, and the count
    says it is a lower bound; a search within the bound counts exactly."""
    from console.control import backlog

    src = f.source("demo")
    for n in range(5):
        m = f.manga(f"Common word {n}", src=src)
        job = f.job(
            SyncChapterContent(source_id="demo", chapter_id=f.chapter(m, 1, src=src).id, source_chapter_key="1")
        )
        if route == "dead-jobs/":
            Job.objects.filter(id=job.id).update(state="dead")
    monkeypatch.setattr(backlog, "SEARCH_MANGAS", 3)

    body = client.get(BASE + route, {"q": "common"}).json()
    listed = body["active_jobs"] if route == "backlog/" else body
    assert (len(listed["results"]), listed["count"], listed["count_exact"]) == (3, 3, False)
    one = client.get(BASE + route, {"q": "word 4"}).json()
    listed = one["active_jobs"] if route == "backlog/" else one
    assert (len(listed["results"]), listed["count_exact"]) == (1, True)
