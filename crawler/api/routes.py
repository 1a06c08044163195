"""Control routes other apps add to the admin crawler API (registered from their `AppConfig.ready()`).

URLconfs are imported lazily, after every app is ready, so a route registered
in `ready()` is always there when `crawler.api.urls` builds its patterns. A
route is registered as a function that builds it: its view (Django REST
framework and the rest of the API) is imported when the URLconf is, in the
web process, not in every process that sets Django up (a crawl worker).
"""

from __future__ import annotations

from collections.abc import Callable

from django.urls import URLPattern

RouteFactory = Callable[[], URLPattern]

_registered: dict[str, RouteFactory] = {}


def register(name: str, route: RouteFactory) -> None:
    """Add the pattern `route()` builds (a `django.urls.path` called `name`) under /api/v1/admin/crawler/."""
    # ready() may run twice (tests reloading apps): registering is idempotent by name
    _registered.setdefault(name, route)


def registered() -> list[URLPattern]:
    return [route() for route in _registered.values()]
