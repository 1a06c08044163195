"""What the readers take from a source's `settings` JSON (read here, so `reader` never imports `crawler`).

- `reading_direction`: "ltr" (default) or "rtl"; right-to-left sources are
  manga in the Japanese sense, and ComicInfo says `YesAndRightToLeft`.
- `language`: the BCP 47 / ISO 639-1 code of the source's text, default
  settings.READER_DEFAULT_LANGUAGE.
"""

from __future__ import annotations

import re

from django.conf import settings

from catalog.models import Source

_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


class SourceSettingError(ValueError):
    """A reader setting of a source has a value we cannot use; the message names the source and key."""


def reading_direction(source: Source | None) -> str:
    value = (source.settings or {}).get("reading_direction", "ltr") if source else "ltr"
    if value not in ("ltr", "rtl"):
        raise SourceSettingError(
            f"source {source.id!r}: settings key 'reading_direction' must be 'ltr' or 'rtl', not {value!r}"
        )
    return value


def language(source: Source | None) -> str:
    value = (
        (source.settings or {}).get("language", settings.READER_DEFAULT_LANGUAGE)
        if source
        else settings.READER_DEFAULT_LANGUAGE
    )
    if not isinstance(value, str) or not _LANGUAGE.match(value):
        raise SourceSettingError(
            f"source {source.id!r}: settings key 'language' must be a language code such as 'en', not {value!r}"
        )
    return value
