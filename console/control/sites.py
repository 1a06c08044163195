"""Adding and configuring a site: the one path `add_source` and the Sources page both take.

A new source is validated by the settings contract (`Source.full_clean`,
catalog.source_settings), then dry-run inside a transaction: the row is kept
only when the dry run succeeds, and the operator's confirmation is audited
like every other control. Adding needs the operator permission, as every
change of an existing source does (`console.control.source_changes`, the
one path for settings, `base_url` and the download policy).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from catalog.models import Source
from console.control.dry_run import DryRun, dry_run
from console.control.errors import ControlError
from console.control.source_changes import refuse_nul, require_operator, validation_message
from crawler import audit, state_store
from crawler.clearance import rows as clearance_store

if TYPE_CHECKING:
    from sources.browser import BrowserManager
    from sources.clearance.records import Clearance


class SiteRefused(ValueError):
    """The source cannot be added or changed as asked; the message names the source and what to fix."""


def new_source(
    *, name: str, base_url: str, settings: dict[str, Any], source_id: str | None = None, kind: str = Source.Kind.HTML
) -> Source:
    """An unsaved, validated source row (html unless `kind` says otherwise); raises SiteRefused naming what is wrong."""
    source_id = source_id or slugify(name)
    if not source_id:
        raise SiteRefused(f"the name {name!r} gives no usable id; give an id")
    if Source.objects.filter(id=source_id).exists():
        raise SiteRefused(f"source {source_id!r} already exists (edit it, or pick another id)")
    row = Source(id=source_id, name=name, kind=kind, base_url=base_url, settings=settings)
    try:
        refuse_nul(source_id, settings)
        row.full_clean()
    except ControlError as exc:
        raise SiteRefused(str(exc)) from exc
    except ValidationError as exc:
        raise SiteRefused(validation_message(exc, source_id)) from exc
    return row


def preview(row: Source, *, clearance: Clearance | None = None) -> DryRun:
    """The dry run of an unsaved row; nothing it touches is kept. Raises CrawlerError naming the fault."""
    with transaction.atomic():
        row.save(force_insert=True)
        try:
            return dry_run(row, clearance=clearance)
        finally:
            transaction.set_rollback(True)


@dataclass(frozen=True)
class AddedSite:
    source: Source
    dry_run: DryRun | None
    crawl_job: Any  # the metadata pass's job id when one was enqueued


def add_site(
    *,
    actor: Any,
    row: Source,
    check: bool = True,
    crawl_now: bool = False,
    via: str = "sources-page",
    browser: BrowserManager | None = None,
    clearance: Clearance | None = None,
) -> AddedSite:
    """Save `row` after a successful dry run (unless `check` is off), audited; optionally enqueue its first pass.

    `browser` and `clearance` go to the dry run (`dry_run`): add_source's browser, the probe's challenge pass.
    Raises NotAnOperator (`actor` lacks the permission; None is the machine's
    operator) or CrawlerError (the dry run's, naming key, selector and URL)
    with nothing kept.
    """
    from console.control.actions import request_metadata_pass

    require_operator(actor, f"adding source {row.id!r}")
    with transaction.atomic():
        row.save(force_insert=True)
        if clearance is not None and not check:
            clearance_store.seed(row.id, clearance)
        result = dry_run(row, browser=browser, clearance=clearance) if check else None
        audit.record(
            actor,
            "add_source",
            scope="source",
            target_id=row.id,
            detail={
                "via": via,
                "base_url": row.base_url,
                "settings": audit.without_secrets(row.settings),
                "dry_run": check,
            },
        )
    job = None
    if crawl_now:
        job = request_metadata_pass(actor=actor, source_id=row.id)[0].job_id
    return AddedSite(row, result, job)


def next_scheduled_pass(now: dt.datetime | None = None) -> dt.datetime:
    """When the crawl workers' periodic metadata pass next fires (now, when none was ever scheduled)."""
    now = now or timezone.now()
    raw = state_store.get_state(state_store.METADATA_SCHEDULE_KEY)
    last = parse_datetime(raw) if isinstance(raw, str) else None
    interval = dt.timedelta(seconds=django_settings.CRAWLER_METADATA_INTERVAL)
    return now if last is None else max(now, last + interval)


def first_crawl_note(source_id: str, now: dt.datetime | None = None) -> str:
    """What happens next for a new source: when its first crawl starts and how to start it at once."""
    at = next_scheduled_pass(now)
    interval = django_settings.CRAWLER_METADATA_INTERVAL
    return (
        f"The first crawl of {source_id!r} starts with the next scheduled metadata pass, at "
        f"{at.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC (every CRAWLER_METADATA_INTERVAL={interval} s, while a crawl worker runs). "
        f"To start it now: python manage.py metadata_pass --source {source_id} --enqueue "
        "(or 'Crawl now' on the Sources page)."
    )
