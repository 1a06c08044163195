"""The engine's tables in the Django admin: jobs (read-only) and worker status rows, registered once, here.

The job admin offers no action of its own: the operator's actions (requeue
dead, release, force-analyze), the label column and the title search are the
console's, added through `ExtensibleAdmin.extend` (`console.admin`).
"""

from __future__ import annotations

import uuid

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from jobs import kinds
from jobs.models import Job, WorkerStatus
from listing.admin_bases import BigTableAdmin, ExtensibleAdmin


class KindFilter(admin.SimpleListFilter):
    """The job kinds from the payload registry: a fixed list, not a SELECT DISTINCT over millions of jobs."""

    title = "kind"
    parameter_name = "kind__exact"  # the URL the plain field filter used, so saved links keep working

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(kind, kind) for kind in sorted(kinds.names())]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Job]) -> QuerySet[Job]:
        return queryset.filter(kind=self.value()) if self.value() else queryset


@admin.register(Job)
class JobAdmin(BigTableAdmin, ExtensibleAdmin):
    list_display = ("id", "kind", "state", "attempts", "max_attempts", "scheduled_at", "updated_at")
    list_filter = ("state", KindFilter)
    search_fields = ("id",)
    search_help_text = "Job id."
    readonly_fields = [f.name for f in Job._meta.fields]
    list_select_related = ("manga", "chapter__manga", "page__chapter__manga")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        matches = self.extra_search_q(term) or Q(pk__in=[])
        try:  # a job id is matched whole (the primary key), never as a substring of every id
            matches |= Q(pk=uuid.UUID(term))
        except ValueError:
            pass
        return queryset.filter(matches), False


@admin.register(WorkerStatus)
class WorkerStatusAdmin(ExtensibleAdmin):
    list_display = ("role", "host", "pid", "heartbeat_at", "stopped_at")
