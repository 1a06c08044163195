"""Settings of a `suwayomi` Source row, validated from its `settings` JSON; errors name the key.

The row's `base_url` is the Suwayomi-Server (e.g. `http://suwayomi:4567/`);
its settings pick one of the server's sources and say how to log in:

    suwayomi_source    required  the Suwayomi source's id (a number, e.g. "2499283573021220255") or its
                                 name ("MangaDex"), as the server's `sources` query lists them
    suwayomi_lang      optional  the language of the named source ("en"), when several languages share a name
    suwayomi_listing   optional  "auto" (default: LATEST when the source supports it, else POPULAR),
                                 "latest" or "popular": the newest-first walk's listing
    suwayomi_auth      optional  "basic" (default when credentials are given: the server's BASIC_AUTH mode)
                                 or "login" (its UI_LOGIN mode: a token from the `login` mutation)
    suwayomi_username, suwayomi_password   optional, together: the server's credentials
    suwayomi_scanlator optional  keep only this scanlator's chapters (sources listing one chapter per group)
    rate_limit, burst, max_concurrency     the politeness keys every source has (sources.config)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from catalog import source_settings
from sources.config import politeness_from_settings
from sources.errors import SourceConfigError
from sources.politeness.rules import Politeness
from sources.suwayomi.answers import ServerSource

KIND = "suwayomi"
LISTINGS = ("auto", "latest", "popular")
AUTH_MODES = ("basic", "login")
SETTINGS_KEYS = frozenset(
    {
        "suwayomi_source",
        "suwayomi_lang",
        "suwayomi_listing",
        "suwayomi_auth",
        "suwayomi_username",
        "suwayomi_password",
        "suwayomi_scanlator",
    }
)
# Shown masked on every way out and kept when sent back masked (catalog.source_settings.masked).
SECRET_KEYS = frozenset({"suwayomi_password"})
_SOURCE_ID = re.compile(r"^-?\d{1,20}$")
# Mihon's source languages are BCP 47 codes ("en", "pt-BR", "zh-Hans") or "all"/"other" for several or none.
_LANGUAGE_CODE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
_NOT_ONE_LANGUAGE = frozenset({"all", "other", "multi"})


@dataclass(frozen=True)
class SuwayomiConfig:
    source: str
    lang: str | None = None
    listing: str = "auto"
    auth: str | None = None  # None: the server has no auth on
    username: str = ""
    password: str = field(default="", repr=False)  # a config in a log line or traceback carries no password
    scanlator: str | None = None
    politeness: Politeness = Politeness()

    @property
    def source_is_id(self) -> bool:
        return bool(_SOURCE_ID.match(self.source))

    @classmethod
    def from_settings(cls, data: dict[str, Any], *, source_id: str) -> SuwayomiConfig:
        def bad(key: str, why: str) -> SourceConfigError:
            return SourceConfigError(f"source {source_id!r}: settings key {key!r} {why}")

        own = {k: v for k, v in data.items() if k in SETTINGS_KEYS}
        rest = {k: v for k, v in data.items() if k not in SETTINGS_KEYS}
        if "suwayomi_source" not in own:
            raise bad("suwayomi_source", "is required: the id or name of one of the Suwayomi server's sources")
        for key, value in own.items():
            if not isinstance(value, str) or not value.strip():
                raise bad(key, "must be a non-empty string")
        listing = own.get("suwayomi_listing", "auto")
        if listing not in LISTINGS:
            raise bad("suwayomi_listing", f"must be one of {', '.join(LISTINGS)} (got {listing!r})")
        has_user, has_password = "suwayomi_username" in own, "suwayomi_password" in own
        if has_user != has_password:
            missing = "suwayomi_password" if has_user else "suwayomi_username"
            raise bad(missing, "is required with the other credential (username and password go together)")
        auth = own.get("suwayomi_auth")
        if auth is not None and auth not in AUTH_MODES:
            raise bad("suwayomi_auth", f"must be one of {', '.join(AUTH_MODES)} (got {auth!r})")
        if auth is not None and not has_user:
            raise bad("suwayomi_username", f"is required with suwayomi_auth {auth!r}")
        return cls(
            source=own["suwayomi_source"].strip(),
            lang=own.get("suwayomi_lang"),
            listing=listing,
            auth=(auth or "basic") if has_user else None,
            username=own.get("suwayomi_username", ""),
            password=own.get("suwayomi_password", ""),
            scanlator=own.get("suwayomi_scanlator"),
            politeness=politeness_from_settings(rest, source_id=source_id),
        )


def settings_for(source: ServerSource, given: dict[str, Any]) -> dict[str, Any]:
    """The settings of a new row for the server's `source`: `given` keys, the source by id, its language.

    The id is stored even when the operator named the source: an extension may rename a source,
    never change its id. The source's language becomes the readers' `language` (OPDS, ComicInfo)
    unless given, or unless the source has several ("all").
    """
    settings = {key: value for key, value in given.items() if key != "suwayomi_lang"}
    settings["suwayomi_source"] = source.id
    if "language" not in settings and source.lang not in _NOT_ONE_LANGUAGE and _LANGUAGE_CODE.match(source.lang):
        settings["language"] = source.lang
    return settings


def validate_suwayomi_settings(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """The settings contract's check of the Suwayomi keys: required on a suwayomi row, refused on any other."""
    if kind != KIND:
        if values:
            key = sorted(values)[0]
            raise source_settings.SourceSettingsError(
                f"source {source_id!r}: settings key {key!r} is for suwayomi sources, not {kind!r}", key=key
            )
        return
    try:
        SuwayomiConfig.from_settings(values, source_id=source_id)
    except SourceConfigError as exc:
        raise source_settings.SourceSettingsError(str(exc)) from exc
