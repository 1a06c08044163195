"""The colour theme a user chose for the web app, kept on the server so it follows them to every device.

"system" (the default) leaves it to the browser's `prefers-color-scheme`;
"light" and "dark" override it. Anonymous readers (a library opened with
LIBRARY_PUBLIC_READ) always follow the system.
"""

from __future__ import annotations

from typing import Any

from reader.models import ReaderPreference

THEMES = tuple(ReaderPreference.Theme.values)


class UnknownTheme(ValueError):
    pass


def theme_of(user: Any) -> str:
    if not getattr(user, "is_authenticated", False):
        return ReaderPreference.Theme.SYSTEM
    chosen = ReaderPreference.objects.filter(user=user).values_list("theme", flat=True).first()
    return chosen or ReaderPreference.Theme.SYSTEM


def set_theme(user: Any, theme: str) -> None:
    if theme not in THEMES:
        raise UnknownTheme(f"theme={theme!r} is not one we know: use {', '.join(THEMES)}")
    ReaderPreference.objects.update_or_create(user=user, defaults={"theme": theme})
