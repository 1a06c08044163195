"""Durable crawler state in `crawler_state`, shared by every worker process and the admin.

Keys are namespaced by concern (and by source where it matters). Values are
JSON. This is the one place that knows the key names, so the metadata pass,
the workers, the admin API and the dashboard agree on them.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from crawler.models import CrawlerState
from jobs.worker.cadence import control_changed

logger = logging.getLogger(__name__)


def get_state(key: str, default: Any = None) -> Any:
    row = CrawlerState.objects.filter(key=key).values_list("value", flat=True).first()
    return default if row is None else row


def set_state(key: str, value: Any) -> None:
    CrawlerState.objects.update_or_create(key=key, defaults={"value": value})


# --- metadata pass recovery flag and summary -----------------------------------------


def last_run_clean(source_id: str) -> bool:
    """True only when the previous metadata pass of `source_id` exited cleanly.

    Absent means never ran (or crashed before the first write): not clean, so
    the next pass walks the whole catalog.
    """
    return bool(get_state(f"metadata_pass:{source_id}:clean_exit", False))


def set_last_run_clean(source_id: str, clean: bool) -> None:
    set_state(f"metadata_pass:{source_id}:clean_exit", clean)


def last_pass(source_id: str) -> dict[str, Any] | None:
    return get_state(f"metadata_pass:{source_id}:last_pass")


def save_last_pass(source_id: str, summary: dict[str, Any]) -> None:
    set_state(f"metadata_pass:{source_id}:last_pass", summary)


def latest_pass_summary() -> dict[str, Any] | None:
    """The most recent last-pass summary of any source (for the dashboard)."""
    rows = CrawlerState.objects.filter(key__endswith=":last_pass").values_list("value", flat=True)
    summaries = [r for r in rows if isinstance(r, dict) and r.get("at")]
    return max(summaries, key=lambda s: s["at"], default=None)


# The crawl workers' shared schedule of the periodic metadata pass (crawler.workers.roles writes it).
METADATA_SCHEDULE_KEY = "schedule:metadata_pass:last_enqueued_at"


# --- source session (PHPSESSID) ------------------------------------------------------


def session_cookie(source_id: str) -> str | None:
    """The operator-supplied session cookie value. Never log or echo it."""
    return get_state(f"session:{source_id}:cookie")


def store_session_cookie(source_id: str, value: str) -> None:
    """Store a refreshed session value (validated by the caller) and clear the sticky expired flag."""
    set_state(f"session:{source_id}:cookie", value)
    set_session_expired(source_id, False)


def session_expired(source_id: str) -> bool:
    return bool(get_state(f"session:{source_id}:expired", False))


def set_session_expired(source_id: str, expired: bool) -> None:
    set_state(f"session:{source_id}:expired", expired)
    control_changed.send(sender=None, key="session_expired")


def expired_sessions() -> list[str]:
    """Source ids whose session is currently flagged expired."""
    rows = CrawlerState.objects.filter(key__startswith="session:", key__endswith=":expired")
    return sorted(r.key.split(":")[1] for r in rows if r.value)


# --- browser restart requests ----------------------------------------------------------

_RESTART_KEY = "browser:restart_generation"


def clear_expired_sessions() -> None:
    """A successful browser restart clears the sticky session_expired flags (`sources.browser.after_restart`)."""
    try:
        for source_id in expired_sessions():
            set_session_expired(source_id, False)
    except Exception as exc:  # the restart itself succeeded; a DB hiccup must not undo that
        logger.warning("browser: restarted but could not clear session_expired flags: %s", exc)


def request_browser_restart() -> int:
    """Ask every crawl worker to restart its browser; returns the new request generation."""
    CrawlerState.objects.get_or_create(key=_RESTART_KEY, defaults={"value": 0})
    with transaction.atomic():
        row = CrawlerState.objects.select_for_update().get(key=_RESTART_KEY)
        row.value = int(row.value) + 1
        row.save(update_fields=["value", "updated_at"])
    control_changed.send(sender=None, key="browser_restart")
    return int(row.value)


def browser_restart_generation() -> int:
    """Workers remember the generation they last honoured and restart when it moves."""
    return int(get_state(_RESTART_KEY, 0))


# --- the operator's disk floor ---------------------------------------------------------

_DISK_FLOOR_KEY = "storage:min_free_disk"


def disk_floor() -> str | None:
    """The free-space floor an operator set at run time (text as catalog.disk.parse_floor reads it), or None."""
    return get_state(_DISK_FLOOR_KEY)


def set_disk_floor(text: str | None) -> None:
    """Store (None: clear) the operator's floor; every crawl worker reads it on its next control check."""
    if text is None:
        CrawlerState.objects.filter(key=_DISK_FLOOR_KEY).delete()
    else:
        set_state(_DISK_FLOOR_KEY, text)
    control_changed.send(sender=None, key="disk_floor")
