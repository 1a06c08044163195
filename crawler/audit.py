"""The audit log of operator control actions (`crawler_audit`).

Every control action that changes something (a pass requested, a session
refreshed, dead jobs requeued, a page force-analysed...) leaves one row naming
who did it, what, on which scope and per-scope target. Rows are written by
`crawler.control` only, so the API and the Django admin audit alike; they are
read-only in the admin. Details never carry secrets: a session value appears
only as its SHA-256 fingerprint.
"""

from __future__ import annotations

from typing import Any

from crawler.models import AuditEvent


def record(
    actor: Any, action: str, scope: str = "", target_id: Any = "", detail: dict[str, Any] | None = None
) -> AuditEvent:
    """Write one audit row. `actor` is a user (anonymous or None for system actions)."""
    user = actor if getattr(actor, "is_authenticated", False) else None
    return AuditEvent.objects.create(
        actor=user,
        action=action,
        scope=scope,
        target_id="" if target_id is None else str(target_id),
        detail=detail or {},
    )
