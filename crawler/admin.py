"""The crawler's own tables in the Django admin, registered once, here.

The crawler state is read-only and a stored session cookie is never shown
(it is set through the audited control); the audit log is read-only for
everyone; the throttle rows are the limiter's. The operator's action on them
(end a cooldown early) is the console's, added through
`ExtensibleAdmin.extend` (`console.admin`).
"""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from crawler.models import AuditEvent, CrawlerState, SourceThrottle
from listing.admin_bases import ExtensibleAdmin, ReadOnlyAdmin


def is_secret_state(key: str) -> bool:
    """Crawler-state keys whose value is a credential: shown masked, never rendered back."""
    return key.startswith("session:") and key.endswith(":cookie")


@admin.register(CrawlerState)
class CrawlerStateAdmin(admin.ModelAdmin):
    """Read-only, and a stored session cookie is masked: the audited dashboard/API control is the only way to set one."""

    list_display = ("key", "shown_value", "updated_at")
    fields = ("key", "shown_value", "updated_at")
    readonly_fields = ("key", "shown_value", "updated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="value")
    def shown_value(self, state: CrawlerState) -> str:
        if is_secret_state(state.key):
            return "•••••• (set; write-only: refresh it from the crawler dashboard)" if state.value else "(not set)"
        return str(state.value)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Read-only: an audit log that an operator could edit would prove nothing."""

    list_display = ("created_at", "actor", "action", "scope", "target_id")
    list_filter = ("action", "scope")
    search_fields = ("target_id", "actor__username")
    readonly_fields = [f.name for f in AuditEvent._meta.fields]


@admin.register(SourceThrottle)
class SourceThrottleAdmin(ExtensibleAdmin):
    """Read-only: the limiter owns the bucket; an operator may only end a cooldown early (the console's action)."""

    list_display = ("source_id", "cooling_until", "cooling_reason", "tokens", "refilled_at")
    readonly_fields = [f.name for f in SourceThrottle._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
