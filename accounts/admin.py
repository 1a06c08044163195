"""Admin for accounts: unlock locked-out logins from the user list; API tokens and API keys listed without secrets.

django-axes registers its own read-only lists of access attempts (deleting
an attempt unlocks it too); the action here unlocks by account, which is
what an operator is asked for ("I'm locked out").
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts import api_keys, lockout
from accounts.api_keys import ApiKey

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


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """List keys with their last use, make one (its secret shown once), rename, revoke (delete)."""

    list_display = ("name", "user", "key_hint", "created_at", "last_used_at")
    list_filter = ("last_used_at",)
    search_fields = ("name", "user__username", "hint")
    fields = ("user", "name")
    autocomplete_fields = ("user",)
    list_select_related = ("user",)

    @admin.display(description="Key")
    def key_hint(self, key: ApiKey) -> str:
        return f"{api_keys.KEY_PREFIX}{key.hint}…"

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        return ("user",) if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            obj.name = api_keys.clean_name(obj.name)
            obj.save(update_fields=["name"])
            return
        raw = api_keys.seal(obj)
        obj.save()
        messages.warning(request, f"The key for {obj.user}: {raw} (copy it now, it is not shown again).")
