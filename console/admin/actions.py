"""The operator's admin actions on jobs, mangas, chapters, throttles and page analyses, and the job label column."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from analysis.models import PageAnalysis
from catalog.models import Chapter, Manga, Page
from console.control import actions, backlog
from console.control import analysis as analysis_control
from console.control.errors import ControlError
from crawler.models import SourceThrottle
from jobs.models import Job, JobState

Action = TypeVar("Action", bound=Callable[..., Any])

# Title search follows console.control.backlog: payload title for sync_manga rows, manga title otherwise.
JOB_SEARCH_HELP = "Payload title (sync_manga), manga title, or job id."


def named(name: str) -> Callable[[Action], Action]:
    """The name the admin's form posts for an action: one name for the like action on different tables."""

    def rename(action: Action) -> Action:
        action.__name__ = name
        return action

    return rename


@admin.display(description="label")
def job_label(job: Job) -> str:
    return backlog.job_label(job)


def job_search(term: str) -> Q:
    return backlog.job_search_q(term)


@admin.action(description="Requeue selected dead jobs", permissions=["operate"])
def requeue_dead(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Job]) -> None:
    dead = list(queryset.filter(state=JobState.DEAD).values_list("id", flat=True))
    revived = sum(actions.requeue(actor=request.user, scope="job", target=job_id) for job_id in dead)
    modeladmin.message_user(request, f"Requeued {revived} of {len(dead)} dead job(s).", messages.SUCCESS)


@admin.action(description="Release selected running jobs (back to pending)", permissions=["operate"])
def release(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Job]) -> None:
    running = list(queryset.filter(state=JobState.RUNNING).values_list("id", flat=True))
    released = sum(actions.release(actor=request.user, job_id=job_id) for job_id in running)
    modeladmin.message_user(request, f"Released {released} of {len(running)} running job(s).", messages.SUCCESS)


@admin.action(description="End the selected sources' cooldown now", permissions=["operate"])
def end_cooldown(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[SourceThrottle]) -> None:
    sources = list(queryset.values_list("source_id", flat=True))
    ended = sum(actions.end_cooldown(actor=request.user, source_id=source) for source in sources)
    modeladmin.message_user(request, f"Ended the cooldown of {ended} of {len(sources)} source(s).", messages.SUCCESS)


def _report_enqueued(modeladmin: admin.ModelAdmin, request: HttpRequest, enqueued: int) -> None:
    modeladmin.message_user(request, f"Queued {enqueued} chapter download(s).", messages.SUCCESS)


@named("requeue_chapters")
@admin.action(description="Queue downloads of not-yet-downloaded chapters", permissions=["operate"])
def requeue_manga_chapters(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Manga]) -> None:
    enqueued = sum(
        actions.enqueue_missing_content(
            actor=request.user, chapters=Chapter.objects.filter(manga=manga), scope="manga", target_id=manga.id
        )
        for manga in queryset
    )
    _report_enqueued(modeladmin, request, enqueued)


@named("requeue_chapters")
@admin.action(description="Queue downloads of selected chapters (not yet downloaded)", permissions=["operate"])
def requeue_selected_chapters(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Chapter]) -> None:
    ids = list(queryset.values_list("id", flat=True))
    enqueued = actions.enqueue_missing_content(
        actor=request.user,
        chapters=Chapter.objects.filter(id__in=ids),
        scope="chapter",
        target_id=ids[0] if len(ids) == 1 else "",
    )
    _report_enqueued(modeladmin, request, enqueued)


@named("force_analyze")
@admin.action(description="Force re-analysis of the selected pages", permissions=["operate"])
def force_analyze_pages(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[PageAnalysis]) -> None:
    pages = list(Page.objects.filter(id__in=queryset.values_list("page_id", flat=True)))
    try:
        outcomes = Counter(analysis_control.force_analyze(actor=request.user, page=page).value for page in pages)
    except ControlError as exc:
        modeladmin.message_user(request, str(exc), messages.ERROR)
        return
    summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "nothing to do"
    modeladmin.message_user(request, f"Force re-analysis for {len(pages)} page(s): {summary}.", messages.SUCCESS)


@named("force_analyze")
@admin.action(description="Force-analyze the pages of selected analyze_page jobs", permissions=["operate"])
def force_analyze_jobs(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Job]) -> None:
    page_ids = queryset.filter(kind="analyze_page").values_list("page_id", flat=True)
    pages = list(Page.objects.filter(id__in=page_ids))
    try:
        outcomes = [analysis_control.force_analyze(actor=request.user, page=page) for page in pages]
    except ControlError as exc:
        modeladmin.message_user(request, str(exc), messages.ERROR)
        return
    summary = ", ".join(sorted({o.value for o in outcomes})) or "none"
    modeladmin.message_user(request, f"Force-analyze queued for {len(pages)} page(s): {summary}.", messages.SUCCESS)
