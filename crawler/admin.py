"""Django admin for the crawler tables, and the crawler's actions on the library's tables.

The job admin is read-only: its actions call the same `crawler.control`
functions as the admin API (requeue dead, release), so both faces audit and
behave alike; so does the source admin (`crawler.control.source_changes`). Every action is an operator's (`crawler.control.operators`):
Django lists and runs it only for users with `crawler.operate_crawler`. The
audit log is read-only for everyone, and so is the crawler state, whose
session cookies are never shown (they are set through the audited control). The manga and chapter
admins of `catalog.admin` are re-registered here with the "queue downloads"
actions, because the crawler owns the queue they act on.
"""

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from catalog import admin as catalog_admin
from catalog.models import Chapter, Manga, Source
from crawler import download_policy
from crawler.control import actions, backlog, downloads, source_changes
from crawler.control.operators import can_operate
from crawler.models import AuditEvent, CrawlerState, SourceThrottle
from jobs import kinds
from jobs.models import Job, JobState, WorkerStatus


class OperatorActions:
    """For admins whose actions say `permissions=["operate"]`: only operators see and run them."""

    def has_operate_permission(self, request: HttpRequest) -> bool:
        return can_operate(request.user)


class KindFilter(admin.SimpleListFilter):
    """The job kinds from the payload registry: a fixed list, not a SELECT DISTINCT over millions of jobs."""

    title = "kind"
    parameter_name = "kind__exact"  # the URL the plain field filter used, so saved links keep working

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(kind, kind) for kind in sorted(kinds.names())]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Job]) -> QuerySet[Job]:
        return queryset.filter(kind=self.value()) if self.value() else queryset


