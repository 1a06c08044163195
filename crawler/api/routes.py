"""Control routes other apps add to the admin crawler API (registered from their `AppConfig.ready()`).

URLconfs are imported lazily, after every app is ready, so a route registered
in `ready()` is always there when `crawler.api.urls` builds its patterns.
"""

from __future__ import annotations

from django.urls import URLPattern

_registered: list[URLPattern] = []


def register(pattern: URLPattern) -> None:
    """Add `pattern` (a `django.urls.path`, named) under /api/v1/admin/crawler/."""
    if any(existing.name == pattern.name for existing in _registered):
        return  # ready() may run twice (tests reloading apps): registering is idempotent by name
    _registered.append(pattern)


def registered() -> list[URLPattern]:
    return list(_registered)
