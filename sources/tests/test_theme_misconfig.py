"""Misconfigured theme sources: each mistake gives an error naming source, key, selector and URL.

Deterministic failures dead-letter at once (one attempt, the error as the
reason), are logged as warnings and counted in the pass summary; a refused
image is an ordinary fetch failure that never pauses the source; the end of a
list without a "next" link is a clean finish.
"""

from __future__ import annotations

import logging

import pytest

from catalog.models import Chapter, MangaSource
from crawler import state_store
from crawler.passes.metadata_pass import run_metadata_pass
from crawler.payloads import MetadataPass, SyncManga
from jobs import queue
from jobs.models import Job, JobState
from jobs.worker.status.handle import StatusHandle
from testsupport.theme_sites.expect import drain_crawl_worker, madara_source, themesia_source

pytestmark = pytest.mark.django_db(transaction=True)


def dead_jobs(kind: str) -> list[Job]:
    return list(Job.objects.filter(kind=kind, state=JobState.DEAD).order_by("created_at"))


def test_list_anchor_matching_nothing_dead_letters_the_pass_with_the_selector_and_url(madara_site, caplog):
    row = madara_source(madara_site, list_anchor="div.page-item-detail h4 a")
    queue.enqueue(MetadataPass(source_id=row.id))
    with caplog.at_level(logging.WARNING):
        drain_crawl_worker()
    expected = (
        "source 'madara': settings key 'list_anchor' (selector 'div.page-item-detail h4 a') matched nothing on "
        f"{madara_site.base_url}/manga/?m_orderby=latest"
    )
    [job] = dead_jobs("metadata_pass")
    assert (job.last_error, job.attempts) == (f"SelectorMatchedNothing: {expected}", 1)
    assert expected in caplog.text
    summary = state_store.last_pass(row.id)
    assert summary["config_errors"] == 1 and summary["discovered"] == 0
    assert not state_store.last_run_clean(row.id)


def test_chapter_item_matching_nothing_is_counted_per_manga_and_dead_letters_sync_manga(madara_site, caplog):
    row = madara_source(madara_site, chapter_item="li.chapter-row")
    with caplog.at_level(logging.WARNING):
        stats = run_metadata_pass(row, status=StatusHandle())
    url = f"{madara_site.base_url}/manga/crimson-tide/"
    expected = (
        f"source 'madara': settings key 'chapter_item' (selector 'li.chapter-row') matched nothing on {url}; "
        f"nor on the chapter_list_url answer {madara_site.base_url}/manga/crimson-tide/ajax/chapters/"
    )
    assert expected in caplog.text
    assert (stats.mangas_failed, stats.config_errors) == (5, 5)
    assert state_store.last_pass(row.id)["config_errors"] == 5
    queue.enqueue(SyncManga(source_id=row.id, source_manga_key="crimson-tide", url=url, title="Crimson Tide"))
    drain_crawl_worker()
    [job] = dead_jobs("sync_manga")
    assert (job.last_error, job.attempts) == (f"SelectorMatchedNothing: {expected}", 1)


def test_page_image_matching_nothing_dead_letters_the_chapter_at_once(mangathemesia_site, caplog):
    row = themesia_source(mangathemesia_site, page_image="div#reader img", page_script=None, page_script_path=None)
    queue.enqueue(MetadataPass(source_id=row.id))
    with caplog.at_level(logging.WARNING):
        drain_crawl_worker()
    jobs = dead_jobs("sync_chapter_content")
    assert len(jobs) == 12 and {j.attempts for j in jobs} == {1}
    chapter = Chapter.objects.get(source_chapter_key="crimson-tide-chapter-1")
    expected = (
        "source 'themesia': settings key 'page_image' (selector 'div#reader img') matched nothing on "
        f"{mangathemesia_site.base_url}/crimson-tide-chapter-1/"
    )
    assert f"SelectorMatchedNothing: {expected}" in {j.last_error for j in jobs}
    assert expected in caplog.text
    assert chapter.sync_state == Chapter.SyncState.FAILED


def test_page_script_finding_no_array_is_named_next_to_page_image(mangathemesia_site):
    pattern = r"ts_reader\.start\((\{)"
    row = themesia_source(mangathemesia_site, page_image="div#reader img", page_script=pattern)
    queue.enqueue(MetadataPass(source_id=row.id))
    drain_crawl_worker()
    errors = {j.last_error for j in dead_jobs("sync_chapter_content")}
    assert len(errors) == 12
    assert (
        "SelectorMatchedNothing: source 'themesia': settings key 'page_image' (selector 'div#reader img') matched "
        f"nothing on {mangathemesia_site.base_url}/paper-moon-chapter-2/; page_script {pattern!r} found "
        "no image array in the page's scripts"
    ) in errors


