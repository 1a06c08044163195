"""Every source kind in one table: how a Source row of that kind is configured, limited and validated.

The crawler's factory (`crawler.factory`: adapters, browser need, request
limits), the settings contract's registration (`crawler.apps`) and the
console look a row's kind up here instead of branching on its name, so adding
a kind is one `SourceKind` entry, its builder in `crawler.factory` and its
`catalog.models.Source.Kind` choice (tests hold the three together).

Each kind's settings split the way the contract (`catalog.source_settings`)
sees them: the crawler's shared keys (the html adapter's selectors and the
politeness keys every kind has), checked by `check_crawler_keys` for a row of
that kind, and the keys only that kind reads (`own_keys`, e.g. `suwayomi_*`),
registered as an owner of their own whose validator refuses them on any
other kind.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from catalog.source_settings import SourceSettingsError
from sources.config import POLITENESS_KEYS, HtmlSourceConfig, politeness_from_settings
from sources.demo import demo_settings
from sources.errors import SourceConfigError
from sources.mangadex import settings as mangadex_settings
from sources.politeness.rules import Politeness
from sources.suwayomi import config as suwayomi_config

if TYPE_CHECKING:
    pass

# (source id, kind, the owner's keys of the settings) -> None, or raises SourceSettingsError naming the key.
Validator = Callable[[str, str, dict[str, Any]], None]


class KindConfig(Protocol):
    """What every kind's validated settings give the crawler: the request limits its adapter applies."""

    @property
    def politeness(self) -> Politeness: ...


@dataclass(frozen=True)
class SourceKind:
    name: str
    # (row settings, source id) -> the validated config; SourceConfigError names the bad key.
    read_config: Callable[[dict[str, Any], str], KindConfig]
    # The crawler's shared keys (selectors, politeness) on a row of this kind.
    check_crawler_keys: Validator
    # Whether the row is configured by selectors (html, demo) rather than read through the site's own API.
    selectors: bool = False
    # None: the adapter never loads pages in a browser, whatever the settings (they are not even read).
    browser_when: Callable[[Any], bool] | None = None
    # The keys only this kind reads, and their check (which refuses them on a row of another kind).
    own_keys: frozenset[str] = frozenset()
    validate_own_keys: Validator | None = None
    # Those of its own keys whose values are credentials: shown masked on every way out (catalog.source_settings).
    secret_keys: frozenset[str] = frozenset()

    def config(self, settings: Any, *, source_id: str) -> KindConfig:
        return self.read_config(settings or {}, source_id)

    def needs_browser(self, settings: Any, *, source_id: str) -> bool:
        return self.browser_when is not None and self.browser_when(self.config(settings, source_id=source_id))


def _html_config(settings: dict[str, Any], source_id: str) -> HtmlSourceConfig:
    return HtmlSourceConfig.from_settings(settings, source_id=source_id)


def _demo_config(settings: dict[str, Any], source_id: str) -> HtmlSourceConfig:
    """A demo row starts from the demo site's selectors; its settings override any of them."""
    return HtmlSourceConfig.from_settings(
        demo_settings(**settings) if isinstance(settings, dict) else settings, source_id=source_id
    )


def _mangadex_config(settings: dict[str, Any], source_id: str) -> mangadex_settings.MangaDexSettings:
    try:
        return mangadex_settings.MangaDexSettings.from_settings(dict(settings), source_id=source_id)
    except SourceSettingsError as exc:
        raise SourceConfigError(str(exc)) from exc


def _suwayomi_config(settings: dict[str, Any], source_id: str) -> suwayomi_config.SuwayomiConfig:
    return suwayomi_config.SuwayomiConfig.from_settings(settings, source_id=source_id)


def _checked(read: Callable[[dict[str, Any], str], Any]) -> Validator:
    """A config reader as a settings-contract validator: its SourceConfigError becomes a SourceSettingsError."""

    def validate(source_id: str, kind: str, values: dict[str, Any]) -> None:
        try:
            read(values, source_id)
        except SourceConfigError as exc:
            raise SourceSettingsError(str(exc)) from exc

    return validate


def _mangadex_crawler_keys(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """A mangadex row takes the politeness keys (held to MangaDex's published limits), no selector key."""
    mangadex_settings.MangaDexSettings.from_settings(values, source_id=source_id)


def _suwayomi_crawler_keys(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """A suwayomi row takes only the politeness keys: its selectors are the server's GraphQL API."""
    extra = sorted(set(values) - POLITENESS_KEYS)
    if extra:
        raise SourceSettingsError(
            f"source {source_id!r}: settings key {extra[0]!r} is for html sources, not suwayomi", key=extra[0]
        )
    _checked(lambda settings, sid: politeness_from_settings(settings, source_id=sid))(source_id, kind, values)


def _selector_kind(name: str, read: Callable[[dict[str, Any], str], HtmlSourceConfig]) -> SourceKind:
    """A kind the html adapter reads by selectors: a browser only when the settings ask for one."""
    return SourceKind(
        name=name,
        read_config=read,
        check_crawler_keys=_checked(read),
        selectors=True,
        browser_when=lambda config: config.requires_browser,
    )


KINDS: dict[str, SourceKind] = {
    kind.name: kind
    for kind in (
        _selector_kind("html", _html_config),
        _selector_kind("demo", _demo_config),
        SourceKind(
            name=mangadex_settings.KIND,
            read_config=_mangadex_config,
            check_crawler_keys=_mangadex_crawler_keys,
            own_keys=mangadex_settings.KEYS,
            validate_own_keys=mangadex_settings.validate,
        ),
        SourceKind(
            name=suwayomi_config.KIND,
            read_config=_suwayomi_config,
            check_crawler_keys=_suwayomi_crawler_keys,
            own_keys=suwayomi_config.SETTINGS_KEYS,
            validate_own_keys=suwayomi_config.validate_suwayomi_settings,
            secret_keys=suwayomi_config.SECRET_KEYS,
        ),
    )
}


def kind_of(name: str, *, source_id: str | None = None) -> SourceKind:
    """The kind called `name`; SourceConfigError names the source (when given), the unknown kind and the known ones."""
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted(KINDS))
        whose = f"source {source_id!r}: " if source_id is not None else ""
        raise SourceConfigError(f"{whose}unknown kind {name!r} (kinds: {known})") from None


def validate_crawler_keys(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """The settings contract's check of the crawler's shared keys, by the row's kind."""
    try:
        source_kind = kind_of(kind, source_id=source_id)
    except SourceConfigError as exc:
        raise SourceSettingsError(str(exc)) from exc
    source_kind.check_crawler_keys(source_id, kind, values)


# The modules each kind's builder imports when it first makes an adapter (lazily: importing a kind's entry must
# not need the app registry). A multi-process worker imports them once before it forks (`preload_adapters`).
ADAPTER_MODULES = (
    "sources.html",
    "sources.mangadex.adapter",
    "sources.suwayomi.adapter",
)


def preload_adapters() -> None:
    """Import every kind's adapter (and with them httpx, libcurl's bindings): shared copy-on-write after a fork."""
    for name in ADAPTER_MODULES:
        importlib.import_module(name)
