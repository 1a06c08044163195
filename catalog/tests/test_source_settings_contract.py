"""One settings contract per source: every app's keys in one validator, used by add_source, the admin and the crawl."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from catalog.models import Source
from catalog.source_settings import SourceSettingsError, validate_settings
from crawler.factory import get_source

pytestmark = pytest.mark.django_db


def test_crawler_accepts_reader_keys_on_an_html_source_so_a_right_to_left_source_crawls(madara_site):
    row = Source.objects.create(
        id="rtl",
        name="RTL",
        kind="html",
        base_url=madara_site.base_url,
        settings={"preset": "madara", "reading_direction": "rtl", "language": "ja"},
    )
    adapter = get_source(row)
    try:
        refs, _ = adapter.list_page(1)
    finally:
        adapter.close()
    assert [r.title for r in refs] == ["Crimson Tide", "Silver Wolf"]


def test_add_source_takes_reader_keys(madara_site):
    out = StringIO()
    call_command(
        "add_source", "Japanese Site", madara_site.base_url, "--preset", "madara",
        "--set", "reading_direction=rtl", "--set", "language=ja", stdout=out,
    )  # fmt: skip
    assert Source.objects.get(id="japanese-site").settings == {
        "preset": "madara",
        "reading_direction": "rtl",
        "language": "ja",
    }


def test_add_source_refuses_a_bad_reader_value_naming_source_and_key(madara_site):
    with pytest.raises(CommandError, match="source 'jp': settings key 'reading_direction' must be 'ltr' or 'rtl'"):
        call_command(
            "add_source", "JP", madara_site.base_url, "--preset", "madara",
            "--set", "reading_direction=upward", "--no-dry-run", stdout=StringIO(),
        )  # fmt: skip
    assert not Source.objects.filter(id="jp").exists()


def test_an_unknown_key_is_still_an_error_naming_source_and_key():
    with pytest.raises(SourceSettingsError, match="source 'x': unknown settings key 'reading_directoin'"):
        validate_settings("x", "demo", {"reading_directoin": "rtl"})
    row = Source(id="x", name="X", kind="html", base_url="https://example.com", settings={"colour": "red"})
    with pytest.raises(ValidationError, match="source 'x': unknown settings key 'colour'"):
        row.full_clean()


def test_a_bad_crawl_key_is_reported_through_the_same_contract():
    with pytest.raises(SourceSettingsError, match="source 'x': settings key 'rate_limit' must be a number"):
        validate_settings("x", "demo", {"rate_limit": "fast", "language": "ja"})


def test_admin_saves_reader_and_crawl_keys_together_and_refuses_unknown_ones(admin_client):
    form = {
        "id": "jp-demo",
        "name": "JP demo",
        "kind": "demo",
        "base_url": "http://127.0.0.1:9/",
        "enabled": "on",
        "settings": '{"reading_direction": "rtl", "language": "ja", "rate_limit": 5}',
    }
    response = admin_client.post("/admin/catalog/source/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Source.objects.get(id="jp-demo").settings["reading_direction"] == "rtl"

    response = admin_client.post("/admin/catalog/source/add/", {**form, "id": "bad", "settings": '{"langauge": "ja"}'})
    assert response.status_code == 200
    assert "source &#x27;bad&#x27;: unknown settings key &#x27;langauge&#x27;" in response.content.decode()
    assert not Source.objects.filter(id="bad").exists()
