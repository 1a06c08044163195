"""One contract for a Source row's `settings`: every app's keys, validated in one place.

Several apps read a source's settings (the crawler its adapter keys, the
readers `reading_direction` and `language`, and whatever comes next). Each
registers the keys it owns and a validator for them from its
`AppConfig.ready()`; `validate_settings` then checks a row once for all of
them: a key no app owns is an error naming the source and the key, and each
app sees only its own keys, so no app can reject another's. The admin form
and `add_source` both go through `Source.clean()`, which calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Validator = Callable[[str, str, dict[str, Any]], None]


class SourceSettingsError(ValueError):
    """A source's settings break the contract; the message names the source and the key."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class SettingsOwner:
    app: str
    keys: frozenset[str]
    validate: Validator  # (source id, kind, that app's keys of the settings) -> None, or raises ValueError


_OWNERS: dict[str, SettingsOwner] = {}


def register(app: str, keys: frozenset[str] | set[str], validate: Validator) -> None:
    """Declare the settings keys `app` reads and how to check them (called from the app's ready())."""
    taken = {key: owner.app for owner in _OWNERS.values() if owner.app != app for key in keys & owner.keys}
    if taken:
        key, other = sorted(taken.items())[0]
        raise RuntimeError(f"settings key {key!r} of app {app!r} is already owned by app {other!r}")
    _OWNERS[app] = SettingsOwner(app, frozenset(keys), validate)


def known_keys() -> frozenset[str]:
    return frozenset().union(*(owner.keys for owner in _OWNERS.values()))


def keys_of(app: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `settings` that `app` owns."""
    owner = _OWNERS.get(app)
    return {k: v for k, v in settings.items() if owner and k in owner.keys}


def unknown_key(settings: Mapping[str, Any]) -> str | None:
    """The first key (sorted) that no app owns, or None."""
    unknown = sorted(set(settings) - known_keys())
    return unknown[0] if unknown else None


def validate_settings(source_id: str, kind: str, settings: Any) -> None:
    """Raise SourceSettingsError naming the source and key when `settings` break any app's rules."""
    if not isinstance(settings, dict):
        raise SourceSettingsError(f"source {source_id!r}: settings must be a JSON object")
    key = unknown_key(settings)
    if key is not None:
        raise SourceSettingsError(f"source {source_id!r}: unknown settings key {key!r}", key=key)
    for owner in _OWNERS.values():
        try:
            owner.validate(source_id, kind, keys_of(owner.app, settings))
        except SourceSettingsError:
            raise
        except ValueError as exc:
            raise SourceSettingsError(str(exc)) from exc
