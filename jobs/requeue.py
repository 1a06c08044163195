"""Dead-letter requeue: put dead jobs back to pending by scope (every one, a manga's, a chapter's, one job).

Revived rows become pending with fresh attempts and a bumped generation, and
idle workers are woken as for any new job.
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from jobs import queries
from jobs.models import Job, JobState
from jobs.queue import announce


class RequeueScope(str, enum.Enum):
    ALL = "all"
    MANGA = "manga"
    CHAPTER = "chapter"
    JOB = "job"


class ConfirmationRequired(ValueError):
    """`requeue_dead(scope='all')` needs an explicit confirm."""


def dead_jobs_in_scope(scope: RequeueScope | str, target: Any = None) -> QuerySet[Job]:
    scope = RequeueScope(scope)
    dead = Job.objects.filter(state=JobState.DEAD)
    if scope is RequeueScope.ALL:
        return dead
    if target is None:
        raise ValueError(f"scope {scope.value!r} needs a target id")
    if scope is RequeueScope.JOB:
        return dead.filter(id=target)
    if scope is RequeueScope.CHAPTER:
        return dead.filter(Q(chapter_id=target) | Q(page__chapter_id=target))
    return dead.filter(id__in=_manga_job_ids(target))


def _manga_job_ids(manga_id: Any) -> QuerySet[Any]:
    """The ids of every job of one manga, three index walks in one subquery (the manga's own jobs, its
    chapters', its pages'), each from the manga's few rows to the jobs that name them.

    An OR of the three paths over the joined chapter and page tables cannot use an index of the job's own
    columns: PostgreSQL then scans every chapter of the library to answer for one manga.
    """
    chapter_model: Any = Job._meta.get_field("chapter").related_model
    page_model: Any = Job._meta.get_field("page").related_model
    chapters = chapter_model._default_manager.filter(manga_id=manga_id).values("pk")
    pages = page_model._default_manager.filter(chapter__manga_id=manga_id).values("pk")
    own: QuerySet[Any] = Job.objects.filter(manga_id=manga_id).values("id")
    by_chapter: QuerySet[Any] = Job.objects.filter(chapter_id__in=chapters).values("id")
    by_page: QuerySet[Any] = Job.objects.filter(page_id__in=pages).values("id")
    return own.union(by_chapter, by_page, all=True)


def requeue_dead(scope: RequeueScope | str, target: Any = None, confirm: bool = False) -> int:
    """Put dead jobs in `scope` back to pending; returns how many became pending.

    Several dead rows can share a dedup key (a chapter that died, was
    re-enqueued and died again). Only the newest per key is revived, and only
    when nothing with that key is in flight, so the partial unique constraint
    never rejects the requeue; the older duplicates are marked `failed`
    (superseded) so the dead list empties.
    """
    scope = RequeueScope(scope)
    if scope is RequeueScope.ALL and not confirm:
        raise ConfirmationRequired("requeue of every dead job needs confirm: true")
    # Every dead job needs no list of ids; a manga's, a chapter's or one job's are a few.
    every = scope is RequeueScope.ALL
    ids = [] if every else list(dead_jobs_in_scope(scope, target).values_list("id", flat=True))
    if not ids and not every:
        return 0
    tries = 0
    while True:
        try:
            with transaction.atomic():
                revived: Counter[str] = Counter()
                for kind, count in queries.run(
                    "requeue_dead", {"every": every, "ids": queries.array(ids), **queries.clock()}
                ):
                    revived[kind] += count
                announce(revived)
            return sum(revived.values())
        except IntegrityError:
            # A producer enqueued a revived key between the check and the update: the next try sees that
            # job and leaves the key to it.
            tries += 1
            if tries >= _REQUEUE_TRIES:
                raise


# Tries of the statement (`requeue_dead` in queries.sql) when a producer races it on a key.
_REQUEUE_TRIES = 3
