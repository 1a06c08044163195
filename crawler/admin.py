from django.contrib import admin

from crawler.models import AuditEvent, CrawlerState, Job, WorkerStatus


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "state", "attempts", "max_attempts", "scheduled_at", "updated_at")
    list_filter = ("state", "kind")
    search_fields = ("id", "dedup_key", "last_error")
    readonly_fields = [f.name for f in Job._meta.fields]


@admin.register(CrawlerState)
class CrawlerStateAdmin(admin.ModelAdmin):
    list_display = ("key", "updated_at")


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "actor", "action", "scope", "target_id")
    list_filter = ("action",)


@admin.register(WorkerStatus)
class WorkerStatusAdmin(admin.ModelAdmin):
    list_display = ("role", "host", "pid", "heartbeat_at", "stopped_at")
