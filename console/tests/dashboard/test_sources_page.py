"""The Sources page: each source's state in a fixed number of queries, add a site by URL, crawl now, settings."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import Source
from crawler import state_store
from crawler.models import AuditEvent, SourceThrottle
from crawler.payloads import MetadataPass
from jobs.models import Job
from testsupport import api_factories as f

pytestmark = pytest.mark.django_db

SOURCES = "/admin/crawler/sources/"
ADD = SOURCES + "add/"


@pytest.fixture
def client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")  # the admin's same-origin check on every POST
    client.force_login(operator)
    return client


def _source_with_state(source_id: str, *, dead: int, queued: int) -> Source:
    src = f.source(source_id, settings={"preset": "madara", "rate_limit": 0.5, "max_concurrency": 3})
    manga = f.manga(src=src)
    for n in range(queued):
        f.chapter(manga, n + 1, src=src, sync_state="queued")
    for n in range(dead):
        f.dead_content_job(f.chapter(manga, 100 + n, src=src, sync_state="failed"))
    return src


def test_the_list_shows_each_sources_state_in_a_fixed_number_of_queries(client, django_assert_num_queries):
    now = timezone.now()
    _source_with_state("alpha", dead=2, queued=3)
    state_store.save_last_pass(
        "alpha", {"at": (now - dt.timedelta(minutes=5)).isoformat(), "discovered": 7, "upserted": 4}
    )
    SourceThrottle.objects.create(source_id="alpha", tokens=0, cooling_until=now + dt.timedelta(minutes=2),
                                  cooling_reason="429 from the site")  # fmt: skip
    client.get(SOURCES)  # the signed-in user is read once a burst: both counts below see it remembered
    # 3 for the session and the user's permissions, then one per column, whatever the number of sources,
    # and 2 for the paused notice (the disk floor in force, the live workers' reports).
    with django_assert_num_queries(13) as one_source:
        page = client.get(SOURCES).content.decode()
    row = page.split('<tr data-source="alpha"')[1].split("</tr>")[0]
    assert "7 found, 4 updated" in row
    assert '<td data-col="chapters-queued" data-label="Chapters queued">3</td>' in row
    assert ">2</a></td>" in row.split('data-col="dead-jobs"')[1]
    assert "429 from the site" in row and "0.5/s, 3 at once" in row

    for n in range(4):
        _source_with_state(f"more-{n}", dead=1, queued=1)
    f.job(MetadataPass(source_id="more-0"))
    with django_assert_num_queries(len(one_source.captured_queries)):
        page = client.get(SOURCES).content.decode()
    assert "queued or running" in page.split('data-source="more-0"')[1].split("</tr>")[0]


def test_look_at_a_madara_site_detects_it_and_shows_the_dry_run_without_saving(client, madara_site):
    page = client.post(ADD, {"step": "detect", "url": madara_site.base_url + "/"}).content.decode()
    assert f"{madara_site.base_url} runs the madara theme (" in page
    assert "List page 1: 2 manga(s), more pages" in page
    assert "Crimson Tide <code>crimson-tide</code>" in page
    assert '<th scope="row">alt titles</th><td>Akai Shio | Red Tide</td>' in page
    assert "key=" not in page and "<code>manga/crimson-tide/chapter-3</code>" in page
    assert 'value="Madara Fixture"' in page and '<option value="madara" selected>' in page
    assert not Source.objects.exists() and not AuditEvent.objects.exists()


def test_look_at_the_site_shows_what_was_found_and_starts_the_settings_from_it(client):
    from testsupport.theme_sites.locales import SPANISH
    from testsupport.theme_sites.mangathemesia import MangaThemesiaSite

    site = MangaThemesiaSite(directory="series", locale=SPANISH, base_path="/lector")
    try:
        page = client.post(ADD, {"step": "detect", "url": site.base_url + "/"}).content.decode()
    finally:
        site.stop()
    assert '<ul id="cs-findings"' in page
    for finding in ("installed under /lector/", "language es (from &lt;html lang&gt;)", "manga path /series/"):
        assert finding in page
    extra = f"{{&quot;date_language&quot;: &quot;es&quot;, &quot;manga_path&quot;: &quot;series&quot;, &quot;image_hosts&quot;: [&quot;{site.cdn.host_port}&quot;]}}"
    assert extra in page
    assert f'value="{site.base_url}"' in page  # the base URL kept with its sub-path
    assert "List page 1: 2 manga(s), more pages" in page  # the dry run ran with what was found
    assert not Source.objects.exists()


def test_add_source_saves_on_confirm_audits_it_and_crawl_now_enqueues_the_pass(client, operator, madara_site):
    form = {"step": "confirm", "action": "add", "url": madara_site.base_url, "base_url": madara_site.base_url,
            "name": "Madara Fixture", "source_id": "", "preset": "madara", "extra": "", "crawl_now": "on"}  # fmt: skip
    response = client.post(ADD, form)
    assert response.status_code == 302 and response["Location"] == SOURCES
    row = Source.objects.get(id="madara-fixture")
    assert (row.base_url, row.settings) == (madara_site.base_url, {"preset": "madara"})
    audit = AuditEvent.objects.get(action="add_source")
    assert (audit.actor, audit.target_id) == (operator, "madara-fixture")
    assert Job.objects.get(kind="metadata_pass").payload["source_id"] == "madara-fixture"
    assert "its first crawl is queued" in client.get(SOURCES).content.decode()


def test_a_plain_site_says_which_preset_to_pick_and_a_failing_dry_run_adds_nothing(client, plain_site):
    page = client.post(ADD, {"step": "detect", "url": plain_site.base_url}).content.decode()
    assert f"no known manga theme found on {plain_site.base_url}. Pick the preset by hand" in page
    assert "madara-load-more: Madara whose archive has a" in page
    assert 'id="cs-dry-run"' not in page and 'disabled title="Run the dry run first"' in page

    form = {"step": "confirm", "action": "add", "url": plain_site.base_url, "base_url": plain_site.base_url,
            "name": "Plain Blog", "source_id": "", "preset": "madara", "extra": ""}  # fmt: skip
    page = client.post(ADD, form).content.decode()
    assert "dry run failed, source not added: source &#x27;plain-blog&#x27;:" in page
    assert not Source.objects.exists() and not AuditEvent.objects.exists()


def test_settings_errors_are_the_clis_and_keep_the_stored_settings(client, madara_site):
    from io import StringIO

    from django.core.management import CommandError, call_command

    src = f.source("site", settings={"preset": "madara"})
    url = f"{SOURCES}site/settings/"
    page = client.post(url, {"settings": '{"preset": "madara", "titel": "h1"}'}).content.decode()
    with pytest.raises(CommandError) as cli:
        call_command("add_source", "Site", madara_site.base_url, "--preset", "madara", "--set", "titel=h1",
                     "--id", "site2", stdout=StringIO())  # fmt: skip
    assert "unknown settings key &#x27;titel&#x27;" in page and "unknown settings key 'titel'" in str(cli.value)
    assert client.post(url, {"settings": "{nope"}).content.decode().count("not valid JSON") == 1
    src.refresh_from_db()
    assert src.settings == {"preset": "madara"} and not AuditEvent.objects.exists()

    response = client.post(url, {"settings": '{"preset": "madara", "rate_limit": 0.25}'})
    assert response.status_code == 302
    src.refresh_from_db()
    assert src.settings == {"preset": "madara", "rate_limit": 0.25}
    assert AuditEvent.objects.get().action == "change_source"


def test_crawl_now_enqueues_once_and_says_so_when_one_is_in_flight(client):
    f.source("site")
    url = f"{SOURCES}site/crawl/"
    first = client.post(url, follow=True).content.decode()
    second = client.post(url, follow=True).content.decode()
    assert "Metadata pass of site queued" in first
    assert "already queued or running" in second
    assert Job.objects.filter(kind="metadata_pass").count() == 1
    assert client.get(url).status_code == 405


def test_mangadex_by_its_address_asks_for_languages_then_dry_runs_and_saves_the_kind(client, mangadex_standin):
    import json

    page = client.post(ADD, {"step": "detect", "url": "https://mangadex.org/"}).content.decode()
    assert "https://mangadex.org is MangaDex, read through its API (kind mangadex)" in page
    assert 'name="kind" value="mangadex"' in page
    assert 'id="cs-dry-run"' not in page  # nothing asked of the live site: the languages come first
    assert not mangadex_standin.exchanges

    extra = json.dumps({**mangadex_standin.settings, "translated_languages": ["en"]})
    form = {"step": "confirm", "action": "preview", "url": "https://mangadex.org/", "base_url": "https://mangadex.org",
            "kind": "mangadex", "name": "MangaDex", "source_id": "", "preset": "", "extra": extra}  # fmt: skip
    page = client.post(ADD, form).content.decode()
    assert "List page 1: 2 manga(s), more pages" in page and "The Night Gate" in page
    assert not Source.objects.exists()

    response = client.post(ADD, {**form, "action": "add"})
    assert response.status_code == 302
    row = Source.objects.get(id="mangadex")
    assert (row.kind, row.base_url, row.settings["translated_languages"]) == (
        "mangadex",
        "https://mangadex.org",
        ["en"],
    )

    bad = {**form, "extra": json.dumps({**mangadex_standin.settings, "data_saver": "yes"}), "source_id": "md2"}
    page = client.post(ADD, bad).content.decode()
    assert "&#x27;data_saver&#x27; must be true or false" in page
    assert not Source.objects.filter(id="md2").exists()
