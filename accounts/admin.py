"""Admin for accounts: unlock locked-out logins from the user list; API tokens listed without their keys.

django-axes registers its own read-only lists of access attempts (deleting
an attempt unlocks it too); the action here unlocks by account, which is
what an operator is asked for ("I'm locked out").
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts import lockout

User = get_user_model()

admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    actions = ("unlock_logins",)

    @admin.action(description="Unlock the selected accounts (forget their failed logins)", permissions=["change"])
    def unlock_logins(self, request: HttpRequest, queryset: QuerySet) -> None:
        forgotten = sum(lockout.unlock(username=user.get_username()) for user in queryset)
        self.message_user(
            request,
            f"Unlocked {queryset.count()} account(s) ({forgotten} failure record(s) forgotten).",
            messages.SUCCESS,
        )


def masked_key(key: str) -> str:
    """A token key as the admin shows it: enough to tell two apart, never enough to use."""
    return f"{key[:4]}…" if key else ""


admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class MaskedTokenAdmin(TokenAdmin):
    """DRF's token admin, with the key masked: a stored credential is never rendered back."""

    list_display = ("shown_key", "user", "created")

    @admin.display(description="key")
    def shown_key(self, token: TokenProxy) -> str:
        return masked_key(token.key)
