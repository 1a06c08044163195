"""Chapter dates as sites print them: ISO, the source's format strings, and relative phrases.

Order: ISO 8601 (a `datetime` attribute), then each configured `strptime`
format ("%B %d, %Y" reads "November 12, 2026"; ordinals like "5th" are
accepted), then dateparser in the source's language, which reads relative
phrases ("2 days ago", "an hour ago", "yesterday") against `now`. Anything
else is None and the caller counts it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)


def parse_date(
    text: str, *, formats: Sequence[str] = (), language: str = "en", now: dt.datetime | None = None
) -> dt.datetime | None:
    """The moment `text` names (timezone-aware, UTC when the text has no zone), or None."""
    raw = " ".join(text.split())
    if not raw:
        return None
    try:
        return _aware(dt.datetime.fromisoformat(raw))
    except ValueError:
        pass
    plain = _ORDINAL.sub(r"\1", raw)
    for fmt in formats:
        try:
            return _aware(dt.datetime.strptime(plain, fmt))
        except ValueError:
            continue
    # Imported on the first phrase to parse, not with the settings' validation at every process's start:
    # 50 ms of CPU that a worker downloading chapters (or finding nothing to do) never needs.
    import dateparser

    base = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(tzinfo=None)
    parsed = dateparser.parse(
        raw,
        languages=[language],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": True,
        },
    )
    return _aware(parsed) if parsed else None


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def known_language(code: str) -> bool:
    """Whether dateparser has data for `code` (checked when the settings are validated)."""
    from dateparser.languages.loader import default_loader

    try:
        default_loader.get_locale(code)
    except (ValueError, KeyError):
        return False
    return True
