"""Read models for the operator's lists: dead jobs, job history, active jobs, missing covers.

Each list is a queryset ordered to match the index that serves it, so a
LIMIT/OFFSET page on a large table is an index scan, and is labelled in the
same query (one LEFT JOIN chain per job row, no per-row lookups).

Search (`q`) matches the payload title for `sync_manga` rows — which have no
manga row until their first sync succeeds — and the manga title otherwise,
reached through whichever of manga, chapter or page the job names. It is
bounded so it costs the same on a table of three million jobs: the manga
titles are searched first (trigram index, case and accents ignored), and only
the jobs of at most SEARCH_MANGAS of those mangas are looked up, each path
through its own index; the union of job ids is what the list filters on. A
word in thousands of titles thus costs what a rare one does a few times over;
`search_is_cut` says when the list holds only some of the matches, and the
lists then show their count as a lower bound.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from catalog.api.seek import order_of
from catalog.chapter_names import short_label
from catalog.models import Chapter, Manga, Page
from catalog.search import title_contains
from jobs.models import IN_FLIGHT_STATES, Job, JobState

SYNC_MANGA = "sync_manga"

# Every path from a job row to the manga it works on (Job's FKs have no DB
# constraint, so a join may find nothing: the label then falls back).
_MANGA_PATHS = ("manga", "chapter__manga", "page__chapter__manga")


# The lists' orders as keyset keys (catalog.api.seek), each ending in the primary key.
RECENT_FIRST = (("updated_at", True), ("id", True))
LEASE_ORDER = (("scheduled_at", False), ("created_at", False), ("id", False))

# A search looks at the jobs of this many matching mangas at most (a common word matches thousands): the
# work is the mangas' jobs (45 a manga on a busy site), so it is what a rare word costs, a few times over.
SEARCH_MANGAS = 20


def candidate_mangas(q: str) -> QuerySet[Manga]:
    """The ids of at most SEARCH_MANGAS mangas whose title contains `q` (trigram index), as a subquery."""
    return title_contains(Manga.objects.all(), q).order_by().values("pk")[:SEARCH_MANGAS]


def search_is_cut(q: str) -> bool:
    """Whether `q` names more mangas than a search looks at: its list then holds some of the matches only,
    and its count is a lower bound ("more than")."""
    return title_contains(Manga.objects.all(), q).order_by().values("pk")[: SEARCH_MANGAS + 1].count() > SEARCH_MANGAS


def matching_job_ids(q: str, states: list[str] | None = None) -> QuerySet[Job]:
    """Ids of the jobs a search for `q` finds, as one subquery: a union of index lookups, never a table scan.

    `sync_manga` rows by their payload title (jobs migration 0003's trigram
    index), the others by the manga they work on, reached through the manga,
    chapter or page they name, for at most SEARCH_MANGAS mangas. `states`
    is checked in each walk, on the row it reads anyway, so only the jobs
    the list shows come out of it.
    """
    mangas = candidate_mangas(q)
    chapters = Chapter.objects.filter(manga_id__in=mangas).values("pk")
    pages = Page.objects.filter(chapter_id__in=chapters).values("pk")
    jobs = Job.objects.filter(state__in=states) if states else Job.objects.all()
    named = jobs.exclude(kind=SYNC_MANGA)
    return (
        jobs.filter(kind=SYNC_MANGA, payload__title__icontains=q)
        .values("pk")
        .union(
            named.filter(manga_id__in=mangas).values("pk"),
            named.filter(chapter_id__in=chapters).values("pk"),
            named.filter(page_id__in=pages).values("pk"),
        )
    )


def job_search_q(q: str, states: list[str] | None = None) -> Q:
    """Payload title for sync_manga rows, manga title (via manga/chapter/page) otherwise: see `matching_job_ids`."""
    return Q(pk__in=matching_job_ids(q, states))


def _labelled(jobs: QuerySet[Job], q: str | None, states: list[str] | None = None) -> QuerySet[Job]:
    if q:
        jobs = jobs.filter(job_search_q(q, states))
    return jobs.select_related(*_MANGA_PATHS)


def dead_jobs(q: str | None = None) -> QuerySet[Job]:
    """Dead jobs, newest first: served by the partial index `crawler_jobs_dead_idx`."""
    dead = [JobState.DEAD.value]
    return _labelled(Job.objects.filter(state=JobState.DEAD), q, dead).order_by(*order_of(RECENT_FIRST))


def job_history(q: str | None = None, state: str | None = None, kind: str | None = None) -> QuerySet[Job]:
    """Every job, most recently changed first: served by `crawler_jobs_updated_idx`."""
    jobs = Job.objects.all()
    if state:
        jobs = jobs.filter(state=state)
    if kind:
        jobs = jobs.filter(kind=kind)
    return _labelled(jobs, q, [state] if state else None).order_by(*order_of(RECENT_FIRST))


def active_jobs(q: str | None = None) -> QuerySet[Job]:
    """Pending and running jobs in the order the queue will lease them (`crawler_jobs_leasable_idx`)."""
    in_flight = [str(state) for state in IN_FLIGHT_STATES]
    return _labelled(Job.objects.filter(state__in=in_flight), q, in_flight).order_by(*order_of(LEASE_ORDER))


def missing_covers(q: str | None = None) -> QuerySet[Manga]:
    """Mangas without a stored cover, newest change first: served by `mangas_missing_cover_idx`."""
    mangas = Manga.objects.exclude(cover_state=Manga.CoverState.STORED)
    if q:
        mangas = title_contains(mangas, q)
    return mangas.order_by(*order_of(RECENT_FIRST))


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
        return f"{manga.title} — {_chapter_label(job.chapter)}"
    if job.page_id and job.page is not None:
        return f"{manga.title} — {_chapter_label(job.page.chapter)} page {job.page.index}"
    return manga.title


def _chapter_label(chapter: Chapter) -> str:
    return short_label(chapter.number, chapter.title, chapter.kind)
