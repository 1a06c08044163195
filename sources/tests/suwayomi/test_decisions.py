"""Pure decisions of the Suwayomi bridge: error kinds from the server's messages, settings, chapter numbers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from catalog.models import Source
from catalog.source_settings import SourceSettingsError, validate_settings
from sources.errors import CrawlerError, NotFound, SourceConfigError, SourceUnavailable
from sources.suwayomi.answers import MalformedAnswer, ServerChapter, ServerSource, read_chapters
from sources.suwayomi.config import SuwayomiConfig, settings_for
from sources.suwayomi.failures import SourceNeedsLogin, error_for
from sources.suwayomi.records import chapter_name, manga_id_from_url, manga_url, published_at

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Log in via WebView to continue", SourceNeedsLogin),
        ("Open in WebView to bypass Cloudflare", SourceNeedsLogin),
        ("Please login to read this chapter", SourceNeedsLogin),
        ("Source with id 123 is not installed", SourceConfigError),
        ("HTTP error 404", NotFound),
        ("HTTP error 503", SourceUnavailable),
        ("HTTP error 429", SourceUnavailable),
        ("java.net.SocketTimeoutException: timeout", SourceUnavailable),
        ("HTTP error 400", CrawlerError),
        ("No chapters found", CrawlerError),
    ],
)
def test_each_server_message_becomes_its_error_kind(message, kind):
    error = error_for("harbor", "'Harbor Scans (EN)'", "list page 1", [message])
    assert type(error) is kind
    assert "source 'harbor' (Suwayomi source 'Harbor Scans (EN)')" in str(error) and message in str(error)


def _chapter(name: str, number: float) -> ServerChapter:
    return ServerChapter(1, 1, name, "/c", None, number, None, 0, 1)


@pytest.mark.parametrize(
    ("name", "number", "expected"),
    [
        ("Chapter 12", 12.0, ("chapter", None, Decimal("12"))),
        ("Chapter 10.5", 10.5, ("chapter", None, Decimal("10.5"))),
        ("Ch. 3 (official)", 3.0, ("chapter", None, Decimal("3"))),
        ("Vol.2 Ch.7", -1.0, ("chapter", 2, Decimal("7"))),  # -1: the name's number
        ("Oneshot", -1.0, ("extra", None, None)),  # numbered later by number_extras
        ("Side Story 3", 3.0, ("extra", None, Decimal("3"))),  # not main chapter 3
        ("Episode 5", 5.0, ("chapter", None, Decimal("5"))),
    ],
)
def test_chapter_numbers_from_the_extension_or_the_name(name, number, expected):
    read = chapter_name(_chapter(name, number))
    assert (read.kind, read.volume, read.number) == expected


def test_upload_dates_are_milliseconds_and_zero_is_no_date():
    assert published_at(0) is None
    assert published_at(1_700_000_000_123) == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC)


def test_a_manga_url_round_trips_to_its_server_id():
    url = manga_url("http://suwayomi:4567/", 42)
    assert url == "http://suwayomi:4567/manga/42"
    assert manga_id_from_url(url) == 42
    assert manga_id_from_url("http://suwayomi:4567/manga/42/chapter/1") is None


def test_an_answer_of_the_wrong_shape_names_the_field():
    reply = {"fetchChapters": {"chapters": [{"id": "7"}]}}
    with pytest.raises(MalformedAnswer, match=r"data\.fetchChapters\.chapters\[0\]\.id, not int"):
        read_chapters(reply)


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({}, "suwayomi_source"),
        ({"suwayomi_source": ""}, "suwayomi_source"),
        ({"suwayomi_source": "x", "suwayomi_listing": "newest"}, "suwayomi_listing"),
        ({"suwayomi_source": "x", "suwayomi_username": "u"}, "suwayomi_password"),
        ({"suwayomi_source": "x", "suwayomi_auth": "login"}, "suwayomi_username"),
        ({"suwayomi_source": "x", "suwayomi_auth": "oauth", "suwayomi_username": "u", "suwayomi_password": "p"},
         "suwayomi_auth"),
        ({"suwayomi_source": "x", "rate_limit": 0}, "rate_limit"),
    ],
)  # fmt: skip
def test_bad_settings_name_the_key(values, key):
    with pytest.raises(SourceConfigError, match=f"settings key {key!r}"):
        SuwayomiConfig.from_settings(values, source_id="harbor")


def test_credentials_default_to_basic_auth():
    config = SuwayomiConfig.from_settings(
        {"suwayomi_source": "1", "suwayomi_username": "u", "suwayomi_password": "p"}, source_id="s"
    )
    assert (config.auth, config.source_is_id) == ("basic", True)


@pytest.mark.django_db
def test_the_settings_contract_keeps_html_keys_off_suwayomi_rows_and_suwayomi_keys_off_html_rows():
    with pytest.raises(SourceSettingsError, match="'list_url' is for html sources, not suwayomi"):
        validate_settings("s", "suwayomi", {"suwayomi_source": "1", "list_url": "/x"})
    with pytest.raises(SourceSettingsError, match="'suwayomi_source' is for suwayomi sources, not 'demo'"):
        validate_settings("s", "demo", {"suwayomi_source": "1"})
    validate_settings("s", "suwayomi", {"suwayomi_source": "1", "rate_limit": 5, "reading_direction": "rtl"})
    row = Source(id="s", name="S", kind="suwayomi", base_url="http://suwayomi:4567/", settings={})
    with pytest.raises(Exception, match="suwayomi_source"):
        row.full_clean()


@pytest.mark.parametrize(
    ("lang", "given", "language"),
    [
        ("en", {}, "en"),
        ("pt-BR", {}, "pt-BR"),
        ("all", {}, None),
        ("other", {}, None),
        ("en", {"language": "ja"}, "ja"),
    ],
)
def test_a_new_rows_settings_keep_the_source_by_id_and_its_language_for_the_readers(lang, given, language):
    source = ServerSource("123", "Harbor Scans", f"Harbor Scans ({lang})", lang, False, True)
    settings = settings_for(source, {"suwayomi_source": "Harbor Scans", "suwayomi_lang": lang, **given})
    assert settings["suwayomi_source"] == "123" and "suwayomi_lang" not in settings
    assert settings.get("language") == language
