"""Chapter dates as sites print them: ISO, the source's format strings, and relative phrases.

Order: ISO 8601 (a `datetime` attribute), then each configured `strptime`
format ("%B %d, %Y" reads "November 12, 2026"; ordinals like "5th" are
accepted), then dateparser in the source's language and English (sites in
other languages often keep the theme's English dates), which reads month
names ("12 de noviembre de 2026", "12 Kasım 2026") and relative phrases
("2 days ago", "hace 2 días", "2 hari yang lalu") against `now`. Thai sites
print Buddhist-era years (2569 = 2026). Anything else is None and the caller
counts it.

Numeric dates are the one thing no parser can read alone: "05/11/2026" is
May or November depending on the site. `infer_numeric_format` reads a
site's samples and names the order only when one sample settles it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
BUDDHIST_ERA_OFFSET = 543
# Spellings dateparser misses: Thai writes "1 ชั่วโมงที่แล้ว" (an hour ago) without the space it expects.
_SPELLINGS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "th": ((re.compile(r"(?<=\S)(ที่แล้ว|ก่อน)$"), r" \1"),),
}
_NUMERIC = re.compile(r"^(\d{1,4})([/.\-])(\d{1,2})\2(\d{1,4})$")


def parse_date(
    text: str,
    *,
    formats: Sequence[str] = (),
    language: str = "en",
    now: dt.datetime | None = None,
    zone: dt.tzinfo = dt.UTC,
) -> dt.datetime | None:
    """The moment `text` names (timezone-aware; in `zone` when the text has no zone, UTC by default), or None.

    `zone` is the site's own clock for the dates it prints without one: a Vietnamese site's
    "14:05 - 23/11/2026" is 14:05 at GMT+7 (`date_utc_offset`), 07:05 UTC.
    """
    raw = " ".join(text.split())
    if not raw:
        return None
    try:
        return _aware(dt.datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw), zone)
    except ValueError:
        pass
    plain = _ORDINAL.sub(r"\1", raw)
    for fmt in formats:
        try:
            return _aware(dt.datetime.strptime(plain, fmt), zone)
        except ValueError:
            continue
    # Imported on the first phrase to parse, not with the settings' validation at every process's start:
    # 50 ms of CPU that a worker downloading chapters (or finding nothing to do) never needs.
    import dateparser

    for pattern, replacement in _SPELLINGS.get(language, ()):
        raw = pattern.sub(replacement, raw)
    base = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(tzinfo=None)
    parsed = dateparser.parse(
        raw,
        languages=[language] if language == "en" else [language, "en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": True,
            # A numeric date no format was set for: the language's own order (only US English puts the month
            # first), not whichever language dateparser tried first. add_source sets the format from samples.
            "DATE_ORDER": "MDY" if language == "en" else "DMY",
        },
    )
    if parsed is None:
        return None
    if language == "th" and parsed.year > BUDDHIST_ERA_OFFSET + 1900:
        parsed = parsed.replace(year=parsed.year - BUDDHIST_ERA_OFFSET)
    return _aware(parsed)


def _aware(value: dt.datetime, zone: dt.tzinfo = dt.UTC) -> dt.datetime:
    return value.astimezone(dt.UTC) if value.tzinfo else value.replace(tzinfo=zone).astimezone(dt.UTC)


_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def utc_offset(text: str) -> dt.timezone | None:
    """`+07:00`, `GMT+7`, `-0330` as a fixed zone; None when it is no offset (or beyond +/-14 h)."""
    match = _OFFSET.match(text.strip().upper())
    if not match:
        return None
    hours, minutes = int(match.group(2)), int(match.group(3) or 0)
    if hours > 14 or minutes > 59:
        return None
    delta = dt.timedelta(hours=hours, minutes=minutes)
    return dt.timezone(-delta if match.group(1) == "-" else delta)


def readable_format(fmt: str) -> bool:
    """Whether `fmt` is a strptime format that reads a date it wrote ("%d/%m/%Y" yes; "%", "%Q" no)."""
    sample = dt.datetime(2026, 11, 23, 14, 5)
    try:
        dt.datetime.strptime(sample.strftime(fmt), fmt)
    except ValueError:
        return False
    return "%" in fmt


def known_language(code: str) -> bool:
    """Whether dateparser has data for `code` (checked when the settings are validated)."""
    from dateparser.languages.loader import default_loader

    try:
        default_loader.get_locale(code)
    except (ValueError, KeyError):
        return False
    return True


@dataclass(frozen=True)
class NumericDates:
    """What a site's date samples say about its numeric format: the strptime format, or why there is none."""

    format: str | None
    samples: int  # how many samples were numeric
    why: str  # for the operator: how it was decided, or what to set

    @property
    def numeric(self) -> bool:
        return self.samples > 0


def infer_numeric_format(samples: Sequence[str]) -> NumericDates:
    """The strptime format of numeric dates like "05/11/2026", decided by the samples that only one order reads.

    A first field over 12 means day first; a second field over 12 means month
    first; a four-digit first field is year first. When every sample reads
    both ways the order stays undecided and the operator is asked to set
    chapter_date_formats (no guess: a wrong one shifts every date by months).
    """
    parts = [match.groups() for text in samples if (match := _NUMERIC.match(" ".join(text.split())))]
    if not parts:
        return NumericDates(None, 0, "no numeric dates among the samples")
    separators = {sep for _, sep, _, _ in parts}
    if len(separators) > 1:
        return NumericDates(None, len(parts), f"numeric dates with mixed separators {sorted(separators)}")
    sep = separators.pop()
    if all(len(first) == 4 for first, _, _, _ in parts):
        return NumericDates(f"%Y{sep}%m{sep}%d", len(parts), "year first (yyyy/MM/dd)")
    year = "%Y" if all(len(last) == 4 for _, _, _, last in parts) else "%y"

    def printed(part: tuple[str, ...]) -> str:
        return f"{part[0]}{sep}{part[2]}{sep}{part[3]}"

    day_first = [printed(p) for p in parts if int(p[0]) > 12]
    month_first = [printed(p) for p in parts if int(p[2]) > 12]
    example = printed(parts[0])
    if day_first and month_first:
        return NumericDates(
            None, len(parts), f"numeric dates read neither day-first nor month-first ({day_first[0]}, {month_first[0]})"
        )
    if day_first:
        return NumericDates(f"%d{sep}%m{sep}{year}", len(parts), f"day first: {day_first[0]} can only be day/month")
    if month_first:
        return NumericDates(f"%m{sep}%d{sep}{year}", len(parts), f"month first: {month_first[0]} can only be month/day")
    return NumericDates(
        None,
        len(parts),
        f"numeric dates like {example} read both ways: set chapter_date_formats to "
        f'["%d{sep}%m{sep}{year}"] (day first) or ["%m{sep}%d{sep}{year}"] (month first)',
    )
