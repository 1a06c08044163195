"""The mangadex kind through the product's doors: add_source, the factory's limiters, the metadata pass's summary."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Chapter, Manga, Source
from console.control.source_states import source_states
from crawler import state_store
from crawler.factory import get_source
from crawler.models import SourceThrottle
from crawler.passes.metadata_pass import run_metadata_pass
from jobs.worker.status.handle import StatusHandle
from sources.base import SourceChapter
from testsupport.mangadex.catalog import expected

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]


def add_source(*args: str) -> str:
    out = StringIO()
    call_command("add_source", *args, stdout=out)
    return out.getvalue()


def sets(values: dict) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--set", f"{key}={json.dumps(value)}")]


def test_add_source_knows_mangadex_by_its_address_and_prints_the_dry_run(mangadex_standin):
    output = add_source("https://mangadex.org/title/whatever", *sets(mangadex_standin.settings))
    row = Source.objects.get()
    assert (row.id, row.kind, row.base_url) == ("mangadex", "mangadex", "https://mangadex.org")
    assert "read through its API (kind mangadex" in output
    assert "list page 1: 2 manga(s), more pages" in output
    assert "title        The Night Gate" in output
    assert "chapter 1: 2 page(s), first http://127.0.0.1:" in output


@pytest.mark.parametrize(
    ("extra", "named"),
    [({"translated_languages": "en"}, "translated_languages"), ({"list_anchor": "a"}, "list_anchor"),
     ({"rate_limit": 20}, "rate_limit")],
)  # fmt: skip
def test_a_bad_setting_is_refused_naming_its_key_and_nothing_is_added(mangadex_standin, extra, named):
    with pytest.raises(CommandError, match=f"'{named}'"):
        add_source("https://mangadex.org", *sets({**mangadex_standin.settings, **extra}))
    assert not Source.objects.exists()


def test_an_api_that_does_not_answer_fails_the_dry_run_and_adds_nothing(mangadex_standin):
    dead = {**mangadex_standin.settings, "api_url": "http://127.0.0.1:9"}
    with pytest.raises(CommandError, match="dry run failed"):
        add_source("https://mangadex.org", *sets(dead))
    assert not Source.objects.exists()


def source(standin) -> Source:
    return Source.objects.create(
        id="md", name="MangaDex", kind="mangadex", base_url="https://mangadex.org", settings=standin.settings
    )


def test_the_metadata_pass_stores_the_catalog_and_reports_the_skipped_chapters(mangadex_standin):
    row = source(mangadex_standin)
    stats = run_metadata_pass(row, status=StatusHandle())
    want = expected(("en",))
    assert sorted(Manga.objects.values_list("title", flat=True)) == sorted(want)
    assert Chapter.objects.count() == sum(len(w["chapters"]) for w in want.values())
    assert (stats.chapters_external, stats.chapters_unavailable) == (1, 1)
    assert stats.walked_to_completion and stats.covers_fetched == len(want)
    summary = state_store.last_pass(row.id)
    assert (summary["chapters_external"], summary["chapters_unavailable"]) == (1, 1)
    # A second pass finds nothing new and stops at the first manga.
    again = run_metadata_pass(row, status=StatusHandle())
    assert again.stopped_early and again.discovered == 1


def test_each_chapters_pages_take_a_token_from_the_at_home_bucket_too(mangadex_standin):
    row = source(mangadex_standin)
    adapter = get_source(row)
    try:
        chapter = expected()["Crimson Tide"]["chapters"][0]
        adapter.chapter_pages(SourceChapter(key=chapter.id, number=chapter.number))
        adapter.chapter_pages(SourceChapter(key=chapter.id, number=chapter.number))
    finally:
        adapter.close()
    at_home = SourceThrottle.objects.get(source_id="md.at-home")
    assert 7.9 < at_home.tokens < 8.2  # two of its 10 taken
    assert SourceThrottle.objects.filter(source_id="md").exists()


def test_the_sources_page_shows_the_kinds_limits(mangadex_standin):
    source(mangadex_standin)
    [state] = [s for s in source_states() if s.source.id == "md"]
    assert (state.rate_limit, state.max_concurrency, state.settings_error) == (4.0, 2, "")


def test_the_probe_knows_mangadex_by_its_host_without_asking_it(no_outbound_allowance):
    from sources.discover import probe_site

    probe = probe_site("MangaDex.org/title/7f1d6c52-1b3e-4a07-9a33-6d2c0c4f1a01")
    assert (probe.kind, probe.base_url, probe.title, probe.source_settings()) == (
        "mangadex",
        "https://mangadex.org",
        "MangaDex",
        {},
    )
