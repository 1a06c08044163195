"""What the readers take from a source's `settings` JSON (read here, so `reader` never imports `crawler`).

- `reading_direction`: "ltr" (default) or "rtl"; right-to-left sources are
  manga in the Japanese sense, and ComicInfo says `YesAndRightToLeft`.
- `language`: the BCP 47 / ISO 639-1 code of the source's text, default
  settings.READER_DEFAULT_LANGUAGE.
- `reading_mode`: how the web reader opens the source's chapters until a
  reader picks otherwise: "paged", "scroll", or "webtoon" (one continuous
  strip, no gaps, for long-strip sources); unset, the reader decides from
  the page shapes (reader.reading_modes).

The keys are registered with the catalog's settings contract
(`catalog.source_settings`) in `ReaderConfig.ready()`, so the admin and
`add_source` check them with every other app's keys before a row is saved.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from catalog.models import Source
from catalog.source_settings import SourceSettingsError

KEYS = frozenset({"reading_direction", "language", "reading_mode"})
READING_MODES = ("paged", "scroll", "webtoon")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


class SourceSettingError(SourceSettingsError):
    """A reader setting of a source has a value we cannot use; the message names the source and key."""


def _direction(source_id: str, value: Any) -> str:
    if value not in ("ltr", "rtl"):
        raise SourceSettingError(
            f"source {source_id!r}: settings key 'reading_direction' must be 'ltr' or 'rtl', not {value!r}",
            key="reading_direction",
        )
    return value


def _language(source_id: str, value: Any) -> str:
    if not isinstance(value, str) or not _LANGUAGE.match(value):
        raise SourceSettingError(
            f"source {source_id!r}: settings key 'language' must be a language code such as 'en', not {value!r}",
            key="language",
        )
    return value


def _mode(source_id: str, value: Any) -> str:
    if value not in READING_MODES:
        raise SourceSettingError(
            f"source {source_id!r}: settings key 'reading_mode' must be one of {', '.join(READING_MODES)}, not {value!r}",
            key="reading_mode",
        )
    return value


def validate(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """The settings contract's check of the reader keys (`kind` does not matter to readers)."""
    if "reading_direction" in values:
        _direction(source_id, values["reading_direction"])
    if "language" in values:
        _language(source_id, values["language"])
    if "reading_mode" in values:
        _mode(source_id, values["reading_mode"])


def reading_direction(source: Source | None) -> str:
    if source is None:
        return "ltr"
    return _direction(source.id, (source.settings or {}).get("reading_direction", "ltr"))


def language(source: Source | None) -> str:
    if source is None:
        return settings.READER_DEFAULT_LANGUAGE
    return _language(source.id, (source.settings or {}).get("language", settings.READER_DEFAULT_LANGUAGE))


def reading_mode(source: Source | None) -> str:
    """The source's `reading_mode`, "" when it leaves the choice to the reader."""
    if source is None or "reading_mode" not in (source.settings or {}):
        return ""
    return _mode(source.id, source.settings["reading_mode"])
