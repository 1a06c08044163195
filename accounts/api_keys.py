"""Per-user API keys: minted once, stored hashed, named, listed with their last use, revoked.

A key is a credential of an account, like a password or an API token, so it
lives beside them: `accounts.credentials` accepts it in every way a reader
app sends one (`X-API-Key`, the password of HTTP Basic, KOReader's sync
headers, the catalog URL), under the login lockout. This module only mints,
finds and revokes keys; it never decides who is let in.

A key is 32 random bytes behind a recognisable prefix (`mlk_`), so a key
pasted where a password goes (HTTP Basic in Mihon or an OPDS app) is told
from a password without a database lookup. Keys carry their own entropy, so
a fast SHA-256 of the key is enough to store (as GitHub and PyPI do with
tokens): a leaked table gives nothing usable, and a request costs one
indexed lookup instead of the ~0.4 s PBKDF2 run a password costs.

A key has a scope, chosen when it is made. `read` (the default) is what a
reading app needs: the library, pages, progress, OPDS, the Komga API,
kosync. `operate` also lets the key act on the crawler (its control API), and
only while its owner holds the operator permission: it is made only for
operators and only when asked for. A request signed in with a key carries the
key's scope on its user (`signed_in_with`), so every check of the operator
permission (`console.control.operators`) sees it without being handed the
request: a `read` key of an operator is refused there like a reader.

KOReader's sync plugin never sends the secret itself: it sends the MD5 hex
of what the user typed as the password. A key therefore also stores
SHA-256(MD5(key)), which lets kosync find the key without the server ever
holding an MD5 it could be reversed from.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

KEY_PREFIX = "mlk_"
# Writing `last_used_at` on every streamed page would be one UPDATE per page;
# once a minute says "in use" just as well.
TOUCH_EVERY = timedelta(minutes=1)
MAX_NAME = 100

READ = "read"
OPERATE = "operate"
SCOPES = (READ, OPERATE)
SCOPE_CHOICES = [
    (READ, "read: library, pages, progress (reading apps)"),
    (OPERATE, "operate: also the crawler's control API (operators)"),
]
# Who may hold an `operate` key: the crawler's operator permission (crawler migration 0007 defines it; the crawler
# checks it through `console.control.operators`). Named here because this bottom layer cannot import the crawler.
OPERATOR_PERMISSION = "crawler.operate_crawler"
# Where a key-authenticated request's user carries the key's scope; absent for a session, password or token.
_SCOPE_ATTR = "_api_key_scope"
# Bidirectional-text controls: a name shown in a list could reorder what follows it on the page (Trojan Source).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Line breaks and tabs in a pasted name are folded into spaces, not refused.
_FOLDED_WHITESPACE = frozenset("\t\n\r")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def kosync_key(raw_key: str) -> str:
    """What KOReader sends as `x-auth-key` when `raw_key` is typed as its password."""
    return hashlib.md5(raw_key.encode()).hexdigest()  # KOReader's protocol, not our storage


class ApiKey(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=MAX_NAME)
    # The first characters after the prefix, shown so a user can tell keys apart; not secret.
    hint = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    kosync_digest = models.CharField(max_length=64, unique=True)
    # The database default too: a row written by raw SQL (reader migration 0003 copies keys so) is `read`.
    scope = models.CharField(max_length=8, choices=SCOPE_CHOICES, default=READ, db_default=READ)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "accounts"
        verbose_name = "API key"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({KEY_PREFIX}{self.hint}…, {self.scope})"


class BadKeyName(ValueError):
    pass


class BadKeyScope(ValueError):
    pass


def refused_character(name: str) -> str | None:
    """Why `name` cannot be stored or shown, naming the first bad character, or None.

    PostgreSQL refuses a NUL (and a lone surrogate cannot be encoded at all):
    caught here, the caller answers 400 instead of the database raising a 500.
    """
    for position, char in enumerate(name, start=1):
        category = unicodedata.category(char)
        if char in _FOLDED_WHITESPACE:
            continue
        if category == "Cc":
            return f"control character U+{ord(char):04X} at position {position}"
        if char in BIDI_CONTROLS:
            return f"bidirectional-text control U+{ord(char):04X} at position {position}"
        if category == "Cs":
            return f"unpaired surrogate U+{ord(char):04X} at position {position}"
    return None


def clean_name(name: str) -> str:
    """The name to store (whitespace folded), or BadKeyName saying what to change."""
    if len(name) > MAX_NAME * 4:  # refused before scanning it: a name is typed, not uploaded
        raise BadKeyName(f"A key name has at most {MAX_NAME} characters.")
    bad = refused_character(name)
    if bad is not None:
        raise BadKeyName(f"A key name cannot contain a {bad}; type the name again without it.")
    cleaned = " ".join(name.split())
    if not cleaned:
        raise BadKeyName("Give the key a name (the app or device that will use it).")
    if len(cleaned) > MAX_NAME:
        raise BadKeyName(f"A key name has at most {MAX_NAME} characters.")
    return cleaned


def may_hold(user: Any, scope: str) -> bool:
    """Whether `user` may be given a key of `scope`: `read` anyone active, `operate` operators only."""
    if scope == READ:
        return True
    return scope == OPERATE and bool(user.is_active and user.has_perm(OPERATOR_PERMISSION))


def check_scope(user: Any, scope: str) -> str:
    """`scope` when `user` may hold it, else BadKeyScope saying why."""
    if scope not in SCOPES:
        raise BadKeyScope(f"Unknown key scope {scope!r}: choose one of {', '.join(SCOPES)}.")
    if not may_hold(user, scope):
        raise BadKeyScope(
            f"An operate key is only for users holding the {OPERATOR_PERMISSION} permission "
            f"(the Operators group); {user.get_username()} does not: make a read key."
        )
    return scope


def seal(key: ApiKey) -> str:
    """Give the unsaved `key` a fresh secret (stored only as digests) and return the secret, to show once.

    Raises BadKeyName or BadKeyScope (nothing stored) when the name or the scope is refused.
    """
    key.name = clean_name(key.name)
    key.scope = check_scope(key.user, key.scope)
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key.hint = raw[len(KEY_PREFIX) : len(KEY_PREFIX) + 6]
    key.digest = _sha256(raw)
    key.kosync_digest = _sha256(kosync_key(raw))
    return raw


def mint(user: Any, name: str, scope: str = READ) -> tuple[ApiKey, str]:
    """A new key for `user` (`read` unless asked): the row, and the raw key, which is shown once and never stored."""
    key = ApiKey(user=user, name=name, scope=scope)
    raw = seal(key)
    key.save()
    return key, raw


REGISTERED_HINT = "kosync"


def _registered_digest(user_id: int, auth_key: str) -> str:
    return _sha256(f"kosync-registered\0{user_id}\0{auth_key.lower()}")


def mint_for_kosync(user: Any, auth_key: str) -> ApiKey:
    """A key KOReader registered itself (kosync `POST /users/create`): only its MD5 is known, so it works for sync only.

    Its digest is salted with its owner: what KOReader sends is the MD5 of a
    password the user chose, and two people may choose the same one. Unsalted,
    the unique digest refused the second registration, which told a stranger
    that some account uses that password.
    """
    unknowable = KEY_PREFIX + secrets.token_urlsafe(32)
    return ApiKey.objects.create(
        user=user,
        name="KOReader (registered from KOReader)",
        hint=REGISTERED_HINT,
        digest=_sha256(unknowable),
        kosync_digest=_registered_digest(user.pk, auth_key),
        scope=READ,
    )


def looks_like_key(secret: str) -> bool:
    return secret.startswith(KEY_PREFIX)


def signed_in_with(key: ApiKey) -> Any:
    """The key's user, marked as signed in by a key of the key's scope for this request."""
    user = key.user
    setattr(user, _SCOPE_ATTR, key.scope)
    return user


def narrowed_to_read(user: Any) -> Any:
    """`user`, signed in for this request as by a `read` key (a key in a URL never operates)."""
    setattr(user, _SCOPE_ATTR, READ)
    return user


def key_scope(user: Any) -> str | None:
    """The scope of the key `user` signed in with in this request, or None when no key was used."""
    return getattr(user, _SCOPE_ATTR, None)


def may_operate_with(user: Any) -> bool:
    """Whether the way `user` signed in lets them operate: a session, password or token does, a key only if `operate`.

    The permission itself is checked by the caller (`console.control.operators.can_operate`).
    """
    return key_scope(user) in (None, OPERATE)


def touch(key: ApiKey) -> None:
    """Note that `key` was just used (at most once a minute, see TOUCH_EVERY)."""
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at >= TOUCH_EVERY:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)


def find(raw: str) -> ApiKey | None:
    """The stored key `raw` is (its user loaded), or None: unknown, revoked, or not shaped like a key."""
    if not looks_like_key(raw):
        return None
    return ApiKey.objects.select_related("user").filter(digest=_sha256(raw)).first()


def find_for_kosync(username: str, auth_key: str) -> ApiKey | None:
    """The key of the user named `username` whose MD5 (as KOReader sends it) is `auth_key`, or None."""
    key = ApiKey.objects.select_related("user").filter(kosync_digest=_sha256(auth_key.lower())).first()
    if key is not None:
        return key if key.user.get_username() == username else None
    registered = ApiKey.objects.select_related("user").filter(user__username=username, hint=REGISTERED_HINT)
    return next((k for k in registered if k.kosync_digest == _registered_digest(k.user_id, auth_key)), None)


def keys_of(user: Any) -> list[ApiKey]:
    return list(ApiKey.objects.filter(user=user))


def revoke(user: Any, key_id: int) -> bool:
    """Delete `user`'s key `key_id`; False when they have no such key (someone else's included)."""
    deleted, _ = ApiKey.objects.filter(user=user, pk=key_id).delete()
    return deleted > 0
