"""What forgets a remembered credential (`accounts.remembered`): any change to a user, a revoked key, a token gone,
any failed login.

Any save of a user row forgets their credentials, not only a password or
`is_active` change: telling which field changed would need the old row, and
a forgotten credential costs one full check, once. A failed login anywhere
forgets them all: that failure may be the one that locks an account or an
address, and a remembered credential skips the lockout read, so while a
lockout may be starting every credential is checked in full again.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_login_failed
from django.db.models.signals import post_delete, post_save
from rest_framework.authtoken.models import Token

from accounts import remembered
from accounts.api_keys import ApiKey


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    remembered.forget_user(instance.pk)


def _credential_gone(sender: Any, instance: Any, **kwargs: Any) -> None:
    remembered.forget_user(instance.user_id)


def _login_failed(sender: Any, **kwargs: Any) -> None:
    remembered.forget_all()


def connect() -> None:
    """Called once from `AccountsConfig.ready()`."""
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="accounts-remembered-user-saved")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="accounts-remembered-user-deleted")
    post_save.connect(_credential_gone, sender=ApiKey, dispatch_uid="accounts-remembered-key-saved")
    post_delete.connect(_credential_gone, sender=ApiKey, dispatch_uid="accounts-remembered-key-deleted")
    post_delete.connect(_credential_gone, sender=Token, dispatch_uid="accounts-remembered-token-deleted")
    user_login_failed.connect(_login_failed, dispatch_uid="accounts-remembered-login-failed")