def test_chapter_list_id_matching_nothing_names_the_spec(madara_site):
    row = madara_source(madara_site, chapter_list_id="div#chapters-holder @data-id")
    stats = run_metadata_pass(row, status=StatusHandle())
    assert stats.config_errors == 5
    queue.enqueue(
        SyncManga(
            source_id=row.id, source_manga_key="paper-moon", url=f"{madara_site.base_url}/manga/paper-moon/", title=""
        )
    )
    drain_crawl_worker()
    [job] = dead_jobs("sync_manga")
    assert job.last_error == (
        "SelectorMatchedNothing: source 'madara': settings key 'chapter_list_id' (selector 'div#chapters-holder @data-id') matched nothing "
        f"on {madara_site.base_url}/manga/paper-moon/"
    )


def test_a_chapter_endpoint_answering_4xx_without_a_fallback_names_the_key(madara_site):
    row = madara_source(madara_site, chapter_list_fallback_url=None)
    url = f"{madara_site.base_url}/manga/silver-wolf/"
    queue.enqueue(SyncManga(source_id=row.id, source_manga_key="silver-wolf", url=url, title="Silver Wolf"))
    drain_crawl_worker()
    [job] = dead_jobs("sync_manga")
    assert (job.last_error, job.attempts) == (
        "SourceConfigError: source 'madara': settings key 'chapter_list_url': POST "
        f"{madara_site.base_url}/wp-admin/admin-ajax.php answered 400 (for {url})",
        1,
    )


def test_cdn_refusing_an_image_without_referer_is_a_fetch_error_not_a_session_expiry(mangathemesia_site):
    row = themesia_source(mangathemesia_site, image_referer="none")
    queue.enqueue(MetadataPass(source_id=row.id))
    drain_crawl_worker()
    failed = list(Job.objects.filter(kind="sync_chapter_content").exclude(last_error=""))
    assert len(failed) == 12
    assert all(j.state == JobState.PENDING and j.attempts == 1 for j in failed)  # retried later, like any fetch
    assert "answered 403 (the image host refused the request; check image_referer and headers)" in failed[0].last_error
    assert not state_store.session_expired(row.id)


def test_a_404_past_the_first_list_page_ends_the_walk_cleanly(madara_site):
    row = madara_source(madara_site, list_next=None)
    stats = run_metadata_pass(row, status=StatusHandle())
    assert stats.walked_to_completion and stats.discovered == 5 and stats.mangas_failed == 0
    assert state_store.last_run_clean(row.id)
    assert [r.path for r in madara_site.server.requests if r.path.startswith("/manga/page/4")] == ["/manga/page/4/"]


def test_a_404_on_a_detail_page_dead_letters_sync_manga_at_once(madara_site):
    row = madara_source(madara_site)
    url = f"{madara_site.base_url}/manga/gone-manga/"
    queue.enqueue(SyncManga(source_id=row.id, source_manga_key="gone-manga", url=url, title="Gone"))
    drain_crawl_worker()
    [job] = dead_jobs("sync_manga")
    assert (job.last_error, job.attempts) == (f"NotFound: source 'madara': {url} answered 404", 1)
    assert not MangaSource.objects.exists()


def test_unparsed_dates_are_counted_and_warned_once_per_pass(madara_site, caplog):
    # A chapter_date spec that reads the new chapters' badge link (a URL), not their date.
    row = madara_source(madara_site, chapter_date=["span.chapter-release-date a @href", "span.chapter-release-date i"])
    with caplog.at_level(logging.WARNING):
        stats = run_metadata_pass(row, status=StatusHandle())
    assert stats.dates_unparsed == 3 and state_store.last_pass(row.id)["dates_unparsed"] == 3
    warnings = [r.getMessage() for r in caplog.records if "could not be parsed" in r.getMessage()]
    examples = ", ".join(repr(madara_site.chapter_url(c)) for c in (m.chapters[-1] for m in madara_site.catalog[:3]))
    assert warnings == [
        f"source madara: 3 chapter date(s) could not be parsed (e.g. {examples}); "
        "check chapter_date, chapter_date_formats and date_language"
    ]
    assert Chapter.objects.filter(published_at__isnull=True).count() == 3
