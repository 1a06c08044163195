"""Notify's models in the admin, read-only: targets with their URLs masked (the secret never shows), deliveries,
and the health conditions that hold now."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from notify.models import Delivery, HealthCondition, NotificationTarget
from notify.targets import masked


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(NotificationTarget)
class NotificationTargetAdmin(ReadOnly):
    list_display = ("user", "label", "masked_url", "digests", "health_alerts", "created_at")
    list_filter = ("scheme", "digests", "health_alerts")
    search_fields = ("user__username", "label")
    fields = ("user", "label", "scheme", "masked_url", "digests", "health_alerts", "created_at")
    readonly_fields = fields

    @admin.display(description="URL (masked)")
    def masked_url(self, obj: NotificationTarget) -> str:
        return masked(obj.url)


@admin.register(Delivery)
class DeliveryAdmin(ReadOnly):
    list_display = ("kind", "title", "target", "created_at", "sent_at")
    list_filter = ("kind",)
    fields = ("kind", "target", "title", "body", "created_at", "sent_at")
    readonly_fields = fields


@admin.register(HealthCondition)
class HealthConditionAdmin(ReadOnly):
    list_display = ("key", "message", "since")
    readonly_fields = ("key", "message", "since")
