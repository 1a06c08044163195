"""Admin for accounts: unlock locked-out logins from the user list; API tokens and API keys listed without secrets.

django-axes registers its own read-only lists of access attempts (deleting
an attempt unlocks it too); the action here unlocks by account, which is
what an operator is asked for ("I'm locked out").
"""

from __future__ import annotations

from typing import Any

from django import forms
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


class ApiKeyForm(forms.ModelForm):
    """The name and scope checked as on the account page: a bad one is a form error, never a 500."""

    class Meta:
        model = ApiKey
        fields = ("user", "name", "scope")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "scope" in self.fields:
            self.fields["scope"].required = False  # left out, a key is `read`

    def clean_scope(self) -> str:
        return self.cleaned_data.get("scope") or api_keys.READ

    def clean_name(self) -> str:
        try:
            return api_keys.clean_name(self.cleaned_data["name"])
        except api_keys.BadKeyName as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        user = data.get("user") or (self.instance.user if self.instance.pk else None)
        if self.instance.pk is None and user is not None and data.get("scope"):
            try:
                api_keys.check_scope(user, data["scope"])
            except api_keys.BadKeyScope as exc:
                self.add_error("scope", str(exc))
        return data


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """List keys with their scope and last use, make one (its secret shown once), rename, revoke (delete).

    The scope is chosen when the key is made and never changed: widening a key
    already handed to an app would hand that app the crawler. An `operate`
    key is made only for an operator, and only by an operator.
    """

    form = ApiKeyForm
    list_display = ("name", "user", "key_hint", "scope", "created_at", "last_used_at")
    list_filter = ("scope", "last_used_at")
    search_fields = ("name", "user__username", "hint")
    fields = ("user", "name", "scope")
    autocomplete_fields = ("user",)
    list_select_related = ("user",)

    @admin.display(description="Key")
    def key_hint(self, key: ApiKey) -> str:
        return f"{api_keys.KEY_PREFIX}{key.hint}…"

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        return ("user", "scope") if obj is not None else ()

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None and not request.user.has_perm(api_keys.OPERATOR_PERMISSION):
            # Only an operator hands out operate keys: a staff member who may add keys gets read keys only.
            form.base_fields["scope"].choices = [c for c in api_keys.SCOPE_CHOICES if c[0] == api_keys.READ]
        return form

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            obj.name = api_keys.clean_name(obj.name)
            obj.save(update_fields=["name"])
            return
        raw = api_keys.seal(obj)
        obj.save()
        messages.warning(request, f"The key for {obj.user}: {raw} (copy it now, it is not shown again).")
