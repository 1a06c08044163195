"""API keys in the Django admin: list them with their last use, create one (its secret shown once), revoke (delete)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from reader import api_keys
from reader.api_keys import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
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
