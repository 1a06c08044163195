"""`manage.py add_source NAME BASE_URL --preset ...`: validated settings, a readable dry run, nothing kept on error."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Source
from crawler.models import AuditEvent
from jobs.models import Job

pytestmark = pytest.mark.django_db


def add_source(*args: str) -> str:
    out = StringIO()
    call_command("add_source", *args, stdout=out)
    return out.getvalue()


def test_add_source_with_a_preset_creates_the_row_and_prints_a_dry_run(madara_site):
    output = add_source("Madara Fixture", madara_site.base_url, "--preset", "madara")
    row = Source.objects.get(id="madara-fixture")
    assert (row.kind, row.base_url, row.settings) == ("html", madara_site.base_url, {"preset": "madara"})
    assert "list page 1: 2 manga(s), more pages" in output
    assert f"crimson-tide                   Crimson Tide  <{madara_site.base_url}/manga/crimson-tide/>" in output
    assert "alt titles   Akai Shio | Red Tide" in output
    assert "status       ongoing" in output
    assert "chapters     3" in output
    assert "key=manga/crimson-tide/chapter-3" in output
    assert "chapter 1: 3 page(s), first " in output
    assert "added source 'madara-fixture'" in output


def test_set_values_are_json_when_they_parse(mangathemesia_site):
    add_source(
        "Themesia",
        mangathemesia_site.base_url,
        "--preset",
        "mangathemesia",
        "--set",
        f'image_hosts=["{mangathemesia_site.cdn.host_port}"]',
        "--set",
        "list_next=null",
        "--set",
        "chapter_title=.chapternum",
    )
    assert Source.objects.get(id="themesia").settings == {
        "preset": "mangathemesia",
        "image_hosts": [mangathemesia_site.cdn.host_port],
        "list_next": None,
        "chapter_title": ".chapternum",
    }


def test_a_failing_dry_run_names_the_key_and_adds_nothing(madara_site):
    with pytest.raises(CommandError) as caught:
        add_source("Madara", madara_site.base_url, "--preset", "madara", "--set", "chapter_item=li.chapter-row")
    assert str(caught.value) == (
        "dry run failed, source not added: source 'madara': settings key 'chapter_item' (selector 'li.chapter-row') "
        f"matched nothing on {madara_site.base_url}/manga/crimson-tide/; nor on the chapter_list_url answer "
        f"{madara_site.base_url}/manga/crimson-tide/ajax/chapters/"
    )
    assert not Source.objects.exists()


def test_bad_settings_are_refused_before_any_request(madara_site):
    with pytest.raises(CommandError, match="unknown settings key 'titel'"):
        add_source("Madara", madara_site.base_url, "--preset", "madara", "--set", "titel=h1")
    with pytest.raises(CommandError, match="expected key=value"):
        add_source("Madara", madara_site.base_url, "--set", "title")
    assert not Source.objects.exists() and madara_site.server.requests == []


def test_without_a_preset_the_theme_is_detected_and_the_name_comes_from_the_site(madara_load_more_site):
    output = add_source(madara_load_more_site.base_url)
    row = Source.objects.get(id="madara-fixture")
    assert (row.name, row.settings) == ("Madara Fixture", {"preset": "madara-load-more"})
    assert output.startswith(f"{madara_load_more_site.base_url} runs the madara-load-more theme (")
    assert "list page 1: 2 manga(s), more pages" in output


def test_a_site_matching_no_theme_is_refused_with_the_presets_to_pick(plain_site):
    with pytest.raises(CommandError) as caught:
        add_source(plain_site.base_url)
    message = str(caught.value)
    assert message.startswith(f"no known manga theme found on {plain_site.base_url}. Pick the preset by hand")
    assert message.endswith(f"Then: add_source {plain_site.base_url} --preset NAME")
    assert not Source.objects.exists()


def test_the_last_line_says_when_the_first_crawl_starts_and_how_to_start_it_now(mangathemesia_site, settings):
    import datetime as dt

    from crawler import state_store

    settings.CRAWLER_METADATA_INTERVAL = 1800
    last = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10)  # the workers scheduled a pass 10 minutes ago
    state_store.set_state(state_store.METADATA_SCHEDULE_KEY, last.isoformat())
    next_pass = last + dt.timedelta(minutes=30)
    output = add_source(
        "Themesia", mangathemesia_site.base_url, "--set", f'image_hosts=["{mangathemesia_site.cdn.host_port}"]'
    )
    assert Source.objects.get(id="themesia").settings["preset"] == "mangathemesia"
    assert output.rstrip().splitlines()[-1] == (
        f"The first crawl of 'themesia' starts with the next scheduled metadata pass, at {next_pass:%Y-%m-%d %H:%M} UTC "
        "(every CRAWLER_METADATA_INTERVAL=1800 s, while a crawl worker runs). To start it now: "
        "python manage.py metadata_pass --source themesia --enqueue (or 'Crawl now' on the Sources page)."
    )
    assert not Job.objects.exists()


def test_crawl_now_enqueues_the_first_metadata_pass_and_audits_the_addition(madara_site):
    output = add_source("Madara", madara_site.base_url, "--preset", "madara", "--crawl-now")
    job = Job.objects.get()
    assert (job.kind, job.payload["source_id"]) == ("metadata_pass", "madara")
    assert f"First crawl enqueued (job {job.id})" in output
    assert list(AuditEvent.objects.order_by("created_at").values_list("action", "target_id")) == [
        ("add_source", "madara"),
        ("run_metadata_pass", "madara"),
    ]


def test_what_the_probe_found_is_printed_and_becomes_the_settings():
    from testsupport.theme_sites.locales import PORTUGUESE
    from testsupport.theme_sites.madara import MadaraSite

    site = MadaraSite(directory="comic", base_path="/x", locale=PORTUGUESE)
    try:
        output = add_source(site.server.base_url + "/x/comic/crimson-tide/")  # a manga page deep inside the install
    finally:
        site.stop()
    row = Source.objects.get()
    assert row.base_url == site.base_url
    assert row.settings == {
        "preset": "madara",
        "manga_path": "comic",
        "date_language": "pt",
        "chapter_date_formats": ["%d/%m/%Y"],
    }
    for finding in (
        "found: installed under /x/ (its WordPress links say so)",
        "found: language pt (from <html lang>)",
        "found: manga path /comic/ (from 2 manga link(s) on the home page)",
        "found: chapter dates %d/%m/%Y (day first: ",
        "(correct any of these with --set KEY=VALUE: chapter_date_formats, date_language, manga_path)",
    ):
        assert finding in output


def test_set_corrects_what_the_probe_found(madara_site):
    add_source(madara_site.base_url, "--set", "date_language=es", "--set", "manga_path=manga")
    assert Source.objects.get().settings == {"preset": "madara", "date_language": "es", "manga_path": "manga"}
