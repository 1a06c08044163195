"""The audit log of operator control actions (`crawler_audit`).

Every control action that changes something (a pass requested, a session
refreshed, dead jobs requeued, a page force-analysed...) leaves one row naming
who did it, what, on which scope and per-scope target. Rows are written by
the operator's controls (`console.control`), so the API and the Django admin
audit alike, and by the crawl worker for what it starts on its own (no actor);
it lives here, beside its table, because both write it. Rows are read-only in
the admin. Details never carry secrets: a session value appears
only as its SHA-256 fingerprint, and a source's settings are written
with their secret keys masked (`without_secrets`, the settings contract's
`catalog.source_settings.masked`).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from catalog import source_settings
from crawler.models import AuditEvent
from jobs.worker.status.notify import notify_status_changed

HIDDEN = source_settings.MASK


def without_secrets(settings: Any) -> Any:
    """A source's settings for an audit row: each secret key's value replaced, the rest as it is."""
    return source_settings.masked(settings)


def record(
    actor: Any, action: str, scope: str = "", target_id: Any = "", detail: dict[str, Any] | None = None
) -> AuditEvent:
    """Write one audit row and, once it commits, tell dashboards that something changed.

    `actor` is a user (anonymous or None for system actions). Every control
    action passes through here, so the signal makes its effect (a pass queued,
    jobs requeued) show on every open dashboard without waiting for a worker.
    """
    user = actor if getattr(actor, "is_authenticated", False) else None
    transaction.on_commit(lambda: notify_status_changed(action))
    return AuditEvent.objects.create(
        actor=user,
        action=action,
        scope=scope,
        target_id="" if target_id is None else str(target_id),
        detail=detail or {},
    )
