"""Read models for the operator's lists: dead jobs, job history, active jobs, missing covers.

Each list is a queryset ordered to match the index that serves it, so a
LIMIT/OFFSET page on a large table is an index scan, and is labelled in the
same query (one LEFT JOIN chain per job row, no per-row lookups).

Search (`q`) matches the payload title for `sync_manga` rows — which have no
manga row until their first sync succeeds — and the manga title otherwise,
reached through whichever of manga, chapter or page the job names.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from catalog.models import Manga
from jobs.models import IN_FLIGHT_STATES, Job, JobState

SYNC_MANGA = "sync_manga"

# Every path from a job row to the manga it works on (Job's FKs have no DB
# constraint, so a join may find nothing: the label then falls back).
_MANGA_PATHS = ("manga", "chapter__manga", "page__chapter__manga")


def job_search_q(q: str) -> Q:
    """Payload title for sync_manga rows, manga title (via manga/chapter/page) otherwise."""
    by_manga_title = Q()
    for path in _MANGA_PATHS:
        by_manga_title |= Q(**{f"{path}__title__icontains": q})
    return Q(kind=SYNC_MANGA, payload__title__icontains=q) | (~Q(kind=SYNC_MANGA) & by_manga_title)


def _labelled(jobs: QuerySet[Job], q: str | None) -> QuerySet[Job]:
    if q:
        jobs = jobs.filter(job_search_q(q))
    return jobs.select_related(*_MANGA_PATHS)


def dead_jobs(q: str | None = None) -> QuerySet[Job]:
    """Dead jobs, newest first: served by the partial index `crawler_jobs_dead_idx`."""
    return _labelled(Job.objects.filter(state=JobState.DEAD), q).order_by("-updated_at")


def job_history(q: str | None = None, state: str | None = None, kind: str | None = None) -> QuerySet[Job]:
    """Every job, most recently changed first: served by `crawler_jobs_updated_idx`."""
    jobs = Job.objects.all()
    if state:
        jobs = jobs.filter(state=state)
    if kind:
        jobs = jobs.filter(kind=kind)
    return _labelled(jobs, q).order_by("-updated_at")


def active_jobs(q: str | None = None) -> QuerySet[Job]:
    """Pending and running jobs in the order the queue will lease them (`crawler_jobs_leasable_idx`)."""
    return _labelled(Job.objects.filter(state__in=IN_FLIGHT_STATES), q).order_by("scheduled_at", "created_at")


def missing_covers(q: str | None = None) -> QuerySet[Manga]:
    """Mangas without a stored cover, newest change first: served by `mangas_missing_cover_idx`."""
    mangas = Manga.objects.exclude(cover_state=Manga.CoverState.STORED)
    if q:
        mangas = mangas.filter(title__icontains=q)
    return mangas.order_by("-updated_at")


def job_manga(job: Job) -> Manga | None:
    """The manga a job works on, from the rows `_labelled` joined (no query)."""
    if job.manga_id and job.manga is not None:
        return job.manga
    if job.chapter_id and job.chapter is not None:
        return job.chapter.manga
    if job.page_id and job.page is not None:
        return job.page.chapter.manga
    return None


def job_label(job: Job) -> str:
    """A human label: payload title/url/key for sync_manga rows, else the manga (and chapter) title."""
    payload = job.payload if isinstance(job.payload, dict) else {}
    if job.kind == SYNC_MANGA:
        return payload.get("title") or payload.get("url") or payload.get("source_manga_key") or str(job.id)
    manga = job_manga(job)
    if manga is None:
        return payload.get("source_id") or str(job.id)
    if job.chapter_id and job.chapter is not None:
        return f"{manga.title} — chapter {job.chapter.number.normalize():f}"
    if job.page_id and job.page is not None:
        return f"{manga.title} — chapter {job.page.chapter.number.normalize():f} page {job.page.index}"
    return manga.title
