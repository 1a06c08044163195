"""The registry of source kinds: one entry per Source.Kind choice, each error naming what to fix."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from catalog.models import Source
from catalog.source_settings import SourceSettingsError
from crawler.factory import needs_browser, source_politeness
from sources import kinds
from sources.config import SETTINGS_KEYS
from sources.errors import SourceConfigError

pytestmark = pytest.mark.sqlite_ok


def test_every_source_kind_choice_has_an_entry_and_every_entry_a_choice():
    assert set(kinds.KINDS) == set(Source.Kind.values)
    assert all(name == kind.name for name, kind in kinds.KINDS.items())


def test_an_unknown_kind_is_named_with_its_source_and_the_known_kinds():
    with pytest.raises(SourceConfigError, match=r"source 'odd': unknown kind 'gopher' \(kinds: demo, html, mangadex"):
        kinds.kind_of("gopher", source_id="odd")
    with pytest.raises(SourceConfigError, match=r"^unknown kind 'gopher'"):
        kinds.kind_of("gopher")


def test_the_settings_contract_refuses_an_unknown_kind_by_name():
    with pytest.raises(SourceSettingsError, match=r"source 'odd': unknown kind 'gopher'"):
        kinds.validate_crawler_keys("odd", "gopher", {})


def test_own_keys_are_no_shared_key_and_no_other_kinds():
    seen: set[str] = set()
    for kind in kinds.KINDS.values():
        assert not kind.own_keys & SETTINGS_KEYS, kind.name
        assert not kind.own_keys & seen, kind.name
        assert (kind.validate_own_keys is None) == (not kind.own_keys), kind.name
        seen |= kind.own_keys


def row(kind: str, settings: dict) -> SimpleNamespace:
    return SimpleNamespace(id="s1", kind=kind, settings=settings, base_url="http://127.0.0.1:1/")


def test_only_a_selector_kind_asked_for_requires_browser_needs_one():
    assert needs_browser(row("demo", {"requires_browser": True}))
    assert not needs_browser(row("demo", {}))
    assert not needs_browser(row("html", {"preset": "madara", "list_url": "/manga/?page={page}"}))
    # An API kind never reads its settings for this: even a broken one needs no browser.
    assert not needs_browser(row("mangadex", {"burst": "many"}))
    assert not needs_browser(row("suwayomi", {}))
    assert [k.name for k in kinds.KINDS.values() if k.selectors] == ["html", "demo"]


def test_each_kind_gives_its_limits_and_names_a_bad_key():
    assert source_politeness(row("mangadex", {})).rate_limit == 4.0
    assert source_politeness(row("suwayomi", {"suwayomi_source": "1", "burst": 3})).burst == 3
    assert source_politeness(row("demo", {"max_concurrency": 2})).max_concurrency == 2
    with pytest.raises(SourceConfigError, match="'burst'"):
        source_politeness(row("mangadex", {"burst": 99}))
    with pytest.raises(SourceConfigError, match="'suwayomi_source' is required"):
        source_politeness(row("suwayomi", {}))


@pytest.mark.parametrize(
    ("kind", "values", "complaint"),
    [
        ("suwayomi", {"list_url": "/x"}, "settings key 'list_url' is for html sources, not suwayomi"),
        ("mangadex", {"list_url": "/x"}, "settings key 'list_url' does not apply to a mangadex source"),
        ("html", {"burst": 0}, "settings key 'list_url' is required"),
        ("demo", {"burst": 0}, "'burst'"),
    ],
)
def test_the_shared_keys_are_checked_by_the_rows_kind(kind, values, complaint):
    with pytest.raises(SourceSettingsError, match=complaint):
        kinds.validate_crawler_keys("s1", kind, values)
