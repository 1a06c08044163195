"""A MangaDex source's settings: defaults under the published limits, every mistake named by its key."""

from __future__ import annotations

import pytest

from catalog.source_settings import SourceSettingsError, validate_settings
from sources.mangadex.settings import AT_HOME_PER_MINUTE, MAX_RATE_PER_SEC, MangaDexSettings


def test_the_defaults_stay_within_mangadex_published_limits():
    settings = MangaDexSettings()
    api, at_home = settings.politeness, settings.at_home_politeness
    # A token bucket lets at most burst + rate x T requests out in any T seconds.
    assert api.burst + api.rate_limit * 1 <= MAX_RATE_PER_SEC
    assert at_home.burst + at_home.rate_limit * 60 <= AT_HOME_PER_MINUTE
    assert settings.translated_languages == ("en",) and not settings.data_saver


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"translated_languages": []}, "translated_languages"),
        ({"translated_languages": ["English"]}, "translated_languages"),
        ({"title_languages": "en"}, "title_languages"),
        ({"data_saver": "yes"}, "data_saver"),
        ({"content_ratings": ["spicy"]}, "content_ratings"),
        ({"api_url": "api.mangadex.org"}, "api_url"),
        ({"report_url": "ftp://api.mangadex.network/report"}, "report_url"),
        ({"at_home_hosts": ["https://x.mangadex.network/"]}, "at_home_hosts"),
        ({"rate_limit": 10}, "rate_limit"),
        ({"burst": 50}, "burst"),
        ({"list_url": "/manga?page={page}"}, "list_url"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(values, key):
    with pytest.raises(SourceSettingsError) as caught:
        validate_settings("md", "mangadex", values)
    assert f"'{key}'" in str(caught.value) and "'md'" in str(caught.value)


def test_mangadex_keys_on_another_kind_are_refused():
    with pytest.raises(SourceSettingsError, match="'data_saver' applies to mangadex sources only"):
        validate_settings("demo", "demo", {"data_saver": True})


def test_good_settings_are_read():
    values = {
        "translated_languages": ["en", "pt-br", "en"],
        "title_languages": ["en", "ja-ro"],
        "data_saver": True,
        "at_home_hosts": ["*.mangadex.network", "127.0.0.1"],
        "rate_limit": 2,
        "reading_direction": "rtl",
    }
    validate_settings("md", "mangadex", values)
    read = MangaDexSettings.from_settings({k: v for k, v in values.items() if k != "reading_direction"}, source_id="md")
    assert read.translated_languages == ("en", "pt-br") and read.data_saver and read.rate_limit == 2.0
