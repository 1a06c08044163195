"""Dead-letter requeue: put dead jobs back to pending by scope (every one, a manga's, a chapter's, one job).

Revived rows become pending with fresh attempts and a bumped generation, and
idle workers are woken as for any new job.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Now

from jobs.models import IN_FLIGHT_STATES, Job, JobState
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
    return dead.filter(Q(manga_id=target) | Q(chapter__manga_id=target) | Q(page__chapter__manga_id=target))


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
    rows = dead_jobs_in_scope(scope, target).order_by("-updated_at", "-created_at").values_list("id", "dedup_key")
    newest: dict[Any, uuid.UUID] = {}
    superseded: list[uuid.UUID] = []
    for job_id, key in rows:
        if key is None or key not in newest:
            newest[key if key is not None else job_id] = job_id
        else:
            superseded.append(job_id)
    revived_ids = [job_id for job_id in newest.values() if _revive(job_id)]
    if revived_ids:
        announce(Job.objects.filter(id__in=revived_ids).values_list("kind", flat=True).distinct())
    if superseded:
        Job.objects.filter(id__in=superseded, state=JobState.DEAD).update(state=JobState.FAILED, updated_at=Now())
    return len(revived_ids)


def _revive(job_id: uuid.UUID) -> int:
    in_flight_twin = Job.objects.filter(dedup_key=OuterRef("dedup_key"), state__in=IN_FLIGHT_STATES)
    try:
        with transaction.atomic():
            return (
                Job.objects.filter(id=job_id, state=JobState.DEAD)
                .exclude(Exists(in_flight_twin))
                .update(
                    state=JobState.PENDING,
                    attempts=0,
                    deferrals=0,
                    leased_until=None,
                    scheduled_at=Now(),
                    lease_generation=F("lease_generation") + 1,
                    updated_at=Now(),
                )
            )
    except IntegrityError:
        # A producer enqueued the same key between our check and update:
        # that in-flight job already does the work.
        return 0
