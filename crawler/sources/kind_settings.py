"""The crawler's settings keys checked by the source's kind: selectors for html and demo, MangaDex's own for mangadex.

The html keys (`crawler.sources.config`) and the mangadex keys
(`crawler.sources.mangadex.settings`) are registered with the settings
contract apart; a mangadex source takes none of the selector keys but the
politeness ones (`rate_limit`, `burst`, `max_concurrency`), held to
MangaDex's published limits.
"""

from __future__ import annotations

from typing import Any

from crawler.sources.config import validate_source_settings
from crawler.sources.mangadex import settings as mangadex


def validate_crawler_settings(source_id: str, kind: str, values: dict[str, Any]) -> None:
    if kind == mangadex.KIND:
        mangadex.MangaDexSettings.from_settings(values, source_id=source_id)
        return
    validate_source_settings(source_id, kind, values)
