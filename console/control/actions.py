"""The operator actions: pass requests, browser restart, session refresh, requeue, release, cooldowns, content.

Each function takes already-validated arguments (the API validates with its
input serializers, the admin hands over model rows), does the one thing,
writes its audit row and reports an outcome. Neither face owns logic: a view
maps an outcome to a status code (a `Skipped` pass request becomes 409), an
admin action maps it to a message.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.views.decorators.debug import sensitive_variables

from catalog.bookmarks import not_downloaded
from catalog.models import Chapter, Source
from console.control.errors import AmbiguousSource, InvalidSessionValue, NoEnabledSource
from crawler import audit, state_store
from crawler.passes.chapters import enqueue_chapter_content
from crawler.payloads import MetadataPass, Reconcile
from crawler.politeness import limiter
from jobs import queue, retry
from jobs import requeue as dead_letter

logger = logging.getLogger(__name__)

# A PHP session id is a short run of these characters. Anything else (";",
# "=", spaces, newlines) could smuggle extra cookie attributes or headers.
PHPSESSID_PATTERN = re.compile(r"[A-Za-z0-9,-]{1,256}")


# --- sources -------------------------------------------------------------------------


def resolve_sources(source_id: str | None) -> list[Source]:
    """The sources a pass request targets: the named one, else every enabled source."""
    if source_id is not None:
        source = Source.objects.filter(id=source_id, enabled=True).first()
        if source is None:  # disabled or deleted since the request was validated
            raise NoEnabledSource(f"source {source_id!r} is not enabled")
        return [source]
    sources = list(Source.objects.filter(enabled=True).order_by("id"))
    if not sources:
        raise NoEnabledSource("no source is enabled; enable one or name it with 'source'")
    return sources


def resolve_single_source(source_id: str | None) -> Source:
    """The one source a session belongs to: the named one, else the only enabled one."""
    if source_id is not None:
        source = Source.objects.filter(id=source_id).first()
        if source is None:
            raise NoEnabledSource(f"source {source_id!r} does not exist")
        return source
    sources = list(Source.objects.filter(enabled=True)[:2])
    if not sources:
        raise NoEnabledSource("no source is enabled; name the source with 'source'")
    if len(sources) > 1:
        raise AmbiguousSource("several sources are enabled; name the source with 'source'")
    return sources[0]


# --- passes --------------------------------------------------------------------------


@dataclass(frozen=True)
class PassRequest:
    """One source's answer to a pass request: a new job, or Skipped (one already in flight)."""

    source_id: str
    job_id: uuid.UUID | None

    @property
    def skipped(self) -> bool:
        return self.job_id is None


def _request_pass(actor: Any, action: str, payload_cls: type, source_id: str | None) -> list[PassRequest]:
    results = []
    for source in resolve_sources(source_id):
        outcome = queue.enqueue(payload_cls(source_id=source.id))
        results.append(PassRequest(source.id, outcome.id if outcome.inserted else None))
    if any(not r.skipped for r in results):
        audit.record(
            actor,
            action,
            scope="source" if source_id else "all",
            target_id=source_id or "",
            detail={
                "enqueued": {r.source_id: str(r.job_id) for r in results if not r.skipped},
                "in_flight": [r.source_id for r in results if r.skipped],
            },
        )
    return results


def request_metadata_pass(*, actor: Any, source_id: str | None = None) -> list[PassRequest]:
    """Enqueue a metadata pass per targeted source; a source with one in flight is Skipped.

    The job's dedup key (one in flight per source) is the lock: two clicks
    racing each other cannot both insert.
    """
    return _request_pass(actor, "run_metadata_pass", MetadataPass, source_id)


def request_reconcile(*, actor: Any, source_id: str | None = None) -> list[PassRequest]:
    """Enqueue a reconcile pass per targeted source; a source with one in flight is Skipped."""
    return _request_pass(actor, "run_reconcile", Reconcile, source_id)


# --- browser and session --------------------------------------------------------------


def restart_browser(*, actor: Any) -> int:
    """Ask every crawl worker for a coordinated browser restart; returns the request generation."""
    generation = state_store.request_browser_restart()
    audit.record(actor, "restart_browser", scope="all", detail={"generation": generation})
    return generation


def is_valid_phpsessid(value: Any) -> bool:
    return isinstance(value, str) and PHPSESSID_PATTERN.fullmatch(value) is not None


def session_fingerprint(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@dataclass(frozen=True)
class SessionRefresh:
    source_id: str
    fingerprint: str


# Error reports (DEBUG pages, AdminEmailHandler) must not show the value either.
@sensitive_variables("phpsessid")
def refresh_session(*, actor: Any, phpsessid: str, source_id: str | None = None) -> SessionRefresh:
    """Store a new PHPSESSID for a source and clear its sticky session-expired flag.

    The value is validated against the allow-list, never logged and never
    echoed; the audit row carries only its SHA-256 fingerprint.
    """
    if not is_valid_phpsessid(phpsessid):
        raise InvalidSessionValue("phpsessid must be 1-256 characters of A-Z, a-z, 0-9, ',' and '-'")
    source = resolve_single_source(source_id)
    fingerprint = session_fingerprint(phpsessid)
    with transaction.atomic():
        state_store.store_session_cookie(source.id, phpsessid)
        audit.record(actor, "refresh_session", scope="source", target_id=source.id, detail={"sha256": fingerprint})
    logger.info("session refreshed for source=%s sha256=%s", source.id, fingerprint[:12])
    return SessionRefresh(source.id, fingerprint)


# --- dead letters and jobs ---------------------------------------------------------------


def requeue(*, actor: Any, scope: str, target: Any = None, confirm: bool = False) -> int:
    """Revive dead jobs in `scope` (all/manga/chapter/job); returns how many became pending.

    `all` without `confirm` raises `dead_letter.ConfirmationRequired` before any change.
    """
    with transaction.atomic():
        revived = dead_letter.requeue_dead(scope, target, confirm=confirm)
        audit.record(
            actor,
            "requeue_dead",
            scope=dead_letter.RequeueScope(scope).value,
            target_id=target or "",
            detail={"requeued": revived},
        )
    return revived


def release(*, actor: Any, job_id: uuid.UUID) -> bool:
    """Drop a running job's lease by id (the worker's late ack becomes a no-op)."""
    released = retry.release_unowned(job_id)
    if released:
        audit.record(actor, "release_job", scope="job", target_id=job_id, detail={"released": True})
    return released


def end_cooldown(*, actor: Any, source_id: str) -> bool:
    """Let every worker request `source_id` again before its Retry-After cooldown runs out."""
    ended = limiter.end_cooldown(source_id)
    if ended:
        audit.record(actor, "end_cooldown", scope="source", target_id=source_id, detail={"ended": True})
    return ended


# --- chapter content ---------------------------------------------------------------------


def enqueue_missing_content(*, actor: Any, chapters: QuerySet[Chapter], scope: str, target_id: Any = "") -> int:
    """Enqueue content downloads for the not-yet-downloaded chapters among `chapters`, ascending by number.

    Returns how many jobs were inserted (a chapter already in flight is deduplicated by the queue).
    """
    todo = list(not_downloaded(chapters))
    inserted = enqueue_chapter_content(todo)
    audit.record(
        actor, "enqueue_content", scope=scope, target_id=target_id, detail={"chapters": len(todo), "enqueued": inserted}
    )
    return inserted
