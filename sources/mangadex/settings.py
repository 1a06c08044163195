"""A MangaDex source's settings keys, their defaults and their checks (each error names the key).

MangaDex publishes its limits: about 5 requests a second from one IP
address for the whole API, and 40 a minute for `/at-home/server/{chapter}`.
The defaults stay under both as a token bucket bounds them: at most
`burst + rate x T` requests in any T seconds, so 1 + 4 x 1 = 5 in a second
and 10 + 0.5 x 60 = 40 in a minute. A rate or burst above the published
limit is refused rather than silently clipped, so the operator sees why.

The API, cover and report addresses are settings so a source can point at
another deployment of the API (MangaDex's own `api.mangadex.dev`, or a
stand-in on the local machine); `at_home_hosts` names the hosts the at-home
server may hand out for images (MangaDex@Home nodes sit under
`*.mangadex.network`, on whatever port the node chose).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from catalog.source_settings import SourceSettingsError
from sources.politeness.rules import Politeness

KIND = "mangadex"
CONTENT_RATINGS = ("safe", "suggestive", "erotica", "pornographic")
# The published per-IP limits (api.mangadex.org/docs, "Rate limits").
MAX_RATE_PER_SEC = 5.0
AT_HOME_PER_MINUTE = 40
AT_HOME_BURST = 10
AT_HOME_RATE_PER_SEC = (AT_HOME_PER_MINUTE - AT_HOME_BURST) / 60.0

# The keys only a mangadex source reads.
KEYS = frozenset(
    {
        "translated_languages",
        "title_languages",
        "data_saver",
        "content_ratings",
        "api_url",
        "uploads_url",
        "report_url",
        "at_home_hosts",
    }
)
# The crawler's politeness keys (owned by the html settings) a mangadex source reads too.
POLITENESS_KEYS = frozenset({"rate_limit", "burst", "max_concurrency"})
# What MangaDex's `translatedLanguage` takes: ISO 639-1, with a region or script tag (pt-br, es-la, zh-hk).
_LANGUAGE = re.compile(r"^[a-z]{2}(-[a-z]{2})?$")
# Title languages also include the romanised ones (ja-ro, ko-ro, zh-ro).
_TITLE_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[a-z]{2})?$")


@dataclass(frozen=True)
class MangaDexSettings:
    translated_languages: tuple[str, ...] = ("en",)
    title_languages: tuple[str, ...] = ("en",)
    data_saver: bool = False
    content_ratings: tuple[str, ...] = ("safe", "suggestive", "erotica")
    api_url: str = "https://api.mangadex.org"
    uploads_url: str = "https://uploads.mangadex.org"
    report_url: str = "https://api.mangadex.network/report"
    at_home_hosts: tuple[str, ...] = ("*.mangadex.network",)
    rate_limit: float = 4.0
    burst: int = 1
    max_concurrency: int = 2

    @property
    def politeness(self) -> Politeness:
        return Politeness(rate_limit=self.rate_limit, burst=self.burst, max_concurrency=self.max_concurrency)

    @property
    def at_home_politeness(self) -> Politeness:
        """The at-home server's own bucket: 40 a minute at most, one request at a time."""
        return Politeness(rate_limit=AT_HOME_RATE_PER_SEC, burst=AT_HOME_BURST, max_concurrency=1)

    @classmethod
    def from_settings(cls, values: dict[str, Any], *, source_id: str) -> MangaDexSettings:
        """The settings of a mangadex source; SourceSettingsError names the first bad key."""
        stray = sorted(set(values) - KEYS - POLITENESS_KEYS)
        if stray:
            raise _bad(source_id, stray[0], "does not apply to a mangadex source")
        read: dict[str, Any] = {}
        for key, value in values.items():
            read[key] = _READERS[key](source_id, key, value)
        return cls(**read)


def _bad(source_id: str, key: str, why: str) -> SourceSettingsError:
    return SourceSettingsError(f"source {source_id!r}: settings key {key!r} {why}", key=key)


def _languages(pattern: re.Pattern[str], example: str) -> Any:
    def read(source_id: str, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise _bad(source_id, key, f"must be a non-empty list of language codes such as {example}")
        wrong = [v for v in value if not pattern.match(v)]
        if wrong:
            raise _bad(source_id, key, f"has {wrong[0]!r}, not a MangaDex language code such as {example}")
        return tuple(dict.fromkeys(value))

    return read


def _boolean(source_id: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _bad(source_id, key, f"must be true or false, not {value!r}")
    return value


def _ratings(source_id: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(v not in CONTENT_RATINGS for v in value):
        raise _bad(source_id, key, f"must be a non-empty list of {', '.join(CONTENT_RATINGS)}, not {value!r}")
    return tuple(dict.fromkeys(value))


def _address(source_id: str, key: str, value: Any) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise _bad(source_id, key, f"must be an http(s) URL such as {getattr(MangaDexSettings, key)}, not {value!r}")
    return value.rstrip("/")


def _hosts(source_id: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _bad(source_id, key, 'must be a list of host names such as ["*.mangadex.network"]')
    wrong = [v for v in value if "/" in v or ":" in v or "*" in v.removeprefix("*.")]
    if wrong:
        raise _bad(source_id, key, f"has {wrong[0]!r}, not a host name (cdn.example.com or *.example.com)")
    return tuple(v.strip().lower() for v in value)


def _rate(source_id: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_RATE_PER_SEC:
        raise _bad(
            source_id, key, f"must be a number above 0 and at most MangaDex's published {MAX_RATE_PER_SEC:g} a second"
        )
    return float(value)


def _count(limit: int, why: str) -> Any:
    def read(source_id: str, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise _bad(source_id, key, f"must be a whole number from 1 to {limit} ({why}), not {value!r}")
        return value

    return read


_READERS = {
    "translated_languages": _languages(_LANGUAGE, '["en", "pt-br"]'),
    "title_languages": _languages(_TITLE_LANGUAGE, '["en", "ja-ro"]'),
    "data_saver": _boolean,
    "content_ratings": _ratings,
    "api_url": _address,
    "uploads_url": _address,
    "report_url": _address,
    "at_home_hosts": _hosts,
    "rate_limit": _rate,
    "burst": _count(int(MAX_RATE_PER_SEC), "MangaDex allows 5 requests a second"),
    "max_concurrency": _count(8, "requests in flight at once"),
}


def validate(source_id: str, kind: str, values: dict[str, Any]) -> None:
    """The settings contract's check of the mangadex keys: only a mangadex source may carry them."""
    if kind != KIND:
        if values:
            key = sorted(values)[0]
            raise _bad(source_id, key, f"applies to mangadex sources only (this source's kind is {kind!r})")
        return
    MangaDexSettings.from_settings(values, source_id=source_id)
