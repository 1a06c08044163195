"""One contract for a Source row's `settings`: every app's keys, validated in one place.

Several apps read a source's settings (the crawler its adapter keys, the
readers `reading_direction` and `language`, and whatever comes next). Each
registers the keys it owns and a validator for them from its
`AppConfig.ready()`; `validate_settings` then checks a row once for all of
them: a key no app owns is an error naming the source and the key, and each
app sees only its own keys, so no app can reject another's. The admin form
and `add_source` both go through `Source.clean()`, which calls it.

An app also declares which of its keys hold secrets (a password, or the
credential headers of a `headers` object). Whatever shows settings to a
person (the API, the Sources page, the admin, audit rows, command output)
shows them through `masked`, each secret replaced by `MASK`; whatever takes
settings back from a person passes them through `with_stored_secrets`, so a
`MASK` sent back unchanged keeps the stored secret and a new value replaces
it. An operator editing the rate limit never wipes, or stores the mask as,
the password.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Validator = Callable[[str, str, dict[str, Any]], None]

# What a person sees in place of a secret; sent back as the value, it means "keep the stored one".
MASK = "(hidden)"


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
    secret_keys: frozenset[str] = frozenset()
    # key -> names (lower case) of the entries of that key's object that are secret: {"headers": {"authorization"}}
    secret_entries: Mapping[str, frozenset[str]] = field(default_factory=dict)


_OWNERS: dict[str, SettingsOwner] = {}


def register(
    app: str,
    keys: frozenset[str] | set[str],
    validate: Validator,
    *,
    secret_keys: frozenset[str] | set[str] = frozenset(),
    secret_entries: Mapping[str, frozenset[str]] | None = None,
) -> None:
    """Declare the settings keys `app` reads, how to check them and which hold secrets (from the app's ready())."""
    taken = {key: owner.app for owner in _OWNERS.values() if owner.app != app for key in keys & owner.keys}
    if taken:
        key, other = sorted(taken.items())[0]
        raise RuntimeError(f"settings key {key!r} of app {app!r} is already owned by app {other!r}")
    entries = dict(secret_entries or {})
    foreign = sorted((set(secret_keys) | set(entries)) - set(keys))
    if foreign:
        raise RuntimeError(f"secret settings key {foreign[0]!r} of app {app!r} is not one of its keys")
    _OWNERS[app] = SettingsOwner(app, frozenset(keys), validate, frozenset(secret_keys), entries)


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


def secret_keys() -> frozenset[str]:
    return frozenset().union(*(owner.secret_keys for owner in _OWNERS.values()))


def _secret_entries() -> dict[str, frozenset[str]]:
    return {key: names for owner in _OWNERS.values() for key, names in owner.secret_entries.items()}


def masked(settings: Any) -> Any:
    """`settings` as a person may see them: each secret's value replaced by MASK, the rest as it is."""
    if not isinstance(settings, dict):
        return settings
    shown = {key: MASK if key in secret_keys() else value for key, value in settings.items()}
    for key, names in _secret_entries().items():
        entries = shown.get(key)
        if isinstance(entries, dict):
            shown[key] = {name: MASK if name.lower() in names else value for name, value in entries.items()}
    return shown


def with_stored_secrets(incoming: Any, stored: Any) -> Any:
    """The settings a person sent, each secret they sent back as MASK restored from `stored`.

    A MASK with nothing stored behind it is dropped rather than stored: the
    mask is never a secret, and the validators then name the key if it is
    required. Any other value, a new secret, is kept as sent.
    """
    if not isinstance(incoming, dict):
        return incoming
    stored = stored if isinstance(stored, dict) else {}
    kept = dict(incoming)
    for key in secret_keys():
        if kept.get(key) == MASK:
            if key in stored:
                kept[key] = stored[key]
            else:
                del kept[key]
    for key, names in _secret_entries().items():
        entries, before = kept.get(key), stored.get(key)
        if not isinstance(entries, dict):
            continue
        before = before if isinstance(before, dict) else {}
        restored = {}
        for name, value in entries.items():
            if name.lower() in names and value == MASK:
                if name in before:
                    restored[name] = before[name]
                continue
            restored[name] = value
        kept[key] = restored
    return kept
