"""Remembered credentials: a header credential that just passed is trusted again for a short burst.

A reader app sends its credential with every request (Mihon, an OPDS app:
one per page, eight at once). Checked in full, each costs a user or key
row, the lockout's aggregate query and, for a password, a PBKDF2 run. The
first request of a burst pays that; the credential is then remembered in
this process for BURST_SECS under an HMAC of (scheme, credential) keyed by
SECRET_KEY, so nothing here reveals it, and the requests that follow pass
with no query at all. Concurrent first requests with one credential wait for
the one check in flight (`checking`) instead of each running PBKDF2.

The lockout is read only where a credential is actually checked: a
remembered one has already passed it, and any failed login forgets them
all (`accounts.signals`). Changing a user through the ORM (a new password,
deactivation), deleting them, revoking an API key or deleting a token
forgets every credential remembered for that user in this process at once;
other web processes, and a change written by raw SQL or a queryset
`update()`, take effect within BURST_SECS.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings

BURST_SECS = 10.0
MAX_REMEMBERED = 1024

_lock = threading.Lock()
_remembered: OrderedDict[str, tuple[Any, float]] = OrderedDict()
_checks: dict[str, threading.Lock] = {}


def credential_key(scheme: str, credential: str) -> str:
    """The HMAC a credential is remembered under: the credential itself is never kept."""
    message = f"{scheme}\0{credential}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def recall(key: str, *, now: float | None = None) -> Any | None:
    """A copy of the user remembered under `key` (a request may mark its own), or None when none is current."""
    now = time.monotonic() if now is None else now
    with _lock:
        entry = _remembered.get(key)
        if entry is None:
            return None
        if entry[1] <= now:
            del _remembered[key]
            return None
        return copy.copy(entry[0])


def remember(key: str, user: Any, *, now: float | None = None) -> None:
    now = time.monotonic() if now is None else now
    with _lock:
        _remembered[key] = (copy.copy(user), now + BURST_SECS)
        _remembered.move_to_end(key)
        while len(_remembered) > MAX_REMEMBERED:
            _remembered.popitem(last=False)


def forget_user(user_id: Any) -> None:
    """Forget every credential remembered for the user `user_id` (its password, keys or tokens changed)."""
    with _lock:
        for key in [k for k, (user, _) in _remembered.items() if user.pk == user_id]:
            del _remembered[key]


def forget_all() -> None:
    with _lock:
        _remembered.clear()


@contextmanager
def checking(key: str) -> Iterator[None]:
    """Hold the one check of credential `key` in this process: a concurrent request with it waits, then recalls."""
    with _lock:
        gate = _checks.setdefault(key, threading.Lock())
    with gate:
        try:
            yield
        finally:
            with _lock:
                if _checks.get(key) is gate:
                    del _checks[key]
