"""Job handlers that apps built on the crawler contribute to a worker role (from `AppConfig.ready()`).

The crawler leases and settles every job but does not know every kind: the
analysis app registers `analyze_page` for the "analyze" role, so the worker
loop runs it without the crawler importing analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

_handlers: dict[str, dict[str, Callable[..., Any]]] = {}


def register_handlers(role: str, handlers: Mapping[str, Callable[..., Any]]) -> None:
    """Add `handlers` (job kind -> handler(payload, context)) to `role`; re-registering a kind replaces it."""
    _handlers.setdefault(role, {}).update(handlers)


def handlers_for(role: str) -> dict[str, Callable[..., Any]]:
    """The handlers registered for `role`; an error naming the role when no app registered any."""
    handlers = _handlers.get(role)
    if not handlers:
        raise ImproperlyConfigured(
            f"no job handlers are registered for the {role!r} worker role: "
            "is the app that provides them in INSTALLED_APPS?"
        )
    return dict(handlers)