@admin.register(Job)
class JobAdmin(OperatorActions, catalog_admin.BigTableAdmin):
    list_display = ("id", "kind", "state", "label", "attempts", "max_attempts", "scheduled_at", "updated_at")
    list_filter = ("state", KindFilter)
    # Title search follows crawler.control.backlog: payload title for sync_manga rows, manga title otherwise.
    search_fields = ("id",)
    search_help_text = "Payload title (sync_manga), manga title, or job id."
    readonly_fields = [f.name for f in Job._meta.fields]
    list_select_related = ("manga", "chapter__manga", "page__chapter__manga")
    actions = ("requeue_dead", "release")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="label")
    def label(self, job: Job) -> str:
        return backlog.job_label(job)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        matches = backlog.job_search_q(term)
        try:  # a job id is matched whole (the primary key), never as a substring of every id
            matches |= Q(pk=uuid.UUID(term))
        except ValueError:
            pass
        return queryset.filter(matches), False

    @admin.action(description="Requeue selected dead jobs", permissions=["operate"])
    def requeue_dead(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        dead = list(queryset.filter(state=JobState.DEAD).values_list("id", flat=True))
        revived = sum(actions.requeue(actor=request.user, scope="job", target=job_id) for job_id in dead)
        self.message_user(request, f"Requeued {revived} of {len(dead)} dead job(s).", messages.SUCCESS)

    @admin.action(description="Release selected running jobs (back to pending)", permissions=["operate"])
    def release(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        running = list(queryset.filter(state=JobState.RUNNING).values_list("id", flat=True))
        released = sum(actions.release(actor=request.user, job_id=job_id) for job_id in running)
        self.message_user(request, f"Released {released} of {len(running)} running job(s).", messages.SUCCESS)


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
class AuditEventAdmin(catalog_admin.ReadOnlyAdmin):
    """Read-only: an audit log that an operator could edit would prove nothing."""

    list_display = ("created_at", "actor", "action", "scope", "target_id")
    list_filter = ("action", "scope")
    search_fields = ("target_id", "actor__username")
    readonly_fields = [f.name for f in AuditEvent._meta.fields]


@admin.register(SourceThrottle)
class SourceThrottleAdmin(OperatorActions, admin.ModelAdmin):
    """Read-only: the limiter owns the bucket; an operator may only end a cooldown early."""

    list_display = ("source_id", "cooling_until", "cooling_reason", "tokens", "refilled_at")
    readonly_fields = [f.name for f in SourceThrottle._meta.fields]
    actions = ("end_cooldown",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="End the selected sources' cooldown now", permissions=["operate"])
    def end_cooldown(self, request: HttpRequest, queryset: QuerySet[SourceThrottle]) -> None:
        sources = list(queryset.values_list("source_id", flat=True))
        ended = sum(actions.end_cooldown(actor=request.user, source_id=source) for source in sources)
        self.message_user(request, f"Ended the cooldown of {ended} of {len(sources)} source(s).", messages.SUCCESS)


@admin.register(WorkerStatus)
class WorkerStatusAdmin(admin.ModelAdmin):
    list_display = ("role", "host", "pid", "heartbeat_at", "stopped_at")


def _report_enqueued(modeladmin: admin.ModelAdmin, request: HttpRequest, enqueued: int) -> None:
    modeladmin.message_user(request, f"Queued {enqueued} chapter download(s).", messages.SUCCESS)


admin.site.unregister(Manga)


@admin.register(Manga)
class MangaAdmin(OperatorActions, catalog_admin.MangaAdmin):
    actions = ("requeue_chapters",)

    @admin.action(description="Queue downloads of not-yet-downloaded chapters", permissions=["operate"])
    def requeue_chapters(self, request: HttpRequest, queryset: QuerySet[Manga]) -> None:
        enqueued = sum(
            actions.enqueue_missing_content(
                actor=request.user, chapters=Chapter.objects.filter(manga=manga), scope="manga", target_id=manga.id
            )
            for manga in queryset
        )
        _report_enqueued(self, request, enqueued)


admin.site.unregister(Chapter)


@admin.register(Chapter)
class ChapterAdmin(OperatorActions, catalog_admin.ChapterAdmin):
    actions = ("requeue_chapters",)

    @admin.action(description="Queue downloads of selected chapters (not yet downloaded)", permissions=["operate"])
    def requeue_chapters(self, request: HttpRequest, queryset: QuerySet[Chapter]) -> None:
        ids = list(queryset.values_list("id", flat=True))
        enqueued = actions.enqueue_missing_content(
            actor=request.user,
            chapters=Chapter.objects.filter(id__in=ids),
            scope="chapter",
            target_id=ids[0] if len(ids) == 1 else "",
        )
        _report_enqueued(self, request, enqueued)


admin.site.unregister(Source)


class SourceForm(forms.ModelForm):
    class Meta:
        model = Source
        fields = "__all__"

    def clean_settings(self) -> Any:
        """A NUL is refused as a form error: PostgreSQL's jsonb would refuse it with a 500."""
        settings = self.cleaned_data.get("settings")
        try:
            source_changes.refuse_nul(self.instance.pk or self.data.get("id", ""), settings)
        except source_changes.ChangeRefused as exc:
            raise forms.ValidationError(str(exc)) from exc
        return settings


@admin.register(Source)
class SourceAdmin(OperatorActions, catalog_admin.SourceAdmin):
    """Sources, changed only by operators and only through `crawler.control.source_changes`.

    The change form, the add form, deletion and the policy actions are
    offered to operators only (the operator permission, not the model
    permissions, decides): staff holding just `catalog.change_source`
    see the list read-only, since a `base_url` or a `download` policy decides
    what the server fetches (and queues). Every save goes through
    `change_source` / `add_site` / `remove_source`, which check the operator
    permission again and write the audit row every other door writes.
    """

    form = SourceForm
    list_display = (*catalog_admin.SourceAdmin.list_display, "download")
    actions = ("download_all", "download_followed")

    # The operator permission is the permission for sources: the model permissions neither add nor take away.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return can_operate(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return can_operate(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return can_operate(request.user)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("id",) if obj is not None else ()

    @admin.display(description="download")
    def download(self, source: Source) -> str:
        return (source.settings or {}).get(download_policy.KEY, download_policy.ALL)

    def save_model(self, request: HttpRequest, obj: Source, form: Any, change: bool) -> None:
        """Through the operator-checked, audited path; a policy edited in the settings switches downloads."""
        # Imported here: the admin is loaded in every process Django sets up, the dry run's fetching stack is not.
        from crawler.control import sites

        try:
            if not change:
                sites.add_site(actor=request.user, row=obj, check=False, via="admin")
                return
            changes = {name: getattr(obj, name) for name in form.changed_data if name in source_changes.CRAWL_FIELDS}
            result = source_changes.change_source(actor=request.user, source_id=obj.pk, changes=changes, via="admin")
        except source_changes.NotAnOperator as exc:  # lost the permission since the form was shown
            raise PermissionDenied(str(exc)) from exc
        if result.switch is not None and result.switch.before != result.switch.after:
            self._report(request, result.switch)

    def delete_model(self, request: HttpRequest, obj: Source) -> None:
        source_changes.remove_source(actor=request.user, source=obj, via="admin")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            source_changes.remove_source(actor=request.user, source=source, via="admin")

    def _switch(self, request: HttpRequest, queryset: QuerySet[Source], policy: str) -> None:
        for source_id in queryset.values_list("id", flat=True):
            switch = source_changes.set_download_policy(
                actor=request.user, source_id=source_id, policy=policy, via="admin-action"
            )
            self._report(request, switch)

    def _report(self, request: HttpRequest, switch: downloads.PolicySwitch) -> None:
        self.message_user(request, switch.describe() + ".", messages.SUCCESS)

    @admin.action(description="Download pages of every manga", permissions=["operate"])
    def download_all(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._switch(request, queryset, download_policy.ALL)

    @admin.action(description="Download pages of followed (bookmarked) mangas only", permissions=["operate"])
    def download_followed(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._switch(request, queryset, download_policy.FOLLOWED)


# The admin's home page links the crawler's own pages (dashboard, and Sources for operators).
admin.site.index_template = "admin/crawler_index.html"
